#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/summary.h"
#include "mlprof/render/summary_render.h"

namespace mlprof::cli {
namespace {

struct SummaryArgs {
  std::string path;
  size_t top = 20;
  std::string sort = "total";
  std::string category;
  bool json = false;
};

MLPROF_REGISTER_COMMAND("summary", "Overview of a trace: span, events, threads, steps, top ops",
                        [](CLI::App& sub) -> std::function<int()> {
                          auto a = std::make_shared<SummaryArgs>();
                          sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")
                              ->required();
                          sub.add_option("--top", a->top, "number of operations to show");
                          sub.add_option("--sort", a->sort, "sort by total|self|mean|count")
                              ->check(CLI::IsMember({"total", "self", "mean", "count"}));
                          sub.add_option("--category", a->category, "only this category");
                          sub.add_flag("--json", a->json, "machine-readable output");
                          return [a]() {
                            auto trace = load_or_report(a->path);
                            if (!trace) return kExitBadInput;
                            SummaryOptions o;
                            o.top = a->top;
                            o.category = a->category;
                            o.sort = a->sort == "self"    ? OpSort::kSelf
                                     : a->sort == "mean"  ? OpSort::kMean
                                     : a->sort == "count" ? OpSort::kCount
                                                          : OpSort::kTotal;
                            SummaryResult r = summarize(*trace, o);
                            if (a->json) {
                              JsonWriter w(true);
                              write_summary_json(w, r);
                              std::cout << w.str() << "\n";
                            } else {
                              std::cout << render_summary_text(r);
                            }
                            return kExitOk;
                          };
                        });

}  // namespace
}  // namespace mlprof::cli
