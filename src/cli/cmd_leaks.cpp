#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "leaks",
    "Memory growth across steps (Theil-Sen slope, Mann-Kendall test) and the ops that keep it",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      add_analysis_args(sub, *a);
      sub.add_option("--alpha", o->leaks.alpha,
                     "significance level of the trend test (default 0.05)");
      sub.add_option("--min-bytes-per-step", o->leaks.min_bytes_per_step,
                     "smallest growth per step reported as a leak (default 1024)");
      return [a, o]() { return run_analysis_command(*a, AnalysisId::kLeaks, *o); };
    });

}  // namespace
}  // namespace mlprof::cli
