#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "steps",
    "Training steps (ProfilerStep#N): times, outliers, data/forward/backward/optimizer split",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      add_analysis_args(sub, *a);
      return [a]() { return run_analysis_command(*a, AnalysisId::kSteps, {}); };
    });

}  // namespace
}  // namespace mlprof::cli
