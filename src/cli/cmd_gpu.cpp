#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/gpu.h"
#include "mlprof/render/gpu_render.h"

namespace mlprof::cli {
namespace {

struct GpuArgs {
  std::string path;
  bool json = false;
  bool hta = false;
  double kernel_delay_us = 30;
};

MLPROF_REGISTER_COMMAND(
    "gpu",
    "GPU time per device: compute/communication/memcpy/idle, idle causes, queue length, "
    "launch overhead, overlap, memcpy bandwidth",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<GpuArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_flag("--hta-compatible", a->hta,
                   "Holistic Trace Analysis' event window (drops the last profiler step) and "
                   "microsecond time base, for numbers comparable with HTA");
      sub.add_option("--kernel-delay-us", a->kernel_delay_us,
                     "gaps shorter than this are 'kernel wait' (HTA consecutive_kernel_delay)");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        GpuOptions o;
        o.hta_compatible = a->hta;
        o.consecutive_kernel_delay_ns = static_cast<int64_t>(a->kernel_delay_us * 1000);
        GpuResult r = analyze_gpu(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_gpu_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_gpu_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
