// Performance models per op: the FLOPs and the bytes one call of an aten op does, from the
// shapes, dtypes and scalar arguments the profiler recorded (`Input Dims`, `Input type`,
// `Concrete Inputs`, `Input Strides`; record_shapes=True). The roofline (roofline.h) divides
// them by the GPU time of the kernels the op launched. Definitions follow AMD TraceLens's
// PerfModel (TraceLens/PerfModel/perf_model.py); docs/roofline.md lists every formula and the
// places where mlprof chooses a different one and why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/flops.h"

namespace mlprof {

// What kind of work an op is: decides its compute ceiling (matrix units or vector ALUs).
enum class PerfFamily : uint8_t {
  kGemm,         // mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm, _grouped_mm
  kAttention,    // scaled_dot_product_attention and its flash / efficient / cudnn kernels
  kConv,         // convolution forward and backward
  kNorm,         // layer / RMS / batch / group norm, forward and backward
  kSoftmax,      // softmax, log_softmax and their backward
  kElementwise,  // unary and binary (broadcasting) pointwise ops
  kReduce,       // sum, mean, max, ...
  kEmbedding,    // embedding lookups and their backward
  kCopy,         // copy_, clone, contiguous: bytes only
  kKernelArgs,   // a kernel that carries its own numbers (Inductor kernel_flop / kernel_num_gb)
};
std::string_view perf_family_name(PerfFamily f);  // "gemm", "attention", ...
// GEMM, attention and convolution run on the matrix units (tensor / matrix cores).
bool perf_family_uses_matrix_units(PerfFamily f);

// The recorded arguments of one call.
struct OpCallArgs {
  std::vector<Shape> dims;            // Input Dims (an empty shape for a non-tensor)
  std::vector<std::string> types;     // Input type ("c10::BFloat16", "float", "Scalar", "")
  std::vector<std::string> concrete;  // Concrete Inputs ("", "[16, 16]", "False", "1")
  std::vector<Shape> strides;         // Input Strides (may be empty)
};

struct PerfEstimate {
  PerfFamily family = PerfFamily::kElementwise;
  double flops = 0;
  double bytes = 0;
  std::string dtype;  // compute dtype: "bf16", "fp16", "fp32", "fp64", "fp8", "int8", "" unknown
  bool backward = false;
};
// A call's work on the matrix units: its family's, or a kernel carrying its own numbers whose
// FLOPs are 8- or 16-bit (Triton Proton's flops8 / flops16: only matrix units reach those rates).
bool perf_estimate_uses_matrix_units(const PerfEstimate& e);

// The model of one call of `op` ("aten::mm" or "mm"); nullopt when mlprof has no model for the
// op or the recorded arguments do not fit it.
std::optional<PerfEstimate> op_perf(std::string_view op, const OpCallArgs& args);
// Whether op_perf has a model for this op name (before looking at its arguments).
bool is_perf_modeled_op(std::string_view op);

// Bytes per element of a recorded type name (TraceLens's name2bpe plus the c10 names PyTorch
// writes): "c10::BFloat16" 2, "float" 4, "double" 8, "c10::Float8_e4m3fn" 1; 0 when not a
// tensor dtype ("Scalar", "", "ScalarList").
int bytes_per_element(std::string_view type);
// The compute dtype name of a recorded type ("bf16", "fp32", ...), "" when unknown.
std::string_view dtype_short_name(std::string_view type);

// Parses a JSON list of strings (Kineto's `Input type` / `Concrete Inputs`); nullopt if malformed.
std::optional<std::vector<std::string>> parse_string_list(std::string_view json);
// Parses an integer list written as text ("[16, 16]", "16"); nullopt if it is not one.
std::optional<std::vector<int64_t>> parse_int_list(std::string_view text);

}  // namespace mlprof
