#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/render/kernels_render.h"

namespace mlprof::cli {
namespace {

struct KernelsArgs {
  std::string path;
  size_t top = 30;
  bool json = false;
  bool hta = false;
};

MLPROF_REGISTER_COMMAND(
    "kernels", "GPU kernels: time per kernel, launch configuration, tensor cores, kernel types",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<KernelsArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_option("--top", a->top, "kernels shown in the text table (0 = all)");
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_flag("--hta-compatible", a->hta,
                   "Holistic Trace Analysis' event window (drops the last profiler step) and "
                   "microsecond time base");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        KernelsOptions o;
        o.hta_compatible = a->hta;
        KernelsResult r = analyze_kernels(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_kernels_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_kernels_text(r, 100, a->top);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
