// `mlprof compare BASE NEW [MORE...]`: per-op and per-kernel totals and means side by side,
// deltas and speedups, and a significance test on the per-call durations so that noise is not
// called a regression; overall speedup, step-time and peak-memory differences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

// A row is a regression (or an improvement) only when all hold:
//  - the two-sided test on per-call durations gives p < kCompareAlpha (the usual 5% level);
//  - the mean per call moved by at least kCompareMinEffectPct: with thousands of calls even a
//    1% shift is "significant", and a shift that small is rarely worth a CI failure (a
//    conventional minimum effect size for timing gates; tune with --min-effect);
//  - the op matters: at least kCompareMinSharePct of either trace's span.
inline constexpr double kCompareAlpha = 0.05;
inline constexpr double kCompareMinEffectPct = 5.0;
inline constexpr double kCompareMinSharePct = 0.5;

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
  DiffVerdict verdict = DiffVerdict::kUnchanged;
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
  double worst_regression_pct = 0;  // largest mean increase among regressions (and steps)
  std::string worst_regression;     // its name ("(step time)" for steps)
};

CompareResult compare_traces(const Trace& base, const Trace& next,
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
