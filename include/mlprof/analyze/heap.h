// `mlprof heap`: the host-memory report of a trace with per-allocation memory events (what
// `mlprof run --memory` records; works on any trace with memory events). Answers: how high did
// the heap go and which call stacks held it at that moment; what was never freed (by stack);
// which allocations were temporary (freed almost at once); how fast did the program allocate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

struct HeapOptions {
  size_t top = 10;                // stacks per table
  int64_t temporary_ns = 100000;  // freed within 100 us: a temporary
  size_t rate_buckets = 10;       // allocation-rate timeline resolution
  int device_type = 0;            // DeviceType to analyze (0 = CPU); -1 = every device
  size_t max_frames = 6;          // frames kept per stack in the result (innermost first)
};

struct HeapStack {
  uint32_t stack = 0;               // Trace stack id (0 = unknown)
  std::vector<std::string> frames;  // innermost first, cut to max_frames
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::vector<int64_t> pids;  // processes the blocks belong to
};

struct HeapRateBucket {
  int64_t begin_ns = 0, end_ns = 0;  // relative to the first memory event
  uint64_t allocations = 0, frees = 0;
  uint64_t bytes_allocated = 0;
  int64_t heap_bytes_end = 0;  // live bytes at the bucket's end
};

struct HeapResult {
  uint64_t memory_events = 0;  // of the analyzed device type
  uint64_t allocations = 0, frees = 0;
  uint64_t bytes_allocated = 0;
  uint64_t unmatched_frees = 0;  // frees whose allocation is not in the trace
  uint64_t processes = 0;
  int64_t span_ns = 0;  // first to last memory event
  double allocations_per_second = 0;

  int64_t peak_bytes = 0;      // total live bytes (all processes) at its maximum
  int64_t peak_ts_ns = 0;      // absolute trace time of the peak
  int64_t peak_offset_ns = 0;  // relative to the first memory event
  uint64_t peak_blocks = 0;
  std::vector<HeapStack> peak_stacks;  // live at the peak, most bytes first

  uint64_t leaked_bytes = 0, leaked_blocks = 0;
  std::vector<HeapStack> leaks;  // unfreed at the end, most bytes first
  uint64_t leak_stacks = 0;      // distinct stacks with leaks (leaks holds the top ones)

  uint64_t temporary_blocks = 0, temporary_bytes = 0;
  std::vector<HeapStack> temporaries;  // most blocks first
  int64_t temporary_ns = 0;

  std::vector<HeapRateBucket> rate;
};

HeapResult analyze_heap(const Trace& trace, const HeapOptions& options = {});

}  // namespace mlprof
