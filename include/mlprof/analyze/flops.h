// `mlprof flops`: floating-point work of the ops the performance models price (perf_model.h:
// matmul, linear, conv, attention, norms, pointwise, ...) from the shapes the profiler recorded
// (`Input Dims`, PyTorch's record_shapes=True), per op and per step, the achieved TFLOP/s, and
// model FLOPs utilization (MFU) when the device's peak is known. A view over the roofline's calls
// (modeled_calls.h): an op's FLOPs, GPU time and rate equal its `mlprof roofline` row.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

using Shape = std::vector<int64_t>;

// Parses Kineto's `Input Dims` JSON text ("[[32, 64], [64, 64], []]"); nullopt when malformed.
std::optional<std::vector<Shape>> parse_input_dims(std::string_view json);

// FLOPs of one call of `op` from its input shapes alone, for callers with no recorded types or
// scalar arguments (mlprof.torch's live module counter); traces use op_perf (perf_model.h).
// FLOPs of one call of `op` (with or without the "aten::" prefix) with these input shapes;
// nullopt when the op is not one mlprof counts or the shapes do not fit it. A multiply-add is
// 2 FLOPs. Formulas (docs/analysis.md): mm/addmm/matmul/bmm/baddbmm 2*batch*M*K*N; linear
// 2*rows*in*out; conv 2*N*Cout*prod(out spatial)*(Cin/groups)*prod(kernel), output spatial size
// taken equal to the input's (stride 1, same padding: Input Dims does not carry stride or
// padding); convolution_backward twice the forward (grad input + grad weight), using
// grad_output's exact spatial size; attention 4*B*H*L*S*E forward, 2.5x that backward.
std::optional<double> op_flops(std::string_view op, const std::vector<Shape>& dims);
// True for the ops op_flops counts.
bool is_flop_counted_op(std::string_view op);

struct FlopsOptions {
  double peak_tflops = 0;  // override the device table (0 = device_peaks.h's row)
  size_t top = 30;
};

struct OpFlops {
  std::string name;
  uint64_t calls = 0;          // modeled calls (shapes recorded and fit)
  uint64_t calls_counted = 0;  // of which counted: with kernel time on a GPU trace
  double flops = 0;
  int64_t total_ns = 0;     // host (wall) time of the counted calls
  int64_t gpu_ns = 0;       // GPU time of the compute kernels they launched (= roofline kernel_ns)
  double tflops_per_s = 0;  // flops / gpu_ns on a GPU trace, else flops / total_ns
};

struct StepFlops {
  int64_t number = 0;
  double flops = 0;
  int64_t dur_ns = 0;
  double tflops_per_s = 0;
  double mfu = NAN;
};

struct FlopsResult {
  double total_flops = 0;
  int64_t counted_op_ns = 0;          // GPU time of counted calls (host time on a CPU trace)
  double op_tflops_per_s = 0;         // total_flops / counted_op_ns
  int64_t wall_ns = 0;                // steps' total time, else the trace span
  double achieved_tflops_per_s = 0;   // FLOPs inside the steps / steps' time (else span)
  std::string device;                 // deviceProperties[0].name, "" for CPU traces
  std::string dtype;                  // dtype of most matrix FLOPs ("bf16"), MFU's peak
  double peak_tflops = 0;             // 0 = unknown
  std::string peak_source;            // "table: H100 SXM bf16 dense", "--peak-tflops"
  double mfu = NAN;                   // achieved / peak
  uint64_t calls_without_shapes = 0;  // modeled calls with no Input Dims recorded
  std::vector<OpFlops> ops;           // by FLOPs, descending
  std::vector<StepFlops> steps;
};

FlopsResult analyze_flops(const Trace& trace, const FlopsOptions& options = {});
struct GraphsResult;
// graphs: as analyze_roofline's (the same calls).
FlopsResult analyze_flops(const Trace& trace, const StepsResult& steps,
                          const FlopsOptions& options = {}, const GraphsResult* graphs = nullptr);

}  // namespace mlprof
