#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "kernels", "GPU kernels: time per kernel, launch configuration, tensor cores, kernel types",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto text = std::make_shared<TextOptions>();
      auto hta = std::make_shared<bool>(false);
      add_analysis_args(sub, *a);
      sub.add_option("--top", text->rows, "kernels shown in the text table (default 30)");
      sub.add_flag("--hta-compatible", *hta,
                   "Holistic Trace Analysis' event window (drops the last profiler step) and "
                   "microsecond time base");
      return [a, text, hta]() {
        AnalysisOptions o;
        o.set_hta_compatible(*hta);
        return run_analysis_command(*a, AnalysisId::kKernels, o, *text);
      };
    });

}  // namespace
}  // namespace mlprof::cli
