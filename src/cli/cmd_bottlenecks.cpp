#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "bottlenecks",
    "Ranked findings with evidence and recommendations (a directory: the slowest rank + balance)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      add_analysis_args(sub, *a);
      return [a]() { return run_analysis_command(*a, AnalysisId::kBottlenecks, {}); };
    });

}  // namespace
}  // namespace mlprof::cli
