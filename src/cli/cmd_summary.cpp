#include "cli/command.h"

namespace mlprof::cli {
namespace {

OpSort parse_sort(const std::string& s) {
  return s == "self"    ? OpSort::kSelf
         : s == "mean"  ? OpSort::kMean
         : s == "count" ? OpSort::kCount
                        : OpSort::kTotal;
}

MLPROF_REGISTER_COMMAND("summary", "Overview of a trace: span, events, threads, steps, top ops",
                        [](CLI::App& sub) -> std::function<int()> {
                          auto a = std::make_shared<AnalysisArgs>();
                          auto o = std::make_shared<AnalysisOptions>();
                          auto sort = std::make_shared<std::string>("total");
                          add_analysis_args(sub, *a);
                          sub.add_option("--top", o->summary.top, "number of operations to show");
                          sub.add_option("--sort", *sort, "sort by total|self|mean|count")
                              ->check(CLI::IsMember({"total", "self", "mean", "count"}));
                          sub.add_option("--category", o->summary.category, "only this category");
                          return [a, o, sort]() {
                            o->summary.sort = parse_sort(*sort);
                            return run_analysis_command(*a, AnalysisId::kSummary, *o);
                          };
                        });

}  // namespace
}  // namespace mlprof::cli
