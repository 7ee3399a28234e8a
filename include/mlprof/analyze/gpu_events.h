// The GPU work of one trace as a compact, time-sorted table, plus each event's launch call.
// Built once per analysis (O(n log n)); kernels, gpu and ranks all start from it.
#pragma once

#include <climits>
#include <cstdint>
#include <string_view>
#include <vector>

#include "mlprof/analyze/kernel_class.h"
#include "mlprof/trace.h"

namespace mlprof {

// Whether any track is a GPU stream: the one rule for "this trace has GPU data" (GPU analyses,
// the GPU step classes, the report's GPU tabs all ask this).
bool has_gpu(const Trace& trace);

struct GpuEventsOptions {
  // Reproduce Holistic Trace Analysis' event selection and time base exactly:
  //  * with >= 2 ProfilerStep#N, CPU events at or after the last step's start are dropped, and
  //    GPU events whose launch (by correlation) was dropped or is absent go too;
  //  * times become integer microseconds: start rounded up, end rounded down (float-ns traces);
  //  * a GPU event needs args.stream (HTA's GPU rows are those with a stream).
  // mlprof's default keeps every event at ns resolution (HTA issue #76: the silently dropped
  // last step).
  bool hta_compatible = false;
};

struct GpuEvent {
  int64_t ts = 0;  // ns (HTA mode: integer microseconds * 1000)
  int64_t end = 0;
  uint32_t slice = 0;  // index into Trace::slices
  int32_t device = 0;
  int64_t stream = 0;
  KernelType type = KernelType::kComputation;
  GpuWorkKind kind = GpuWorkKind::kKernel;
  int32_t launch = -1;    // the cuda_runtime/cuda_driver slice that launched it, or -1
  int64_t launch_ts = 0;  // that call's start and end, same time base as ts
  int64_t launch_end = 0;
  int64_t correlation = -1;
  int64_t dur() const { return end - ts; }
};

struct GpuEvents {
  std::vector<GpuEvent> events;  // sorted by (ts, end)
  // Launch calls kept (runtime/driver slices with a correlation), for launch statistics.
  std::vector<uint32_t> launch_slices;
  int64_t cpu_window_end = INT64_MAX;  // HTA mode: start of the dropped last step
  bool hta_compatible = false;
  bool hta_filtered = false;        // HTA mode dropped the last step
  std::vector<int64_t> kept_steps;  // ProfilerStep numbers kept (HTA mode)
  uint64_t hta_no_stream = 0;       // HTA mode: GPU-track events without args.stream, left out
};

// Collects every GPU-track slice except gpu_user_annotation ranges and (outside HTA mode)
// cuda_sync waits.
GpuEvents collect_gpu_events(const Trace& trace, const GpuEventsOptions& options = {});

// A slice's start and end in the events' time base (ns, or HTA whole microseconds * 1000:
// start rounded up, end rounded down).
int64_t time_base_start(const GpuEvents& ev, int64_t ts_ns);
int64_t time_base_end(const GpuEvents& ev, int64_t end_ns);

}  // namespace mlprof
