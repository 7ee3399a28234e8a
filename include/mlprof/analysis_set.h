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

#include "mlprof/analysis_catalog.h"
#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/compile.h"
#include "mlprof/analyze/critical_path.h"
#include "mlprof/analyze/dependency_graph.h"
#include "mlprof/analyze/flame.h"
#include "mlprof/analyze/flops.h"
#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/graphs.h"
#include "mlprof/analyze/heap.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/memory_snapshot.h"
#include "mlprof/analyze/modules.h"
#include "mlprof/analyze/op_groups.h"
#include "mlprof/analyze/op_stats.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/roofline.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/analyze/summary.h"
#include "mlprof/analyze/timeline.h"
#include "mlprof/trace.h"

namespace mlprof {

// Every analysis the stage computes, in the order a full report lists them (one row each in
// mlprof/analysis_catalog.h).
enum class AnalysisId : uint8_t {
#define MLPROF_X(Id, ...) k##Id,
  MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
};
#define MLPROF_X(...) +1
inline constexpr size_t kAnalysisCount = 0 MLPROF_ANALYSES(MLPROF_X);
#undef MLPROF_X

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
  // The same calls grouped by input shape and call stack (the plugin's Operator view), cut to
  // `top` rows like `ops`.
  OpGroups groups;
};

// One options struct for the whole stage: each analysis's own options, defaults shared by every
// consumer (so `mlprof NAME --json` and the report show the same table).
struct AnalysisOptions {
#define MLPROF_X(Id, name, Result, Options, ...) Options name;
  MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
  // Holistic Trace Analysis' event window and time base for every analysis that has the switch.
  void set_hta_compatible(bool on);
};

// An analysis's row of the catalogue (mlprof/analysis_catalog.h): what it reads and where it is
// shown.
struct AnalysisInfo {
  AnalysisId id;
  std::string_view name;          // "summary", "ops", ... (the subcommand and JSON key)
  std::vector<AnalysisId> needs;  // results computed first and passed in
  AnalysisRequires requires_ = AnalysisRequires::kNothing;  // else {"unavailable": why}
  bool report = false;         // a report tab and a /api/profiler/NAME endpoint
  int analyze_json = 0;        // position in `mlprof analyze --json` (0: not there)
  int analyze_text = 0;        // position of its section in `mlprof analyze` (0: none)
  std::string_view title;      // that section's title
  std::string_view csv_table;  // the table `mlprof NAME --csv` writes ("": none)
  int schema_major = 1;        // its JSON's "schema": "mlprof.NAME/<schema_major>"
};
const std::array<AnalysisInfo, kAnalysisCount>& analysis_table();
const AnalysisInfo& analysis_info(AnalysisId id);
std::optional<AnalysisId> analysis_id(std::string_view name);

class AnalysisSet;

// How each analysis is computed from the set (its options, the results it needs): one function
// per row of the catalogue, called only by the AnalysisSet getter (once per set).
namespace analysis_stage {
#define MLPROF_X(Id, name, Result, ...) Result compute_##name(AnalysisSet& set);
MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
}  // namespace analysis_stage

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
#define MLPROF_X(Id, name, Result, ...) const Result& name();
  MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
  // The trace's dependency graph (dependency_graph.h), built on first use for the steps'
  // --step-annotation and kept: the critical path and the bottleneck replay both read it.
  const DependencyGraph& dependency_graph() const;
  // The critical path of another window (serve's ?step=N / ?annotation=NAME): computed on each
  // call from the set's dependency graph, not kept (the caller caches what it sends).
  CriticalPathResult critical_path_for(const CriticalPathOptions& options) const;
  // The GPU and kernel results under Holistic Trace Analysis' definitions (--hta-compatible),
  // beside the set's own (the report's and dashboard's HTA toggle): computed on each call, not
  // kept; empty results when the trace has no GPU streams.
  GpuResult gpu_hta();
  KernelsResult kernels_hta() const;

  // Hands in a heap report computed elsewhere (`mlprof run` streams it from the capture, whose
  // trace keeps only the rows the report points at). Call before heap() is first used.
  void provide_heap(HeapResult heap);

  // Whether `id` has been computed (tests check that dependencies match the table).
  bool computed(AnalysisId id) const;

  // Computes `ids` (and what they need) ahead of use, spreading independent analyses over the
  // machine's cores. Results are the same as computing them one by one.
  void compute(const std::vector<AnalysisId>& ids);

 private:
  std::optional<std::string> content_missing(AnalysisRequires content) const;
  void init();
  template <typename T, typename F>
  const T& get(AnalysisId id, std::optional<T>& slot, F&& compute);

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
#define MLPROF_X(Id, name, Result, ...) friend Result analysis_stage::compute_##name(AnalysisSet&);
  MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X
};

}  // namespace mlprof
