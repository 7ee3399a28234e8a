// Timeline: the lanes a CPU/GPU timeline draws (one per CPU thread and GPU stream) and how much
// the CPU and GPU work overlap. The events themselves are encoded for the browser by
// render/timeline_data.h; this is the part every view (CLI, JSON, HTML) shows as numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

struct TimelineLane {
  uint32_t track = 0;
  std::string name;  // Trace::track_label
  bool gpu = false;
  int64_t pid = 0, tid = 0;
  uint64_t slices = 0;
  uint32_t max_depth = 0;  // deepest nesting level + 1 (rows the lane needs)
  int64_t busy_ns = 0;     // union of the lane's slices (GPU lanes: work only, as gpu_busy_ns)
};

// A counter series (GPU utilization, memory, power...), thinned for drawing.
struct TimelineCounter {
  std::string name;  // "process: series"
  uint64_t samples = 0;
  double min = 0, max = 0, mean = 0;  // over all samples
  std::vector<int64_t> ts_ns;         // relative to TimelineResult::begin_ns
  std::vector<double> values;         // at most TimelineOptions::max_counter_points
};

// GPU work of one device over time: the share of each bucket of the trace covered by kernels,
// copies and sets on any of its streams (the TensorBoard plugin's GPU utilization, over time).
struct TimelineGpuUtilization {
  int32_t device = 0;
  int64_t bucket_ns = 0;       // bucket k covers [begin_ns + k * bucket_ns, + bucket_ns)
  std::vector<double> values;  // fraction of the bucket busy, 0..1 (the last bucket may be cut)
};

struct TimelineOptions {
  size_t max_counter_points = 2000;  // per series; min and max of each bucket are kept
  size_t gpu_utilization_buckets = 200;
};

struct TimelineResult {
  int64_t begin_ns = 0, end_ns = 0;
  std::vector<TimelineLane> lanes;  // CPU threads first (by pid, tid), then GPU streams
  uint64_t slices = 0;
  uint64_t flows = 0;  // flows with both ends bound to slices
  // Overlap of CPU and GPU work over the whole trace (unions of intervals).
  int64_t cpu_busy_ns = 0;  // union of all CPU thread slices
  int64_t gpu_busy_ns = 0;  // union of GPU work (kernels, memcpy, memset; not syncs/annotations)
  int64_t overlap_ns = 0;   // |CPU busy ∩ GPU busy|
  int64_t gpu_idle_ns = 0;  // GPU span (first to last GPU event) minus GPU busy
  int64_t gpu_span_ns = 0;
  double gpu_busy_overlapped_pct = 0;  // overlap / GPU busy * 100 (0 without GPU work)
  std::vector<TimelineCounter> counters;
  std::vector<TimelineGpuUtilization> gpu_utilization;  // per device with GPU work
};

TimelineResult analyze_timeline(const Trace& trace, const TimelineOptions& options = {});

// Whether a slice on a GPU stream is GPU work (kernel, memcpy, memset, other device work) rather
// than an annotation range (gpu_user_annotation) or a wait (cuda_sync).
bool is_gpu_work_slice(const Trace& trace, size_t slice);

// Length of the union of [begin, end) intervals (sorted in place).
int64_t interval_union_ns(std::vector<std::pair<int64_t, int64_t>>& intervals);

}  // namespace mlprof
