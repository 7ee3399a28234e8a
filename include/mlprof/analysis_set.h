// The one analysis stage: every consumer (each `mlprof NAME`, `analyze`, `report`, `serve`,
// `run`, `demo`, the Python module) asks an AnalysisSet for results instead of calling the
// analyses itself. Each result is computed once, on first use, with the dependencies between
// analyses declared in one table (analysis_set.cpp), so every consumer sees the same numbers.
//
//   Trace trace = load_trace("t.json.gz").value();
//   AnalysisSet set(trace);
//   const BottleneckResult& b = set.bottlenecks();  // computes steps, memory, leaks, gpu... once
//
// A rank set (a directory of per-rank traces) analyzes one rank in depth (the straggler that
// costs the job most, else the slowest rank) and gives the cross-rank results to the analyses
// that read them (bottlenecks).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/compile.h"
#include "mlprof/analyze/critical_path.h"
#include "mlprof/analyze/flame.h"
#include "mlprof/analyze/flops.h"
#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/heap.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/memory_snapshot.h"
#include "mlprof/analyze/modules.h"
#include "mlprof/analyze/op_stats.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/analyze/summary.h"
#include "mlprof/analyze/timeline.h"
#include "mlprof/trace.h"

namespace mlprof {

// Every analysis the stage computes, in the order a full report lists them.
enum class AnalysisId : uint8_t {
  kSummary,
  kOps,
  kSteps,
  kKernels,
  kGpu,
  kMemory,
  kLeaks,
  kHeap,
  kBottlenecks,
  kFlops,
  kFlame,
  kTimeline,
  kModules,
  kCriticalPath,
  kRanks,
  kCompile,
  kMemorySnapshot,
};
inline constexpr size_t kAnalysisCount = 17;

// The per-operation table (`mlprof ops`): every op (or the top `top`) in `sort` order.
struct OpsOptions {
  OpStatsOptions stats;
  OpSort sort = OpSort::kTotal;
  size_t top = 0;  // rows kept (0 = all)
};
struct OpsResult {
  uint64_t rows = 0;         // before `top`
  bool device_time = false;  // rows carry device_self_ns / device_total_ns (GPU traces)
  std::vector<OpStats> ops;
};

// One options struct for the whole stage: each analysis's own options, defaults shared by every
// consumer (so `mlprof NAME --json` and the report show the same table).
struct AnalysisOptions {
  SummaryOptions summary;
  OpsOptions ops;
  StepsOptions steps;
  KernelsOptions kernels;
  GpuOptions gpu;
  MemoryOptions memory;
  LeakOptions leaks;
  HeapOptions heap;
  FlopsOptions flops;
  FlameOptions flame;
  TimelineOptions timeline;
  ModulesOptions modules;
  CriticalPathOptions critical_path;
  RanksOptions ranks;
  CompileOptions compile;
  SnapshotOptions memory_snapshot;
  // Holistic Trace Analysis' event window and time base for every analysis that has the switch.
  void set_hta_compatible(bool on);
};

// What an analysis reads: the inputs a consumer must have and the results it is built on.
struct AnalysisInfo {
  AnalysisId id;
  std::string_view name;          // "summary", "ops", ... (the subcommand and JSON key)
  std::vector<AnalysisId> needs;  // results computed first and passed in
  bool needs_gpu = false;         // unavailable on a trace without GPU streams
  bool needs_ranks = false;       // unavailable on a single trace
  // Unavailable unless the trace has this content (looked up once per set): compiled regions
  // (or torch.compile logs), a memory snapshot, nn.Module events, the events and default window
  // of a critical path.
  enum class Content : uint8_t {
    kAny,
    kCompiledRegions,
    kMemorySnapshot,
    kModuleEvents,
    kCriticalPathWindow
  };
  Content needs_content = Content::kAny;
};
const std::array<AnalysisInfo, kAnalysisCount>& analysis_table();
const AnalysisInfo& analysis_info(AnalysisId id);
std::optional<AnalysisId> analysis_id(std::string_view name);

class AnalysisSet {
 public:
  // One trace, borrowed (it must outlive the set) or owned.
  explicit AnalysisSet(const Trace& trace, AnalysisOptions options = {});
  explicit AnalysisSet(Trace&& trace, AnalysisOptions options = {});
  // Per-rank traces of one job; the worst straggler (else the slowest rank) is the one analyzed in
  // depth. `errors` are the files that could not be loaded ("path: why"), kept in the ranks
  // result.
  explicit AnalysisSet(std::vector<Trace>&& ranks, AnalysisOptions options = {},
                       std::vector<std::string> errors = {});
  explicit AnalysisSet(const std::vector<const Trace*>& ranks, AnalysisOptions options = {},
                       std::vector<std::string> errors = {});
  // A rank set already reduced to per-rank summaries (reduce_rank_files: one trace per worker in
  // memory at a time). The cross-rank results come from the summaries; `load` reloads the one
  // rank analyzed in depth (the worst straggler, else the slowest) the first time trace() is asked
  // for. The summaries must have been made with options.ranks.
  explicit AnalysisSet(std::vector<RankSummary> summaries, RankLoader load,
                       AnalysisOptions options = {}, std::vector<std::string> errors = {});
  ~AnalysisSet();
  AnalysisSet(const AnalysisSet&) = delete;
  AnalysisSet& operator=(const AnalysisSet&) = delete;

  const AnalysisOptions& options() const { return options_; }
  // The trace analyzed in depth (for a summarized rank set: loaded on first use; an empty trace
  // whose meta.source names the file if it cannot be reloaded, see focus_error()).
  const Trace& trace() const;
  const std::string& focus_error() const { return focus_error_; }
  // Why a rank set's trace() is that rank: "the straggler" (the one that costs the job most) or
  // "the slowest rank" (largest step total, else GPU span); empty for one trace.
  const std::string& focus_reason() const { return focus_reason_; }
  bool is_rank_set() const { return rank_set_; }
  // The loaded rank traces (empty for a set made from summaries).
  const std::vector<const Trace*>& rank_traces() const { return ranks_; }
  bool has_gpu() const { return has_gpu_; }

  // Why `id` cannot be computed for this input (no GPU streams, one trace for ranks), or nullopt.
  std::optional<std::string> unavailable(AnalysisId id) const;

  // Results, computed on first use (thread-safe: concurrent callers wait for one computation).
  // GPU analyses of a trace without GPU streams and `ranks` of one trace return empty results;
  // check unavailable() first where that matters.
  const SummaryResult& summary();
  const OpsResult& ops();
  const StepsResult& steps();
  const KernelsResult& kernels();
  const GpuResult& gpu();
  const MemoryResult& memory();
  const LeakResult& leaks();
  const HeapResult& heap();
  const BottleneckResult& bottlenecks();
  const FlopsResult& flops();
  const FlameGraph& flame();
  const TimelineResult& timeline();
  const ModulesResult& modules();
  const CriticalPathResult& critical_path();
  // The critical path of another window (serve's ?step=N / ?annotation=NAME): computed on each
  // call, not kept (the caller caches what it sends).
  CriticalPathResult critical_path_for(const CriticalPathOptions& options) const;
  const RanksResult& ranks();
  // torch.compile's compiled regions in a Kineto trace (`mlprof compile TRACE`).
  const CompileResult& compile();
  // The CUDA allocator's own view when the trace was loaded from a memory snapshot.
  const SnapshotResult& memory_snapshot();

  // Hands in a heap report computed elsewhere (`mlprof run` streams it from the capture, whose
  // trace keeps only the rows the report points at). Call before heap() is first used.
  void provide_heap(HeapResult heap);

  // Whether `id` has been computed (tests check that dependencies match the table).
  bool computed(AnalysisId id) const;

  // Computes `ids` (and what they need) ahead of use, spreading independent analyses over the
  // machine's cores. Results are the same as computing them one by one.
  void compute(const std::vector<AnalysisId>& ids);

 private:
  std::optional<std::string> content_missing(AnalysisInfo::Content content) const;
  void init();
  template <typename T, typename F>
  const T& get(AnalysisId id, F&& compute);

  AnalysisOptions options_;
  std::vector<Trace> owned_;
  std::vector<const Trace*> ranks_;
  std::vector<RankSummary> summaries_;  // released once the ranks result is computed
  RankLoader load_focus_;
  std::string focus_source_;
  std::string focus_reason_;
  mutable std::once_flag focus_once_;
  mutable std::optional<Trace> focus_loaded_;
  mutable std::string focus_error_;
  mutable const Trace* focus_ = nullptr;
  bool rank_set_ = false;
  bool has_gpu_ = false;
  std::vector<std::string> rank_errors_;
  struct Slots;
  std::unique_ptr<Slots> slots_;
};

}  // namespace mlprof
