// `mlprof gpu`: where GPU time goes on each device, with Holistic Trace Analysis' definitions
// (temporal breakdown, idle breakdown, comm/comp overlap, queue length, memory bandwidth,
// kernel launch statistics) so numbers are comparable, plus mlprof's own views.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

struct GpuOptions {
  bool hta_compatible = false;
  // HTA get_idle_time_breakdown's consecutive_kernel_delay: shorter gaps are "kernel wait".
  int64_t consecutive_kernel_delay_ns = 30'000;
  // HTA get_cuda_kernel_launch_stats cutoffs (runtime_cutoff=50 us, launch_delay_cutoff=100 us).
  int64_t runtime_cutoff_ns = 50'000;
  int64_t launch_delay_cutoff_ns = 100'000;
  size_t max_flagged_launches = 20;       // worst short-kernel/long-launch calls listed
  size_t queue_series_max_points = 1000;  // per stream, downsampled by max within buckets
};

// count/mean/std/min/25%/50%/75%/max as pandas describe() gives them (sample std, linear
// percentiles). Empty: count 0 and NaNs.
struct Describe {
  double count = 0;
  double mean = NAN, std = NAN, min = NAN, p25 = NAN, p50 = NAN, p75 = NAN, max = NAN;
};
Describe describe(std::vector<double> values);

// HTA temporal breakdown; mlprof adds communication, memcpy and memset unions.
struct TemporalBreakdown {
  int32_t device = -1;           // -1: all devices of the trace (HTA's per-rank row)
  int64_t span_ns = 0;           // last GPU end - first GPU start (HTA "kernel_time")
  int64_t idle_ns = 0;           // span - |union of all GPU work|
  int64_t compute_ns = 0;        // |union of computation kernels|
  int64_t non_compute_ns = 0;    // span - compute - idle
  int64_t communication_ns = 0;  // |union of communication kernels|
  int64_t memcpy_ns = 0;         // |union of memcpys|
  int64_t memset_ns = 0;         // |union of memsets|
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;  // of span, unrounded
  double communication_pct = 0, memcpy_pct = 0, memset_pct = 0;
};

// Idle gaps on one stream by cause (HTA): the gap before each event is host wait when its launch
// started after the previous event ended, else kernel wait when shorter than
// consecutive_kernel_delay, else other. Kernel wait can be negative on overlapping events.
struct IdleCategory {
  int64_t time_ns = 0;
  double ratio = 0;       // of the stream's idle time
  Describe intervals_us;  // HTA idle_interval_stats, in microseconds
};
struct StreamIdle {
  int32_t device = 0;
  int64_t stream = 0;
  IdleCategory host_wait, kernel_wait, other;
  int64_t idle_ns() const { return host_wait.time_ns + kernel_wait.time_ns + other.time_ns; }
};

// Queue length = launched but not finished GPU events on a stream (+1 at the launch call, -1 at
// the GPU event's start, HTA's definition). `hta` describes the change points (not
// time-weighted, as HTA does); mean_time_weighted is mlprof's.
struct QueuePoint {
  int64_t ts_ns = 0;
  int64_t length = 0;
};
struct StreamQueue {
  int32_t device = 0;
  int64_t stream = 0;
  Describe hta;
  double mean_time_weighted = 0;
  int64_t max_length = 0;
  int64_t time_at_max_queue_ns = 0;  // HTA blocked_on_full_queue with max 1024
  std::vector<QueuePoint> series;    // downsampled step function
};

// Memcpy/memset bandwidth per kind ("Memcpy HtoD", "Memset", ...).
struct MemoryBandwidth {
  std::string kind;
  uint64_t count = 0;
  int64_t bytes = 0;            // sum of args "bytes" (0 when absent)
  int64_t time_ns = 0;          // sum of durations
  double achieved_gbps = 0;     // bytes / time (1 GB = 1e9 bytes)
  uint64_t pageable_count = 0;  // copies from pageable host memory
  int64_t pageable_bytes = 0;
  int64_t pageable_time_ns = 0;
  Describe hta_gbps;  // HTA memory_bw_summary (time series of summed bandwidth)
};

// One launch call matched to its GPU event by correlation.
struct LaunchRecord {
  std::string kernel;
  int64_t correlation = -1;
  int64_t cpu_ns = 0;    // launch call duration
  int64_t gpu_ns = 0;    // GPU event duration
  int64_t delay_ns = 0;  // GPU start - launch call end
};
struct LaunchStats {
  uint64_t rows = 0;
  int64_t sum_cpu_ns = 0, sum_gpu_ns = 0, sum_delay_ns = 0;
  Describe cpu_us, gpu_us, delay_us;  // HTA describe(), microseconds
  // HTA's three views: short kernels (gpu < cpu and cpu <= runtime_cutoff), runtime outliers
  // (cpu > runtime_cutoff), launch delay outliers (delay > launch_delay_cutoff).
  uint64_t short_kernels = 0, runtime_outliers = 0, delay_outliers = 0;
  int64_t short_kernels_gpu_ns = 0, short_kernels_cpu_ns = 0;
  std::vector<LaunchRecord> flagged;  // short kernels with the longest launches
  std::vector<LaunchRecord> first;    // first 5 rows by correlation (for checks)
};

struct DeviceGpuStats {
  int32_t device = 0;
  TemporalBreakdown temporal;
  std::vector<StreamIdle> idle;            // per stream
  std::vector<StreamQueue> queues;         // per stream
  std::vector<MemoryBandwidth> bandwidth;  // per kind
  int64_t gpu_busy_ns = 0;                 // |union of GPU work|
  int64_t cpu_overlap_ns = 0;              // GPU busy while a CPU thread runs an op
  double cpu_gpu_overlap = 0;              // cpu_overlap / gpu_busy
  double comm_comp_overlap_pct = NAN;      // |comm ∩ compute| / |comm| * 100, NaN without comm
};

// The TensorBoard profiler plugin's GPU summary (its Overview; gpu_metrics_parser.py), per device
// over the steps' window: from the first kept step's start to the last kept step's end, each step
// extended to the end of the GPU work it launched (device_step_windows); without steps, the CPU
// ops' span extended the same way. Kernels only (cat kernel), by their args.device.
//   utilization = |union of kernel intervals within the window| / window
//   sm_efficiency = sum over the window of min(sum of concurrent kernels' "blocks per SM", 1)
//                   * time / window (kernels with blocks per SM > 0)
//   achieved_occupancy = "est. achieved occupancy %" weighted by each kernel's time within the
//                        window (a percentage, as Kineto writes it)
// NaN where no kernel records the argument.
struct GpuUtilization {
  int32_t device = 0;
  uint64_t kernels = 0;  // kernels overlapping the window
  int64_t kernel_busy_ns = 0;
  double utilization = 0;           // fraction
  double sm_efficiency = NAN;       // fraction
  double achieved_occupancy = NAN;  // percent
  uint64_t kernels_with_blocks_per_sm = 0, kernels_with_occupancy = 0;
};
struct GpuSummary {
  int64_t window_begin_ns = 0, window_end_ns = 0;
  size_t steps = 0;           // steps in the window (0: the CPU ops' span)
  size_t steps_left_out = 0;  // tail steps the plugin leaves out
  std::vector<GpuUtilization> devices;
};

struct GpuResult {
  int32_t rank = 0;
  bool hta_compatible = false;
  bool hta_dropped_last_step = false;
  std::vector<int64_t> kept_steps;
  uint64_t gpu_events = 0;
  TemporalBreakdown temporal;          // all devices together (HTA's per-rank row)
  double comm_comp_overlap_pct = NAN;  // all devices together
  std::vector<DeviceGpuStats> devices;
  std::vector<StreamIdle> idle;  // all streams of all devices
  std::vector<StreamQueue> queues;
  std::vector<MemoryBandwidth> bandwidth;  // all devices
  LaunchStats launches;
  GpuSummary summary;  // the TensorBoard plugin's GPU utilization / SM efficiency / occupancy
  int64_t pageable_memcpy_count = 0;
  int64_t pageable_memcpy_ns = 0;
  int64_t pageable_memcpy_bytes = 0;
};

// `steps`: the trace's steps (analyze_steps), for the summary's window; computed when null.
GpuResult analyze_gpu(const Trace& trace, const GpuOptions& options = {},
                      const StepsResult* steps = nullptr);
GpuSummary gpu_summary(const Trace& trace, const StepsResult& steps);

// The pieces on their own, for callers that need one number (the bottleneck rules).
TemporalBreakdown temporal_breakdown(const Trace& trace, const GpuEvents& events,
                                     int32_t device = -1);
double comm_comp_overlap_pct(const GpuEvents& events, int32_t device = -1);

}  // namespace mlprof
