#include <future>
#include <iostream>
#include <memory>
#include <regex>

#include "cli/baseline_store.h"
#include "cli/command.h"
#include "mlprof/analysis_compare.h"
#include "render/compare_render.h"

namespace mlprof::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> paths;
  bool json = false;
  double fail_pct = -1;
  std::string test = "mwu";
  double alpha = kCompareAlpha;
  double min_effect = kCompareMinEffectPct;
  double min_share = kCompareMinSharePct;
  size_t top = 0;
  bool python_with_ops = false;
  std::string against, store = kDefaultBaselineStore;  // compare --against NAME TRACE
  bool force = false;
  std::string step_annotation;
};

// --fail-on-regression: exit 3 with one line when a pair's worst significant regression adds
// more than the limit to a row's time per step (or to the step time).
int regression_exit(const CompareArgs& a, const std::vector<const CompareResult*>& pairs) {
  if (a.fail_pct < 0) return kExitOk;
  for (const CompareResult* p : pairs) {
    if (!p->worst_regression.empty() && p->worst_regression_pct > a.fail_pct) {
      std::string name = p->worst_regression;
      if (name.size() > 80) name = name.substr(0, 50) + "..." + name.substr(name.size() - 27);
      std::fprintf(stderr,
                   "mlprof compare: regression: %s takes %.1f%% more time per step "
                   "(limit %.1f%%, p < %.2g)\n",
                   name.c_str(), p->worst_regression_pct, a.fail_pct, a.alpha);
      return kExitRegression;
    }
  }
  return kExitOk;
}

// compare --against NAME TRACE: the stored baseline as the base, the comparability check first.
int compare_against(const CompareArgs& a, const CompareOptions& o, size_t text_top) {
  if (a.paths.size() != 1) {
    std::fprintf(stderr, "mlprof compare: --against NAME takes one trace (the new run)\n");
    return kExitBadInput;
  }
  std::optional<Baseline> base = load_baseline_or_report(a.store, a.against);
  if (!base) return kExitBadInput;
  auto set = open_analysis(a.paths[0], {}, 0);
  if (!set) return set.exit_code;
  Baseline run = baseline_of(*set, "", false);
  Comparability c = check_comparable(*base, run);
  std::string reasons;
  for (const std::string& r : c.refusals) reasons += (reasons.empty() ? "" : "; ") + r;
  for (const std::string& w : c.warnings)
    std::fprintf(stderr, "mlprof compare: warning: baseline %s: %s\n", a.against.c_str(),
                 w.c_str());
  if (!c.comparable && !a.force) {
    std::fprintf(stderr,
                 "mlprof compare: not comparable with baseline %s: %s (--force compares anyway)\n",
                 a.against.c_str(), reasons.c_str());
    return kExitNotComparable;
  }
  CompareResult r = compare_analyses(base->summary, run.summary, o);
  r.base.source = "baseline " + base->name + " (" + base->source + ")";
  if (a.json) {
    JsonWriter w(true);
    w.begin_object().field("schema", json_schema_id("compare_baseline", 1));
    w.key("baseline").begin_object().field("name", base->name).field("source", base->source);
    w.field("created_unix_s", base->created_unix_s).field("device", base->device);
    w.field("world_size", static_cast<int64_t>(base->world_size)).end_object();
    w.key("comparability").begin_object().field("comparable", c.comparable).field("score", c.score);
    w.key("refusals").begin_array();
    for (const std::string& s : c.refusals) w.value(s);
    w.end_array().key("warnings").begin_array();
    for (const std::string& s : c.warnings) w.value(s);
    w.end_array().end_object();
    w.key("compare");
    write_compare_json(w, r);
    w.end_object();
    std::cout << w.str() << "\n";
  } else {
    char score[64];
    std::snprintf(score, sizeof score, "%.0f%%", c.score * 100);
    std::cout << "Against baseline " << base->name << " (" << base->source
              << "): " << (c.comparable ? "comparable" : "NOT comparable (--force): " + reasons)
              << ", op-set overlap " << score << "\n\n";
    std::cout << render_compare_text(r, 100, text_top);
  }
  return regression_exit(a, {&r});
}

MLPROF_REGISTER_COMMAND(
    "compare", "Compare BASE NEW [MORE...]: per-op/kernel deltas, speedup, significant regressions",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompareArgs>();
      sub.add_option("traces", a->paths, "BASE NEW [MORE...] trace files (NEW with --against)")
          ->required()
          ->expected(1, -1);
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option(
          "--fail-on-regression", a->fail_pct,
          "exit 3 when a significant regression adds more than PCT percent to a row's time per "
          "step (or to the step time)");
      sub.add_option("--test", a->test, "significance test: mwu (Mann-Whitney U) or welch")
          ->check(CLI::IsMember({"mwu", "welch"}));
      sub.add_option("--alpha", a->alpha, "significance level (default 0.05)");
      sub.add_option("--min-effect", a->min_effect,
                     "smallest mean change in percent called a regression (default 5)");
      sub.add_option("--min-share", a->min_share,
                     "ops under this percent of the span in both traces are not judged (0.5)");
      CLI::Option* top =
          sub.add_option("--top", a->top, "rows per table (0 = all; default: all in --json, 40)");
      sub.add_flag("--python-in-ops", a->python_with_ops,
                   "python_function rows in the host-op table (default: their own table)");
      sub.add_option("--against", a->against,
                     "compare TRACE with stored baseline NAME (mlprof baseline save; exit 4 when "
                     "the runs are not comparable)");
      sub.add_option("--store", a->store, "baseline directory (default .mlprof/baselines)");
      sub.add_flag("--force", a->force, "--against: compare even when the runs are not comparable");
      sub.add_option("--step-annotation", a->step_annotation,
                     "REGEX naming the slice that is one iteration, in both traces (default: "
                     "ProfilerStep#N, else vLLM execute_*, else SGLang step[...])");
      return [a, top]() {
        CompareOptions o;
        o.alpha = a->alpha;
        o.min_effect_pct = a->min_effect;
        o.min_share_pct = a->min_share;
        o.test = a->test == "welch" ? SignificanceTest::kWelch : SignificanceTest::kMannWhitney;
        // The JSON holds every row unless --top is given; the text shows 40 unless it is.
        o.top = top->count() ? a->top : 0;
        size_t text_top = top->count() ? a->top : kCompareTextTop;
        o.python_with_ops = a->python_with_ops;
        o.step_annotation = a->step_annotation;
        if (!o.step_annotation.empty()) {
          try {
            std::regex check(o.step_annotation, std::regex::ECMAScript);
          } catch (const std::regex_error& e) {
            std::fprintf(stderr,
                         "mlprof: --step-annotation '%s': not a valid regular expression (%s)\n",
                         o.step_annotation.c_str(), e.what());
            return kExitBadInput;
          }
        }
        if (!a->against.empty()) return compare_against(*a, o, text_top);
        if (a->paths.size() < 2) {
          std::fprintf(stderr, "mlprof compare: BASE NEW [MORE...] (or --against NAME NEW)\n");
          return kExitBadInput;
        }
        // Load the traces two at a time (2 cores; each load is itself pipelined).
        std::vector<std::future<Result<Trace>>> loads;
        for (const std::string& p : a->paths)
          loads.push_back(std::async(std::launch::async, [p] { return load_or_report(p); }));
        std::vector<Trace> traces;
        StatusCode failed = StatusCode::kOk;  // the first failure's, in argument order
        for (auto& f : loads) {
          Result<Trace> t = f.get();
          if (!t) {
            if (failed == StatusCode::kOk) failed = t.code();
          } else {
            traces.push_back(std::move(t.value()));
          }
        }
        if (failed != StatusCode::kOk) return exit_code_of(failed);
        // Each run through the analysis stage, compared by its one entry.
        std::vector<std::unique_ptr<AnalysisSet>> sets;
        std::vector<const AnalysisSet*> runs;
        for (const Trace& t : traces) {
          sets.push_back(std::make_unique<AnalysisSet>(t));
          runs.push_back(sets.back().get());
        }
        std::vector<const CompareResult*> pairs;
        CompareResult two;
        MultiCompareResult many;
        if (traces.size() == 2) {
          two = compare_analyses(*runs[0], *runs[1], o);
          pairs.push_back(&two);
        } else {
          many = compare_analyses(runs, o);
          for (const CompareResult& p : many.pairs) pairs.push_back(&p);
        }
        if (a->json) {
          JsonWriter w(true);
          w.lead_next_object("schema",
                             json_schema_id(traces.size() == 2 ? "compare" : "compare_multi", 1));
          if (traces.size() == 2)
            write_compare_json(w, two);
          else
            write_multi_compare_json(w, many);
          std::cout << w.str() << "\n";
        } else {
          std::cout << (traces.size() == 2 ? render_compare_text(two, 100, text_top)
                                           : render_multi_compare_text(many, 100, text_top));
        }
        return regression_exit(*a, pairs);
      };
    });

}  // namespace
}  // namespace mlprof::cli
