// `mlprof steps`: training iterations (PyTorch `ProfilerStep#N`, mlprof step markers), their
// times, outliers, and where each step's time goes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

// What a step's host time is spent on. Each instant of the step (on the step's thread) goes to the
// highest-priority phase among the classified slices active then (communication > data loading >
// optimizer > backward > forward), else other; see classify_step_phase and docs/analysis.md.
enum class StepPhase : uint8_t {
  kDataLoading,
  kForward,
  kBackward,
  kOptimizer,
  kCommunication,
  kOther,
};
inline constexpr size_t kStepPhaseCount = 6;
std::string_view step_phase_name(StepPhase p);  // "data_loading", "forward", ...

// Classifies one slice name; nullopt when the name says nothing (the slice inherits its parent's
// phase). Priority when several rules match: communication > data loading > optimizer >
// backward > forward.
std::optional<StepPhase> classify_step_phase(std::string_view name);

// The TensorBoard profiler plugin's step-time classes for GPU traces: every instant of a step's
// GPU-extended window goes to the first class active at that instant in this order (the plugin's
// EventParser/OverallParser; docs/analysis.md lists the slices of each class and where mlprof
// differs).
enum class GpuStepClass : uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kCommunication,
  kRuntime,
  kDataLoader,
  kCpuOp,
  kOther,
};
inline constexpr size_t kGpuStepClassCount = 8;
std::string_view gpu_step_class_name(GpuStepClass c);  // "kernel", "memcpy", ...

// Step number from "ProfilerStep#12" (12; HTA's "ProfilerStep # 12" too); nullopt when the name is
// not a step marker. The one rule for "this slice is a step" (steps, summary, flame, leaks,
// compare, GPU analyses, ranks).
std::optional<int64_t> step_number(std::string_view name);

// Where a trace's iterations come from (the step model), chosen from what the trace has, in this
// order: a user-named annotation (--step-annotation REGEX), ProfilerStep#N, vLLM's execution
// annotations (execute_<N>_context_<nc>(...)_generation_<ng>(...), the default
// execute_context_<nc>(...)), SGLang's step[MODE bs=.. ...]; with none of these, the TensorBoard
// plugin's rule: one window spanning the CPU ops, extended to the GPU work they launched
// (kTraceSpan).
enum class StepSource : uint8_t { kNone, kProfilerStep, kAnnotation, kVllm, kSglang, kTraceSpan };
std::string_view step_source_name(StepSource s);  // "profiler_step", "annotation", "vllm", ...

// What an engine iteration did, parsed from its annotation; -1 where the annotation does not say.
enum class IterationPhase : uint8_t { kUnknown, kPrefill, kDecode, kMixed };
inline constexpr size_t kIterationPhaseCount = 4;
std::string_view iteration_phase_name(IterationPhase p);  // "unknown", "prefill", "decode", "mixed"
struct ServingIteration {
  IterationPhase phase = IterationPhase::kUnknown;
  std::string mode;         // SGLang's forward mode (DECODE, EXTEND, MIXED, ...); vLLM: empty
  int64_t batch_size = -1;  // requests in the batch
  int64_t num_tokens = -1;  // tokens scheduled (vLLM's N, SGLang's toks=)
  int64_t context_requests = -1, generation_requests = -1;
  int64_t context_tokens = -1, generation_tokens = -1;  // query tokens (sum of sq)
  int64_t context_kv = -1, generation_kv = -1;          // key tokens attended (sum of sk)
};
// vLLM: "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)" (its
// detailed_trace_annotation) and the default "execute_context_2(6144)_generation_3(3)" (requests,
// then their scheduled tokens, per side; num_tokens = their sum); SGLang: "step[DECODE bs=32]",
// "step[EXTEND bs=15 toks=15360]".
std::optional<ServingIteration> parse_vllm_iteration(std::string_view name);
std::optional<ServingIteration> parse_sglang_iteration(std::string_view name);

// The iteration markers of a trace (one source, see StepSource): host-thread slices (not GPU
// streams) in time order, a marker starting inside the previous one left out as a duplicate.
// numbers: N of ProfilerStep#N, else the ordinal. kTraceSpan/kNone: no slices. An invalid
// regex gives source kNone and `error`.
struct StepMarkers {
  StepSource source = StepSource::kNone;
  std::vector<size_t> slices;
  std::vector<int64_t> numbers;
  std::string error;
};
StepMarkers step_markers(const Trace& trace, std::string_view step_annotation = {});

// The steps of a trace as `mlprof steps` counts them without --step-annotation:
// step_markers(trace).slices. Indices into trace.slices.
std::vector<size_t> host_step_slices(const Trace& trace);

// Outlier rule: |duration - median| > kStepOutlierMads * 1.4826 * MAD (a robust 3-sigma; the
// MAD is not inflated by the outliers themselves the way the standard deviation is).
inline constexpr double kStepOutlierMads = 3.0;

struct StepInfo {
  int64_t number = 0;  // N of ProfilerStep#N, else the ordinal
  std::string name;
  // Serving: parsed from the marker, or from an engine annotation inside a ProfilerStep.
  std::optional<ServingIteration> serving;
  bool capture = false;              // a graph capture (Stream*BeginCapture) ran inside it
  bool warmup = false;               // left out of the steady state (see StepsResult)
  int64_t gpu_busy_ns = -1;          // union of GPU work inside the GPU window (GPU traces)
  int64_t begin_ns = 0, dur_ns = 0;  // the host window (ProfilerStep slice)
  std::array<int64_t, kStepPhaseCount> phase_ns{};  // sums to dur_ns
  // GPU traces: the step as the GPU sees it (the TensorBoard plugin's rule, device_step_windows):
  // from the previous step's GPU end (or the host start, whichever is later) to the end of the
  // last GPU work launched inside the host window (or the host end, whichever is later).
  int64_t gpu_begin_ns = 0, gpu_dur_ns = 0;
  uint64_t device_events = 0;   // GPU events launched by runtime calls inside the host window
  bool plugin_dropped = false;  // a tail step the plugin leaves out (it launched too little)
  std::array<int64_t, kGpuStepClassCount> gpu_class_ns{};  // sums to gpu_dur_ns (GPU traces)
  bool outlier = false;
};

// Per iteration phase (steady-state iterations only): distributions of host time, GPU busy
// and batch size.
struct PhaseStats {
  IterationPhase phase = IterationPhase::kUnknown;
  size_t count = 0;
  double host_mean_ns = 0, host_p50_ns = 0, host_p90_ns = 0;
  int64_t host_min_ns = 0, host_max_ns = 0;
  double gpu_busy_mean_ns = -1, gpu_busy_p50_ns = -1;  // -1: no GPU
  double idle_mean_ns = -1;                            // GPU window - GPU busy
  double batch_mean = -1;                              // -1: not known
  int64_t batch_min = -1, batch_max = -1;
  int64_t tokens = 0;  // context + generation query tokens summed (where known)
};

struct StepsResult {
  StepSource source = StepSource::kNone;
  std::string step_annotation;  // the user's regex (source kAnnotation)
  // kTraceSpan: the one window (steps stays empty, so analyses without steps keep their
  // whole-trace behaviour).
  std::optional<StepInfo> span;
  // Steady state: the iterations but warm-up (leading ones, captures skipped, taking over 1.5x
  // their phase's median host time) and graph captures (anywhere).
  size_t steady_first = 0;  // index into steps of the first steady-state iteration
  size_t steady_count = 0;
  size_t warmup_count = 0, capture_count = 0;
  std::vector<PhaseStats> phases;  // phases present, in IterationPhase order
  std::vector<StepInfo> steps;     // in time order
  double mean_ns = 0, std_ns = 0, median_ns = 0, mad_ns = 0;  // std: sample (n - 1)
  int64_t min_ns = 0, max_ns = 0, total_ns = 0;
  std::array<int64_t, kStepPhaseCount> phase_total_ns{};
  bool has_gpu = false;                                          // gpu_* fields filled
  std::array<int64_t, kGpuStepClassCount> gpu_class_total_ns{};  // all steps, GPU windows
  int64_t gpu_total_ns = 0;                                      // sum of gpu_dur_ns
  // The plugin's Overview: the steps it keeps (tail steps that launched nothing, or under 80%
  // of the previous step's GPU events, are dropped) and their class times.
  size_t plugin_steps = 0;
  std::array<int64_t, kGpuStepClassCount> plugin_class_total_ns{};
  int64_t plugin_total_ns = 0;
  bool tb_plugin_classes = false;      // classes computed with StepsOptions::tb_plugin_classes
  std::vector<int64_t> outlier_steps;  // step numbers
};

struct StepsOptions {
  // The TensorBoard plugin's step classes exactly, where mlprof differs on purpose
  // (docs/analysis.md): NCCL kernels count as communication only when a `nccl:*` op launched
  // them, gpu_user_annotation ranges count as CPU op, and GPU work of categories other than
  // kernel/memcpy/memset takes no part.
  bool tb_plugin_classes = false;
  // A regex (ECMAScript, searched in the name) naming the iteration annotation; empty: auto.
  std::string step_annotation;
};

StepsResult analyze_steps(const Trace& trace, const StepsOptions& options = {});

// The TensorBoard plugin's device-side step windows (EventParser._find_device_steps and
// _update_steps_duration): `host` is each step's host window in time order. A runtime call lying
// wholly inside a host window attributes the GPU events it launched (by correlation) to that
// step; the step's window then ends at max(host end, last such GPU end) and starts at
// max(host start, previous step's window end). The first step starts after GPU work launched
// before it that ends before the step's own GPU work. `kept`: the steps the plugin keeps.
struct DeviceStepWindows {
  std::vector<std::pair<int64_t, int64_t>> windows;  // [begin, end) per step
  std::vector<uint64_t> device_events;               // GPU events matched per step
  size_t kept = 0;
  bool uses_gpu = false;  // some step launched GPU work (else windows are the host windows)
};
DeviceStepWindows device_step_windows(const Trace& trace,
                                      const std::vector<std::pair<int64_t, int64_t>>& host);

}  // namespace mlprof
