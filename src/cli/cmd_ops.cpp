// `mlprof ops PATH`: the per-operation table. --json lists every op unless --top is given; the
// text shows the first 50 rows by default.
#include <cstdint>

#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "ops", "Per-operation table: calls, total, self, mean, percentiles, share of the span",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      auto sort = std::make_shared<std::string>("total");
      auto host_only = std::make_shared<bool>(false);
      add_analysis_args(sub, *a);
      auto* top =
          sub.add_option("--top", o->ops.top, "rows kept (default: all in --json, 50 in the text)");
      sub.add_option("--sort", *sort,
                     "sort by total|self|mean|count|device-self|device-total (device: GPU time "
                     "the op launched, GPU traces)")
          ->check(CLI::IsMember({"total", "self", "mean", "count", "device-self", "device-total"}));
      sub.add_option("--category", o->ops.stats.category,
                     "only this category (cpu_op, kernel, ...)");
      sub.add_flag("--host-only", *host_only, "leave out GPU kernels, memcpys and memsets");
      auto hta = std::make_shared<bool>(false);
      sub.add_flag("--hta-compatible", *hta,
                   "Holistic Trace Analysis' event window: drops the last profiler step (CPU "
                   "slices from its start, GPU work it launched) and GPU rows without a stream");
      return [a, o, sort, host_only, top, hta]() {
        o->ops.stats.hta_compatible = *hta;
        o->ops.sort = *sort == "self"           ? OpSort::kSelf
                      : *sort == "mean"         ? OpSort::kMean
                      : *sort == "count"        ? OpSort::kCount
                      : *sort == "device-self"  ? OpSort::kDeviceSelf
                      : *sort == "device-total" ? OpSort::kDeviceTotal
                                                : OpSort::kTotal;
        o->ops.stats.include_gpu = !*host_only;
        TextOptions text;  // an explicit --top applies to the text too (0: every row)
        if (top->count()) text.rows = o->ops.top ? o->ops.top : SIZE_MAX;
        return run_analysis_command(*a, AnalysisId::kOps, *o, text);
      };
    });

}  // namespace
}  // namespace mlprof::cli
