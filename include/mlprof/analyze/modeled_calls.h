// The calls the performance models (perf_model.h) price, and the GPU time of each: one list read
// by `mlprof roofline` and `mlprof flops`, so an op shows the same FLOPs, bytes and GPU time, and
// so the same rate, on every surface (issue 26).
//   A call is the outermost op with a model whose recorded arguments fit it (aten::linear's
//   addmm is part of the linear), or a kernel carrying its own numbers (Inductor's kernel_flop /
//   kernel_num_gb).
//   Its GPU time is that of the compute kernels it launched (launch correlation, else the
//   kernel's own External id for trimmed traces); communication kernels, memcpy and memset are
//   not its work.
//   A kernel replayed by a CUDA/HIP graph (graphs.h) is charged to the op the capture pass
//   recorded for it, priced with that op's shapes from the capture: one call per replay of the
//   captured op, as if the graph had run eagerly (issue 27).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/graphs.h"
#include "mlprof/analyze/perf_model.h"
#include "mlprof/trace.h"

namespace mlprof {

struct ModeledCall {
  int32_t slice = -1;  // the op's slice (the kernel's, for a kernel carrying its own numbers)
  PerfEstimate est;
  std::string shapes;  // the tensor inputs' shapes, compact ("[4, 768], [768, 768]")
  int64_t kernel_ns = 0;
  uint32_t kernels = 0;
  StringId kernel_name = 0;  // the first kernel's
  bool one_kernel_name = true;
  std::vector<uint32_t> kernel_slices;
  // A captured op's call in a graph replay: `slice` is in `source` (the capture's trace), the
  // graph launch `replay_launch` (a slice of the analyzed trace) places it in time, and `module`
  // is its innermost captured nn.Module. Null / -1 / "" for an op of the analyzed trace.
  const Trace* source = nullptr;
  int32_t replay_launch = -1;
  std::string module;
};

// The name of a call's op, and when it ran, whichever trace holds it.
std::string_view modeled_call_name(const Trace& trace, const ModeledCall& c);
int64_t modeled_call_ts(const Trace& trace, const ModeledCall& c);

struct RooflineUnmodeled {  // ops whose kernels have no model, by kernel time
  std::string name;
  std::string reason;  // "no model", "no shapes recorded", "shapes do not fit the model"
  uint64_t calls = 0;
  int64_t kernel_ns = 0;
};

struct ModeledCalls {
  std::vector<ModeledCall> calls;  // ops in slice order, then kernels carrying their numbers
  std::vector<RooflineUnmodeled> unmodeled;  // unsorted
  int64_t gpu_kernel_ns = 0;                 // every compute kernel of the trace
  uint64_t calls_without_shapes = 0;         // outermost modeled ops with no usable shapes recorded
  bool gpu = false;  // the trace has GPU work: a call's time is its kernel_ns
};

// graphs: charge matched replayed kernels to their captured ops (null: to the graph launch's op).
ModeledCalls collect_modeled_calls(const Trace& trace, const GraphsResult* graphs = nullptr);

}  // namespace mlprof
