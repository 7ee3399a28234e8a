#include <future>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/compare.h"
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
};

MLPROF_REGISTER_COMMAND(
    "compare", "Compare BASE NEW [MORE...]: per-op/kernel deltas, speedup, significant regressions",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompareArgs>();
      sub.add_option("traces", a->paths, "BASE NEW [MORE...] trace files")
          ->required()
          ->expected(2, -1);
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
      return [a, top]() {
        // Load the traces two at a time (2 cores; each load is itself pipelined).
        std::vector<std::future<std::optional<Trace>>> loads;
        for (const std::string& p : a->paths)
          loads.push_back(std::async(std::launch::async, [p] { return load_or_report(p); }));
        std::vector<Trace> traces;
        bool failed = false;
        for (auto& f : loads) {
          auto t = f.get();
          if (!t)
            failed = true;
          else
            traces.push_back(std::move(*t));
        }
        if (failed) return kExitBadInput;
        CompareOptions o;
        o.alpha = a->alpha;
        o.min_effect_pct = a->min_effect;
        o.min_share_pct = a->min_share;
        o.test = a->test == "welch" ? SignificanceTest::kWelch : SignificanceTest::kMannWhitney;
        // The JSON holds every row unless --top is given; the text shows 40 unless it is.
        o.top = top->count() ? a->top : 0;
        size_t text_top = top->count() ? a->top : kCompareTextTop;
        o.python_with_ops = a->python_with_ops;
        std::vector<const CompareResult*> pairs;
        CompareResult two;
        MultiCompareResult many;
        if (traces.size() == 2) {
          two = compare_traces(traces[0], traces[1], o);
          pairs.push_back(&two);
        } else {
          std::vector<const Trace*> ptrs;
          for (const Trace& t : traces) ptrs.push_back(&t);
          many = compare_many(ptrs, o);
          for (const CompareResult& p : many.pairs) pairs.push_back(&p);
        }
        if (a->json) {
          JsonWriter w(true);
          if (traces.size() == 2)
            write_compare_json(w, two);
          else
            write_multi_compare_json(w, many);
          std::cout << w.str() << "\n";
        } else {
          std::cout << (traces.size() == 2 ? render_compare_text(two, 100, text_top)
                                           : render_multi_compare_text(many, 100, text_top));
        }
        if (a->fail_pct >= 0) {
          for (const CompareResult* p : pairs) {
            if (!p->worst_regression.empty() && p->worst_regression_pct > a->fail_pct) {
              std::string name = p->worst_regression;
              if (name.size() > 80)
                name = name.substr(0, 50) + "..." + name.substr(name.size() - 27);
              std::fprintf(stderr,
                           "mlprof compare: regression: %s takes %.1f%% more time per step "
                           "(limit %.1f%%, p < %.2g)\n",
                           name.c_str(), p->worst_regression_pct, a->fail_pct, a->alpha);
              return kExitRegression;
            }
          }
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
