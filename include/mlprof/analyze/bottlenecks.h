// `mlprof bottlenecks`: rules over the other analyses' results that each name a problem, the
// numbers that triggered it, the ops involved, what to change, and an estimate of the time that
// change could save. Findings are ranked by that estimate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/dependency_graph.h"
#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/graphs.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/roofline.h"
#include "mlprof/analyze/step_replay.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

// ---- thresholds (each says where it comes from) ----------------------------------------------
// Hotspots: an op whose self time is at or above the 95th percentile of per-op self times and
// at least 5% of the step (or span) time. The percentile rule is what the bottleneck-analyzer
// seeds describe; the 5% floor keeps flat profiles (no op dominates) from listing noise.
inline constexpr double kHotspotPercentile = 95.0;
inline constexpr double kHotspotMinSharePct = 5.0;
// If a hotspot became 2x faster, half its self time would be saved: the estimate we print.
inline constexpr double kHotspotSavingsFraction = 0.5;
// TensorBoard profiler plugin: "data loading over 5% of step time" (FIELD_NOTES.md).
inline constexpr double kDataLoadingMinPct = 5.0;
// TensorBoard plugin: GPU utilization under 50% suggests a larger batch; we attribute the idle
// time to launch overhead when host-wait idle (HTA's definition) is most of it, or when most
// kernels are tiny.
inline constexpr double kGpuIdleMinPct = 50.0;
inline constexpr double kHostWaitMinShareOfIdle = 0.5;
// A kernel under 10 us is shorter than a typical launch path (cudaLaunchKernel ~5-10 us of CPU
// time in these traces' launch statistics), so such kernels leave the GPU waiting on the host.
inline constexpr int64_t kTinyKernelNs = 10'000;
inline constexpr double kTinyKernelMinShare = 0.5;  // of kernel launches
inline constexpr double kTinyKernelMinIdlePct = 10.0;
// Host time blocked in synchronizing calls: over 5% of the steps is worth removing (ours: no
// published rule; a sync per step of a few percent is normal for loss logging).
inline constexpr double kSyncStallMinPct = 5.0;
// Pageable host-to-device copies: any that add up to 1% of the time. Priced at the host link's
// pinned bandwidth (bottlenecks.cpp, pinned_copy_gbs); where that is unknown pinned copies are
// taken as about twice as fast (NVIDIA, "How to Optimize Data Transfers in CUDA C/C++").
inline constexpr double kPageableMinPct = 1.0;
inline constexpr double kPageableSavingsFraction = 0.5;
// TensorBoard plugin: compute capability >= 7.0, tensor-core-eligible ops present, and (we relax
// "no tensor-core kernels" to) under 10% of computation-kernel time on tensor cores.
inline constexpr double kTensorCoreMaxShare = 0.10;
inline constexpr int kTensorCoreMinComputeMajor = 7;
// Moving fp32 GEMMs to TF32/bf16 tensor cores: on a device without peaks in the table we claim a
// conservative 2x on GEMM/conv kernel time (A100's peak rises 8x, 19.5 -> 156 TFLOP/s).
inline constexpr double kTensorCoreSavingsFraction = 0.5;
// Where the device's peaks are known the speedup is their ratio (bottlenecks.cpp,
// tensor_core_speedup), at most this. The table's ratios are 7.4-8x on NVIDIA datacenter GPUs
// (H100 7.39x, A100 8.0x) but 16x on MI350X/MI355X, and a datasheet ratio is an upper bound that
// small GEMMs do not reach.
inline constexpr double kTensorCoreMaxSpeedup = 8.0;
// Kernels below their roofline (roofline.h): a family's kernels are a finding when bringing
// them to kRooflineTargetFraction of their roofline (a tuned cuBLAS GEMM or a bandwidth-bound
// copy reaches 80-90% of peak; 100% is not attainable) frees >= kRooflineMinPct of the time.
inline constexpr double kRooflineTargetFraction = 0.8;
inline constexpr double kRooflineMinPct = 2.0;
// TensorBoard plugin: communication over 10% of step time; HTA's overlap metric: under 50% of
// communication overlapped with computation means most of it is exposed.
inline constexpr double kCommMinPct = 10.0;
inline constexpr double kCommOverlapMinPct = 50.0;
// Ranks: max/mean step time over 1.10 (the ranks analysis flags stragglers at 5% over median).
inline constexpr double kRankImbalanceMax = 1.10;
// Stragglers (the ranks analysis' rule: repeatedly last at collectives, or step time 5% over the
// median): one finding each for the few that cost the job most; the rest are in `ranks`.
inline constexpr size_t kStragglerFindingsMax = 3;
// Fragmentation: reserved-but-unallocated over 30% of reserved and at least 256 MiB (PyTorch's
// allocator docs suggest expandable_segments when reserved far exceeds allocated).
inline constexpr double kFragmentationMin = 0.30;
inline constexpr int64_t kFragmentationMinBytes = 256ll << 20;
// TensorBoard plugin: peak memory over 90% of the device.
inline constexpr double kMemoryPressureMin = 0.90;

enum class Severity { kHigh, kMedium, kLow };
std::string_view severity_name(Severity s);  // "high", "medium", "low"

struct Evidence {
  std::string name;  // "data_loading_pct"
  double value = 0;
  std::string unit;  // "ns", "bytes", "%", "count", "ratio", "bytes/step", ""
};

struct Finding {
  std::string kind;  // "hotspot", "data_loading", "gpu_launch_overhead", ...
  Severity severity = Severity::kLow;
  std::string title;  // one line
  std::vector<Evidence> evidence;
  std::string rule;  // the threshold that fired, in words
  std::vector<std::string> ops;
  std::string recommendation;
  // Why the recommendation applies to this trace: the device, the op's kind, the numbers that
  // chose this advice over another (advice.cpp).
  std::string why;
  // What applying this finding's change saves over the whole trace (steps' time, else span),
  // exclusive of the findings ranked above it: the replay of the step graph with this change
  // added to theirs (priced_by "replay"), so the savings of all findings add up to at most the
  // step. Findings the replay cannot price keep an estimate capped by what is left.
  int64_t est_savings_ns = 0;
  double est_savings_pct = 0;   // of basis_ns
  std::string priced_by;        // "replay", "estimate" (ranks, memory), "" (no saving claimed)
  int64_t saving_alone_ns = 0;  // the replay with this change alone
  // Per-step spread of the saving alone (the replay's steps): min, median, max.
  int64_t step_saving_min_ns = 0, step_saving_median_ns = 0, step_saving_max_ns = 0;
  std::string replay_note;  // why the replay's saving differs from the rule's measure, if it does
};

struct BottleneckResult {
  int64_t basis_ns = 0;  // steps' total time, else the trace span
  std::string basis;     // "steps", "window" (replayed, no iterations) or "span" (not replayed)
  std::vector<Finding> findings;  // by est_savings_ns descending, then severity
  // The replay of the step graph (step_replay.h): the recorded step time it reproduces, and
  // one more replay with every priced finding's change applied together.
  bool replayed = false;
  int64_t replay_step_ns = 0;
  uint64_t replay_steps = 0;
  // Where the replayed windows come from (the step model): ProfilerStep#N, vLLM/SGLang
  // iterations, --step-annotation, or kTraceSpan (one window on the step thread).
  StepSource replay_window = StepSource::kNone;
  int64_t combined_savings_ns = 0;
  double combined_savings_pct = 0;  // of basis_ns
  uint64_t combined_findings = 0;
};

// Results the rules read; null members are computed on demand (GPU ones only with GPU tracks).
struct BottleneckInputs {
  const StepsResult* steps = nullptr;
  const MemoryResult* memory = nullptr;
  const LeakResult* leaks = nullptr;
  const GpuResult* gpu = nullptr;
  const KernelsResult* kernels = nullptr;
  const RanksResult* ranks = nullptr;  // only for a directory of ranks
  // Kernels below their roofline (GPU traces with known peaks); computed here when null.
  const RooflineResult* roofline = nullptr;
  const StepModel* model = nullptr;  // the step graph; else the graph's replay, else built here
  // The trace's dependency graph (its replay is built on first use, only when a finding needs
  // pricing); null: none.
  const DependencyGraph* graph = nullptr;
  // Graph captures and replays (captured batch sizes from execution_details.json, captures made
  // in this trace); null: none read.
  const GraphsResult* graphs = nullptr;
};

BottleneckResult find_bottlenecks(const Trace& trace, const BottleneckInputs& inputs = {});

}  // namespace mlprof
