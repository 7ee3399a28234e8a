// `mlprof kernels`: per GPU kernel name statistics, launch configuration, tensor-core use,
// and Holistic Trace Analysis' kernel-type and kernel breakdowns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/gpu_events.h"
#include "mlprof/trace.h"

namespace mlprof {

struct KernelsOptions {
  bool hta_compatible = false;  // HTA's event window and microsecond time base
  bool include_memory = true;   // memcpy/memset rows (HTA: include_memory_kernels)
  size_t hta_num_kernels = 10;  // HTA get_gpu_kernel_breakdown defaults
  double hta_duration_ratio = 0.8;
};

// Launch configuration as Kineto records it in kernel args; -1 when absent. When calls of one
// name differ, the first call's configuration is shown and `varies` is set; blocks per SM and
// occupancy are the duration-weighted means over the calls that record them,
// sum(value * dur) / sum(dur) (the TensorBoard plugin's KernelParser.parse_events).
struct LaunchConfig {
  std::string grid;   // "[80, 1, 1]"
  std::string block;  // "[128, 1, 1]"
  int64_t registers_per_thread = -1;
  int64_t shared_memory = -1;  // bytes
  double blocks_per_sm = -1;   // duration-weighted mean
  double warps_per_sm = -1;
  double achieved_occupancy = -1;  // "est. achieved occupancy %", duration-weighted
  bool varies = false;
};

struct KernelStats {
  std::string name;
  KernelType type = KernelType::kComputation;
  GpuWorkKind kind = GpuWorkKind::kKernel;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0, max_ns = 0;
  double mean_ns = 0;
  double std_ns = 0;  // sample standard deviation (pandas), 0 for one call
  double share = 0;   // total / sum of all rows' totals (fraction)
  bool tensor_cores = false;
  LaunchConfig launch;
};

// HTA kernel_type_breakdown: time of each type's union, with overlapping types split out
// ("COMPUTATION overlapping COMMUNICATION").
struct KernelTypeTime {
  std::string kernel_type;
  int64_t time_ns = 0;  // HTA mode: whole microseconds * 1000
  double percent = 0;   // of the sum over rows, rounded to 0.1 like HTA
};

// HTA kernel_breakdown row: the top kernels per type covering `duration_ratio` of the time (at
// most `num_kernels`), the rest folded into "others" (whose min/max/mean/std are statistics of
// per-name sums, HTA's quirk).
struct HtaKernelRow {
  std::string name;
  std::string kernel_type;
  double sum_us = 0, max_us = 0, min_us = 0, std_us = 0, mean_us = 0;
  int32_t rank = 0;
};

// Kernels by the op that launched them (the TensorBoard plugin's Kernel view "group by kernel
// name + op name"): one row per (op, kernel, grid, block, registers, shared memory). The op is
// the op the launch is charged to (device_time.h OpAttribution); "(no op)" when the kernel has no
// matched launch or the launch is outside any op. Kernels only (no memcpy/memset).
struct KernelOpRow {
  std::string op;
  std::string kernel;
  std::string grid, block;
  int64_t registers_per_thread = -1;
  int64_t shared_memory = -1;
  uint64_t count = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double mean_ns = 0;
  double blocks_per_sm = -1;       // duration-weighted mean, -1 when absent
  double achieved_occupancy = -1;  // duration-weighted mean (percent), -1 when absent
  // Launched by a CUDA/HIP graph replay: `op` is the captured op that launched the kernel in the
  // capture pass (graphs.h), not the graph launch's caller.
  bool replayed = false;
};

struct KernelsResult {
  int32_t rank = 0;
  int64_t total_gpu_ns = 0;  // sum of all kernel/memcpy/memset durations
  uint64_t kernel_count = 0;
  double tensor_core_share = 0;  // of computation-kernel time, on tensor-core kernels
  bool amd_gpu = false;          // an AMD GPU: its matrix cores (MFMA) are judged by AMD names
  // Whether kernel names say which kernels ran on tensor/matrix cores on this device
  // (device_table.h): no on MTIA and on AMD GPUs of unknown architecture.
  bool tensor_cores_measured = true;
  std::string matrix_unit = "tensor cores";  // "matrix cores (MFMA)" on AMD
  std::string device;                        // "MTIA", "AMD" (for the "not measured" line)
  int64_t tensor_core_ns = 0;
  int64_t computation_ns = 0;        // sum of computation-kernel durations
  std::vector<KernelStats> kernels;  // sorted by total, descending
  std::vector<KernelTypeTime> type_breakdown;
  std::vector<HtaKernelRow> hta_breakdown;
  std::vector<KernelOpRow> by_op;  // by total, descending
};

struct GraphsResult;
// `replays`: matched graph replays (analyze_graphs), whose kernels' launching op is the captured
// one.
KernelsResult analyze_kernels(const Trace& trace, const KernelsOptions& options = {},
                              const GraphsResult* replays = nullptr);

}  // namespace mlprof
