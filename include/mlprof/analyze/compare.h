// `mlprof compare BASE NEW [MORE...]`: per-op and per-kernel totals and means side by side,
// deltas and speedups, and a significance test on the per-call durations so that noise is not
// called a regression; overall speedup, step-time and peak-memory differences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

// A row's verdict is about its contribution to the step time: its time per step (calls per
// step x mean per call) and which of the two moved. A row is a regression (or an improvement)
// only when all hold:
//  - the op matters: at least kCompareMinSharePct of either trace's span;
//  - its time per step moved by at least kCompareMinEffectPct: with thousands of calls even a
//    1% shift is "significant", and a shift that small is rarely worth a CI failure (a
//    conventional minimum effect size for timing gates; tune with --min-effect);
//  - a cause of that move is significant and itself at least kCompareMinEffectPct: the calls
//    per step (Poisson rate test on the counts, p < kCompareAlpha) or the mean per call
//    (two-sided test on the per-call durations, p < kCompareAlpha), moving the same way.
// So a row whose calls multiplied is a regression at an unchanged (or lower) mean per call.
inline constexpr double kCompareAlpha = 0.05;
inline constexpr double kCompareMinEffectPct = 5.0;
inline constexpr double kCompareMinSharePct = 0.5;

inline constexpr size_t kCompareCauses = 15;
// Critical paths measured per trace (steps evenly spread over the trace) to attribute the change.
inline constexpr size_t kComparePathSteps = 8;

enum class SignificanceTest { kMannWhitney, kWelch };

struct CompareOptions {
  double alpha = kCompareAlpha;
  double min_effect_pct = kCompareMinEffectPct;
  double min_share_pct = kCompareMinSharePct;
  SignificanceTest test = SignificanceTest::kMannWhitney;
  size_t top = 0;  // rows kept per table (by |total delta|); 0 = all (the text shows 40)
  // python_function rows (the Python tracer's frames) in their own table: they nest around the
  // ops they call, so mixing them into the op table counts the same time twice.
  bool python_with_ops = false;
  // Attribute the step change to the rows on each step's critical path (CompareResult::causes).
  bool attribute = true;
  // --step-annotation: the regex naming one iteration ("" ProfilerStep#N, else the engine's).
  std::string step_annotation;
};

// The key rows are matched by across traces: the name with its run-specific tokens replaced,
// so the same function matches though the process differs (see docs/analysis.md, compare):
//  - "0x" + at least 6 hex digits (an object or code address: "<built-in method relu of type
//    object at 0x7f1f3132d1e0>") -> "0x*";
//  - Jupyter's per-kernel names: "ipykernel_<pid>" -> "ipykernel_*", "<ipython-input-<n>-"
//    (n: the cell's execution count) -> "<ipython-input-*-".
// Line numbers ("model.py(42): forward") are kept: two functions of one name in one file
// differ only by them.
std::string compare_match_key(std::string_view name);

enum class DiffVerdict { kUnchanged, kRegression, kImprovement, kNoise, kAdded, kRemoved, kMinor };
std::string_view diff_verdict_name(DiffVerdict v);  // "unchanged", "regression", ...

struct OpDiff {
  std::string name;  // as the base spells it (the new trace's when only there)
  std::string category;
  uint64_t base_count = 0, new_count = 0;
  int64_t base_total_ns = 0, new_total_ns = 0;
  double base_mean_ns = 0, new_mean_ns = 0;
  int64_t delta_total_ns = 0;  // new - base
  double delta_mean_pct = 0;   // (new mean - base mean) / base mean * 100
  double speedup = 0;          // base mean / new mean (> 1: faster)
  double p_value = 1;          // two-sided, on per-call durations
  bool significant = false;    // p < alpha
  // Per step (CompareResult::per_step_basis): count / steps and total / steps of each side.
  double base_calls_per_step = 0, new_calls_per_step = 0;
  double base_per_step_ns = 0, new_per_step_ns = 0;
  double delta_per_step_ns = 0;   // new - base: the row's contribution to the step change
  double delta_per_step_pct = 0;  // delta_per_step_ns / base_per_step_ns * 100
  // delta_per_step_ns = calls_effect_ns + mean_effect_ns exactly:
  double calls_effect_ns = 0;   // (new calls - base calls) per step x base mean
  double mean_effect_ns = 0;    // new calls per step x (new mean - base mean)
  double calls_change_pct = 0;  // calls per step, new vs base
  double calls_p_value = 1;     // Poisson rate test on the counts (stats::poisson_rate_test)
  bool calls_significant = false;
  std::string cause;  // of a regression / improvement: "calls", "mean" or "calls+mean"
  DiffVerdict verdict = DiffVerdict::kUnchanged;
  // A wait (a host sync call, a cuda_sync event, aten::item's device-to-host read): its time is
  // the GPU work it waits for, so its change is a symptom; CompareResult::symptoms links it.
  bool wait = false;
};

// Where the step-time change comes from: each row's time on the step's critical path (HTA's
// dependency graph, `mlprof critical-path`), per step, base vs new. The path's edges are
// exclusive, so the deltas add up to the change of the path's length.
struct CompareCause {
  std::string name;                // a row's name, or "(launch delay)" / "(kernel-kernel gap)"
  std::string category;            // the row's category ("" for the delays)
  std::string kind;                // "gpu", "communication", "host", "launch delay", "kernel gap"
  double base_ns = 0, new_ns = 0;  // time on the critical path per step
  double delta_ns = 0;             // new - base
  double share_pct = 0;            // of the step mean's change (0 when it did not change)
  bool wait = false;               // a wait on the path: a symptom, not a cause
};

// A wait row whose time moved, and the GPU rows that moved the same way (what it waits for).
struct CompareSymptom {
  std::string name, category;
  double delta_per_step_ns = 0;
  std::vector<std::string> waits_for;  // kernels table rows, by |delta per step|, at most 3
};

struct TraceTotals {
  std::string source;
  int64_t span_ns = 0;
  uint64_t steps = 0;
  double step_mean_ns = 0;
  double step_median_ns = 0;
  int64_t peak_memory_bytes = -1;  // highest allocated total over devices, -1 without events
  int64_t gpu_kernel_ns = 0;       // sum of GPU-track slice durations
};

struct CompareResult {
  TraceTotals base, next;
  double overall_speedup = 0;     // base / new step mean (span when a trace has no steps)
  std::string speedup_basis;      // "step mean" or "span"
  double step_delta_pct = 0;      // new vs base step mean
  double step_p_value = 1;        // test on the step durations
  bool step_regression = false;   // significant slowdown of at least min_effect_pct
  int64_t peak_memory_delta = 0;  // new - base (0 when either lacks memory events)
  std::vector<OpDiff> ops;        // host ops, by |delta total| descending, cut to top
  std::vector<OpDiff> python;     // python_function rows (empty with python_with_ops), same order
  std::vector<OpDiff> kernels;    // GPU kernels/memcpy/memset, same order
  uint64_t regressions = 0, improvements = 0, noise = 0;  // over all rows, before the cut
  // "step" when both traces have steps (rows are per step), else "trace" (one per trace).
  std::string per_step_basis;
  // Largest increase of time per step among regressions (and of the step mean): for a row
  // with the same calls per step it is its mean-per-call increase.
  double worst_regression_pct = 0;
  std::string worst_regression;  // its name ("(step time)" for steps)
  // The step change attributed (empty attribution_missing) or why not.
  std::string attribution_missing;
  size_t base_path_steps = 0, new_path_steps = 0;  // steps whose critical path was measured
  double base_path_ns = 0, new_path_ns = 0;        // mean critical path length per step
  std::vector<CompareCause> causes;                // by |delta| descending, at most kCompareCauses
  std::vector<CompareSymptom> symptoms;            // by |delta per step| descending
};

CompareResult compare_traces(const Trace& base, const Trace& next,
                             const CompareOptions& options = {});

// One trace reduced to what a comparison reads: compare_traces compares two of these, and a
// baseline (`mlprof baseline save`, analyze/baseline.h) stores one, so `compare --against`
// needs no trace.
struct CompareGroup {  // one (name, category) row of the host ops or the GPU kernels
  std::string name, category;
  uint64_t count = 0;
  int64_t total_ns = 0;
  // The calls' durations (ns) for the significance test: every call, or (a baseline) at most
  // kBaselineSamples evenly spaced order statistics of them; count and total_ns stay exact.
  std::vector<double> durations;
};
struct ComparePathRow {  // a row's mean time per step on the critical path
  std::string name, category, kind;
  double ns = 0;
};
struct CompareSummary {
  TraceTotals totals;
  std::vector<double> step_durations;  // ns, one per step
  std::vector<CompareGroup> host, gpu;
  // The critical paths of up to kComparePathSteps steps (attribution of the step change).
  bool path_measured = false;  // false: not asked for (CompareOptions::attribute)
  std::string path_missing;    // why there is none
  size_t path_windows = 0;
  double path_ns = 0;  // mean length per step
  std::vector<ComparePathRow> path_rows;
};
CompareSummary compare_summary(const Trace& trace, bool attribute = true,
                               const std::string& step_annotation = {});
CompareResult compare_summaries(const CompareSummary& base, const CompareSummary& next,
                                const CompareOptions& options = {});

// N traces (e.g. one per backend): totals side by side, and each trace against the first.
struct MultiRow {
  std::string name;  // as the first trace holding it spells it; matched by compare_match_key
  std::string category;
  std::vector<uint64_t> count;
  std::vector<int64_t> total_ns;
  std::vector<double> mean_ns;
};
struct MultiCompareResult {
  std::vector<std::string> sources;
  std::vector<MultiRow> rows;        // by the first trace's total, descending, cut to top
  std::vector<CompareResult> pairs;  // trace i (i >= 1) against trace 0
};
MultiCompareResult compare_many(const std::vector<const Trace*>& traces,
                                const CompareOptions& options = {});

}  // namespace mlprof
