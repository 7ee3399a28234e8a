// `mlprof summary`: the overview a user wants first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/op_stats.h"
#include "mlprof/trace.h"

namespace mlprof {

struct SummaryOptions {
  size_t top = 20;
  OpSort sort = OpSort::kTotal;
  std::string category;  // "" = all categories
};

struct CategoryCount {
  std::string category;  // "" shows as "(none)"
  uint64_t count = 0;
};

struct SummaryResult {
  std::string source;
  std::string format;
  int64_t begin_ns = 0, end_ns = 0, span_ns = 0;
  uint64_t events = 0, slices = 0, instants = 0, counters = 0, flows = 0, memory_events = 0;
  std::vector<CategoryCount> categories;  // slices + instants per category, most first
  uint64_t processes = 0, threads = 0, gpu_streams = 0;
  uint64_t steps = 0;  // ProfilerStep#N slices (or mlprof steps)
  int32_t rank = -1;
  std::vector<std::string> devices;  // "0: NVIDIA A100 (108 SMs, 40.0 GiB)"
  uint64_t distinct_ops = 0;
  std::vector<OpStats> top_ops;  // sorted and cut to `top`
  uint64_t dropped_events = 0;
  ImportStats import_stats;  // what the importer skipped or repaired
  // What an importer of a database or protobuf format read and skipped, per table or record
  // kind ("nsys: read kernels 3442, ...; skipped ..."); empty for JSON and .mlprof.
  std::string import_line;
};

SummaryResult summarize(const Trace& trace, const SummaryOptions& options = {});

}  // namespace mlprof
