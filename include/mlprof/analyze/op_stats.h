// Per-operation statistics: the table every profiler shows first (count, total, self, mean,
// std, min, max, percentiles). Used by summary, compare, reports.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

struct DeviceTime;
struct GraphsResult;

// Result structs hold plain strings, not StringIds: they outlive and compare across Traces.
struct OpStats {
  std::string name;
  std::string category;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0;
  double std_ns = 0;                          // population standard deviation
  double p50_ns = 0, p90_ns = 0, p99_ns = 0;  // linear interpolation between closest ranks
  double percent_of_span = 0;                 // total / trace span * 100
  // Thread (CPU) time, from the calls whose trace recorded it (tts/tdur): their summed thread
  // time and their wall time. A call with much less CPU than wall time was blocked or waiting.
  uint64_t cpu_calls = 0;
  int64_t cpu_ns = 0;
  int64_t cpu_wall_ns = 0;
  // GPU time of the kernels/memcpys/memsets the calls launched (device_time.h): self = launched
  // by the call itself, total = with the ops it called. -1: not computed (no GPU streams, or
  // OpStatsOptions::device_time off).
  int64_t device_self_ns = -1;
  int64_t device_total_ns = -1;
  // Of device_self_ns: GPU time of CUDA/HIP graph replays charged to this op from the capture
  // pass (graphs.h), as if the graph had run eagerly; the graph launch's op keeps only the rest.
  // -1: the trace has no matched replay (OpStatsOptions::replays unset or empty).
  int64_t device_replayed_ns = -1;
};

enum class OpSort { kTotal, kSelf, kMean, kCount, kDeviceSelf, kDeviceTotal };

struct OpStatsOptions {
  std::string category;     // only slices of this category ("" = all)
  bool include_gpu = true;  // include slices on GPU stream tracks
  bool keep_durations = false;
  bool device_time = false;  // fill device_self_ns/device_total_ns on traces with GPU streams
  // Holistic Trace Analysis' event window (gpu_events.h): with >= 2 profiler steps, CPU slices
  // from the last step's start on are left out, and GPU-track slices are kept only when HTA
  // keeps them (a launch in the window, args.stream present).
  bool hta_compatible = false;
  // The per-slice device time already computed (device_time_by_slice), so a caller that also
  // groups the ops (op_groups) computes it once; null: computed here when device_time is set.
  const DeviceTime* device_times = nullptr;
  // Matched graph replays (analyze_graphs): their kernels' device time is charged to the
  // captured ops instead of the graph launch's. Rows for captured ops this trace never called
  // have count 0.
  const GraphsResult* replays = nullptr;
};

// One row per (name, category) over all matching slices. Sorted by total time, descending.
std::vector<OpStats> op_stats(const Trace& trace, const OpStatsOptions& options = {});
// Same, also returning each row's per-call durations (ns), for significance tests.
std::vector<OpStats> op_stats_with_durations(const Trace& trace, const OpStatsOptions& options,
                                             std::vector<std::vector<int64_t>>& durations);

void sort_op_stats(std::vector<OpStats>& ops, OpSort by);

// Fills count, total, mean, std, min, max, percentiles and % of span from per-call durations
// (reordered in place: percentiles by selection). Self time is left to the caller.
void fill_duration_stats(OpStats& op, std::vector<int64_t>& durations, int64_t span_ns);

}  // namespace mlprof
