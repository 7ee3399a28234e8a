// `mlprof modules`: which layer (nn.Module) is slow. The module tree comes from Kineto's
// python_function events `nn.Module: Name_N` (with_stack / with_modules), parent = the nearest
// module reached through "Python parent id" -> "Python id". Calls of the same module path
// merge. Per path: calls, host time (total, self = minus child modules), GPU time (the GPU
// events launched on the module's thread inside its span, union per call, as TraceLens's
// nn.Module tree measures it), self GPU time (events whose innermost module is this one),
// FLOPs of the counted ops whose innermost module it is, and the share of step time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

struct ModulesOptions {
  size_t top = 20;  // rows in the slowest / most variable / shared lists
};

struct ModuleRow {
  std::string path;  // "Qwen3Model_0/Qwen3DecoderLayer_0/Qwen3Attention_0"
  std::string name;  // last component
  std::string cls;   // "Qwen3Attention"
  uint32_t depth = 0;
  int32_t parent = -1;     // index of the parent row
  bool recompute = false;  // runs on the autograd thread (activation checkpointing)
  uint64_t calls = 0;
  int64_t host_ns = 0, host_self_ns = 0;
  int64_t gpu_ns = 0;       // sum over calls of the union of its GPU events
  int64_t gpu_self_ns = 0;  // events whose innermost module is this one
  uint64_t gpu_events = 0;
  double flops = 0, flops_self = 0;
  double step_share = 0;                   // gpu_ns (or host_ns without GPU) / step time
  int64_t gpu_min_ns = 0, gpu_max_ns = 0;  // per call
  double gpu_cv = 0;                       // coefficient of variation of per-call GPU time
  // Of gpu_self_ns: CUDA/HIP graph replays charged here from the capture pass (graphs.h), -1 when
  // the trace has no matched replay. A captured module this trace never called is a row of 0
  // calls (its path under the module the replay ran in).
  int64_t gpu_replayed_ns = -1;
};

struct SharedModule {  // one module instance called from several places
  std::string name;
  uint64_t calls = 0;
  uint64_t call_sites = 0;  // distinct parent paths
  int64_t gpu_ns = 0;
};

struct ModuleClass {  // all calls of one layer type ("Qwen3DecoderLayer"), self times summed
  std::string cls;
  uint64_t calls = 0;
  int64_t host_self_ns = 0, gpu_self_ns = 0;
  double flops_self = 0;
};

struct ModulesResult {
  uint64_t module_events = 0;
  uint64_t recompute_events = 0;
  std::string message;  // set when the trace has no module events
  // "% step" divides by step_ns: the iterations of the step model (steps.h), ProfilerStep# by
  // their host time, engine iterations (vLLM, SGLang, --step-annotation) by their GPU windows
  // on a GPU trace (their host window is the CPU side only), else their host time; with no
  // iterations, the trace's span.
  int64_t step_ns = 0;
  uint32_t steps = 0;  // iterations in step_ns (0: step_ns is the trace span)
  StepSource step_source = StepSource::kNone;  // kNone: no iterations (the span)
  std::string step_window = "span";            // "host", "gpu" (their GPU windows) or "span"
  int64_t gpu_total_ns = 0;                    // union of all GPU events
  bool has_gpu = false;
  bool replayed = false;  // graph replays were charged to captured modules
  uint32_t max_depth = 0;
  std::vector<ModuleRow> rows;       // tree order (depth first)
  std::vector<uint32_t> slowest;     // row indexes by GPU (else host) time
  std::vector<uint32_t> variable;    // rows with >= 3 calls, by per-call CV
  std::vector<SharedModule> shared;  // names called under more than one parent path
  std::vector<ModuleClass> classes;  // by GPU (else host) self time
};

struct GraphsResult;
// `replays`: matched graph replays (analyze_graphs), charged to the captured modules. `steps`:
// the trace's iterations (analyze_steps), the "% step" denominator; nullptr: the trace span.
ModulesResult analyze_modules(const Trace& trace, const ModulesOptions& options = {},
                              const GraphsResult* replays = nullptr,
                              const StepsResult* steps = nullptr);

// Why there is no module tree (no nn.Module events: how to record them), or nullopt.
std::optional<std::string> modules_unavailable(const Trace& trace);

}  // namespace mlprof
