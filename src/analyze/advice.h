// The bottleneck rules' advice, chosen by context: the device (its vendor and the data types
// its matrix units run: device_table.h) and what the op is (a torch.compile region, a blocking
// copy, a synchronizing call, a launch). Each piece of advice comes with `why`: the facts of this
// trace that make it apply. One file so that the wording is reviewed, and tested, in one place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mlprof/analyze/device_table.h"

namespace mlprof::advice {

struct Advice {
  std::string text;  // what to change
  std::string why;   // why it applies to this trace
};

// What a host op is, as far as advice goes.
enum class OpKind : uint8_t {
  kCompiledRegion,  // CompiledFunction(Backward), Torch-Compiled Region, ## Call CompiledFxGraph
  kBlockingCopy,    // cudaMemcpy, hipMemcpy, hipMemcpyWithStream, ... (the host waits)
  kSync,            // cudaDeviceSynchronize, aten::item, ... (the host waits for the GPU)
  kGraphLaunch,     // cudaGraphLaunch, hipGraphLaunch: already one launch per captured graph
  kLaunch,          // cudaLaunchKernel, hipLaunchKernel, ...
  kCopyOp,          // aten::copy_, aten::to, aten::_to_copy
  kCollective,      // nccl:all_reduce, c10d::allreduce_, record_param_comms
  kOther,
};
OpKind op_kind(std::string_view name);
bool is_compiled_region_name(std::string_view name);

// A hotspot op. `compiled_share`: the share of its self time spent inside torch.compile regions.
Advice hotspot(std::string_view op, int64_t self_ns, uint64_t calls, double share_pct,
               double compiled_share, const DeviceCaps& device);

// Low tensor/matrix-core use. `op_dtype`: the input dtype of most of the launching matmul/conv
// ops ("fp32", "fp16", "bf16", ""), `top_kernel`/`top_family`: the largest GEMM/conv kernel not
// on matrix units and its library family.
struct TensorCoreFacts {
  double share = 0;  // of compute time on matrix units
  int64_t non_matrix_gemm_ns = 0;
  std::string op_dtype;
  std::string top_kernel;
  std::string top_family;
};
Advice tensor_cores(const DeviceCaps& device, const TensorCoreFacts& facts);

// GPU idle waiting on launches (launch_bound) or idle for other reasons; graph_share: the share
// of kernels started by CUDA/HIP graph replays (the step already uses graphs).
Advice gpu_idle(const DeviceCaps& device, bool launch_bound, bool compiled, double idle_pct,
                double host_wait_share, double tiny_share, double graph_share = 0);
Advice sync_stall(const DeviceCaps& device, std::string_view top_op, int64_t sync_ns,
                  uint64_t calls);
Advice pageable_copies(const DeviceCaps& device, int64_t count, int64_t ns);
Advice communication(const DeviceCaps& device, double comm_pct, double overlap_pct);
Advice data_loading(double share_pct);
// Serving engines (vLLM, SGLang): the engine named by the trace's iteration annotations.
Advice serving_host_bound_decode(const DeviceCaps& device, std::string_view engine,
                                 bool graphs_replayed, std::string_view top_host_op);
Advice serving_graph_coverage(const DeviceCaps& device, std::string_view engine,
                              double coverage_pct);
Advice serving_batch_missed_graph(const DeviceCaps& device, std::string_view engine);
Advice serving_prefill_imbalance(std::string_view engine);

// Kernels of one family below their roofline (roofline.h). `family`: perf_family_name ("gemm",
// "copy", ...); `intensity`: FLOPs per byte; `roofline_pct`: roofline time / kernel time (0-1);
// `top_op`: the op that launched most of their time.
struct RooflineFacts {
  std::string family;
  std::string dtype;
  bool compute_bound = false;
  double intensity = 0;
  double roofline_pct = 0;
  int64_t kernel_ns = 0, roofline_ns = 0;
  uint64_t kernels = 0;
  std::string top_op;
  double target_pct = 0;  // the share of the roofline the replay lets them reach
};
Advice roofline(const DeviceCaps& device, bool compiled, const RooflineFacts& facts);

// The device in a few words for a `why`: "Tesla V100-SXM2-32GB (sm_70, Volta: tensor cores run
// fp16)".
std::string device_text(const DeviceCaps& device);

}  // namespace mlprof::advice
