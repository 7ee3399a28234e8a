#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "flops", "FLOPs of matmul/linear/conv/attention ops from recorded shapes, TFLOP/s and MFU",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      add_analysis_args(sub, *a);
      sub.add_option("--peak-tflops", o->flops.peak_tflops,
                     "device peak TFLOP/s for MFU (default: table)");
      sub.add_option("--top", o->flops.top, "ops shown");
      return [a, o]() { return run_analysis_command(*a, AnalysisId::kFlops, *o); };
    });

}  // namespace
}  // namespace mlprof::cli
