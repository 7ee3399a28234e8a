#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "steps",
    "Training steps (ProfilerStep#N): times, outliers, data/forward/backward/optimizer split",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto exact = std::make_shared<bool>(false);
      add_analysis_args(sub, *a);
      sub.add_flag("--tb-plugin-classes", *exact,
                   "GPU step classes exactly as the TensorBoard plugin computes them (NCCL kernels "
                   "are communication only under nccl:* ops, GPU annotations count as CPU op)");
      return [a, exact]() {
        AnalysisOptions o;
        o.steps.tb_plugin_classes = *exact;
        return run_analysis_command(*a, AnalysisId::kSteps, o);
      };
    });

}  // namespace
}  // namespace mlprof::cli
