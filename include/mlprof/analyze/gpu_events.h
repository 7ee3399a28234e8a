// The GPU work of one trace as a compact, time-sorted table, plus each event's launch call.
// Built once per analysis (O(n log n)); kernels, gpu and ranks all start from it.
#pragma once

#include <cstdint>
#include <climits>
#include <vector>

#include "mlprof/analyze/kernel_class.h"
#include "mlprof/trace.h"

namespace mlprof {

struct GpuEventsOptions {
  // Reproduce Holistic Trace Analysis' event selection and time base exactly:
  //  * with >= 2 ProfilerStep#N, CPU events at or after the last step's start are dropped, and
  //    GPU events whose launch (by correlation) was dropped or is absent go too;
  //  * times become integer microseconds: start rounded up, end rounded down (float-ns traces).
  // mlprof's default keeps every event at ns resolution (HTA issue #76: the silently dropped
  // last step).
  bool hta_compatible = false;
};

struct GpuEvent {
  int64_t ts = 0;    // ns (HTA mode: integer microseconds * 1000)
  int64_t end = 0;
  uint32_t slice = 0;      // index into Trace::slices
  int32_t device = 0;
  int64_t stream = 0;
  KernelType type = KernelType::kComputation;
  GpuWorkKind kind = GpuWorkKind::kKernel;
  int32_t launch = -1;     // the cuda_runtime/cuda_driver slice that launched it, or -1
  int64_t correlation = -1;
  int64_t dur() const { return end - ts; }
};

struct GpuEvents {
  std::vector<GpuEvent> events;     // sorted by (ts, end)
  // Launch calls kept (runtime/driver slices with a correlation), for launch statistics.
  std::vector<uint32_t> launch_slices;
  int64_t cpu_window_end = INT64_MAX;  // HTA mode: start of the dropped last step
  bool hta_filtered = false;          // HTA mode dropped the last step
  std::vector<int64_t> kept_steps;    // ProfilerStep numbers kept (HTA mode)
};

// Collects every GPU-track slice except gpu_user_annotation ranges.
GpuEvents collect_gpu_events(const Trace& trace, const GpuEventsOptions& options = {});

// Launch start/end of a GPU event in the same time base as GpuEvent::ts (ns, or HTA us * 1000).
int64_t launch_start(const Trace& trace, const GpuEvents& ev, const GpuEvent& e);

}  // namespace mlprof
