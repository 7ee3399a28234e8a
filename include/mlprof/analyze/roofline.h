// `mlprof roofline`: how far each op, kernel, module and step is from what the hardware can do.
// Each op with a performance model (perf_model.h) gets its FLOPs and bytes from the shapes the
// trace recorded; the GPU time of the kernels it launched (not its host time) gives the
// achieved FLOP/s and bytes/s; the device's peaks (device_peaks.h) give the roofline:
//   arithmetic intensity AI = FLOPs / bytes
//   attainable = min(compute peak for the dtype, AI * DRAM bandwidth)
//   roofline time = max(FLOPs / compute peak, bytes / bandwidth)
//   % of roofline = roofline time / kernel time;  wasted = kernel time - roofline time
//   bound = compute when FLOPs / peak >= bytes / bandwidth, else memory.
// A call faster than its roofline is never shown as fact: above the compute peak it marks a
// model or attribution problem; above the DRAM bandwidth it means the bytes came from cache.
// docs/roofline.md has the formulas and the peak table's sources.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/device_peaks.h"
#include "mlprof/analyze/modeled_calls.h"
#include "mlprof/analyze/perf_model.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

struct RooflineOptions {
  std::string device;              // device name to look up instead of the trace's
  std::vector<DevicePeaks> peaks;  // --peaks rows (tried before the built-in table)
  size_t top = 30;                 // rows kept per table
};

struct RooflineRow {
  std::string name;    // op, kernel or module name
  std::string shapes;  // Input Dims (shape groups only)
  std::string dtype;   // "bf16", "fp32", ... ("" when mixed)
  std::string family;  // "gemm", "attention", ... ("" when mixed)
  uint64_t calls = 0;
  int64_t kernel_ns = 0;  // GPU time of the kernels the calls launched
  double flops = 0, bytes = 0;
  double intensity = 0;                           // FLOPs / byte
  double achieved_tflops = 0, achieved_tbps = 0;  // over kernel_ns
  double peak_tflops = 0;                         // compute ceiling (one dtype), 0 = mixed
  double attainable_tflops = 0;                   // min(peak, AI * bandwidth); 0 = mixed
  double roofline_pct = NAN;                      // roofline time / kernel time
  int64_t roofline_ns = 0;                        // time at the roofline
  int64_t wasted_ns = 0;                          // kernel time - roofline time, >= 0
  std::string bound;                              // "compute" / "memory"
  uint64_t above_compute_peak = 0;  // calls faster than the compute peak: model/attribution
  uint64_t above_bandwidth = 0;     // calls moving bytes faster than DRAM: served from cache
};

struct RooflineStep {
  int64_t number = 0;
  int64_t dur_ns = 0;
  double flops = 0, bytes = 0;
  int64_t kernel_ns = 0, roofline_ns = 0, wasted_ns = 0;
  double achieved_tflops = 0;  // FLOPs / step time
  double mfu = NAN;            // achieved / the matrix peak of the dominant dtype
};

// A modeled kernel at its call's roofline: the call's roofline time, FLOPs and bytes shared over
// its kernels by duration. `bottlenecks` prices kernel findings by replaying these kernels nearer
// their roofline. Not written to the JSON (slice ids are this trace's).
struct RooflineKernel {
  uint32_t slice = 0;  // the kernel's slice
  int64_t kernel_ns = 0, roofline_ns = 0;
  double flops = 0, bytes = 0;
  PerfFamily family = PerfFamily::kGemm;
  std::string dtype;
  bool compute_bound = false;
  int32_t op = -1;  // the call's op slice (-1: a kernel carrying its own numbers)
};

struct RooflineResult {
  std::string device;        // the device name looked up
  bool peaks_known = false;  // a row matched: the roofline columns are filled
  DevicePeaks peaks;
  std::string dtype;  // the dtype of most matrix FLOPs (MFU's peak)
  double mfu_peak_tflops = 0;
  std::vector<std::string> warnings;
  // Totals over the modeled calls.
  uint64_t calls = 0;
  double flops = 0, bytes = 0;
  int64_t kernel_ns = 0, roofline_ns = 0, wasted_ns = 0;
  int64_t gpu_kernel_ns = 0;  // every compute kernel of the trace (coverage = kernel_ns / this)
  uint64_t above_compute_peak = 0, above_bandwidth = 0;
  std::vector<RooflineRow> shapes;    // per (op, shapes, dtype), by wasted time
  std::vector<RooflineRow> ops;       // per op name
  std::vector<RooflineRow> families;  // per family
  std::vector<RooflineRow> kernels;   // per kernel name (kernels that are a call's only one)
  std::vector<RooflineRow> modules;   // per innermost nn.Module
  std::vector<RooflineStep> steps;
  std::vector<RooflineUnmodeled> unmodeled;
  // Every modeled kernel below its roofline (calls faster than a peak are left out), by slice.
  std::vector<RooflineKernel> kernel_roofline;
};

struct GraphsResult;
// graphs: matched graph replays charged to their captured ops (modeled_calls.h); null: to the
// graph launch's op.
RooflineResult analyze_roofline(const Trace& trace, const StepsResult& steps,
                                const RooflineOptions& options = {},
                                const GraphsResult* graphs = nullptr);

}  // namespace mlprof
