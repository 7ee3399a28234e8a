#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "modules",
    "nn.Module tree (with_stack/with_modules traces): per layer calls, host and GPU time, "
    "FLOPs, share of the step; slowest, most variable and shared layers",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      auto text = std::make_shared<TextOptions>();
      add_analysis_args(sub, *a);
      sub.add_option("--top", o->modules.top, "rows in the slowest / most variable / shared lists");
      sub.add_option("--depth", text->depth, "tree levels printed");
      return [a, o, text]() { return run_analysis_command(*a, AnalysisId::kModules, *o, *text); };
    });

}  // namespace
}  // namespace mlprof::cli
