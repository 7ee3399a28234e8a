#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "gpu",
    "GPU time per device: compute/communication/memcpy/idle, idle causes, queue length, "
    "launch overhead, overlap, memcpy bandwidth",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto hta = std::make_shared<bool>(false);
      auto delay_us = std::make_shared<double>(30);
      add_analysis_args(sub, *a);
      sub.add_flag("--hta-compatible", *hta,
                   "Holistic Trace Analysis' event window (drops the last profiler step) and "
                   "microsecond time base, for numbers comparable with HTA");
      sub.add_option("--kernel-delay-us", *delay_us,
                     "gaps shorter than this are 'kernel wait' (HTA consecutive_kernel_delay)");
      return [a, hta, delay_us]() {
        AnalysisOptions o;
        o.set_hta_compatible(*hta);
        o.gpu.consecutive_kernel_delay_ns = static_cast<int64_t>(*delay_us * 1000);
        return run_analysis_command(*a, AnalysisId::kGpu, o);
      };
    });

}  // namespace
}  // namespace mlprof::cli
