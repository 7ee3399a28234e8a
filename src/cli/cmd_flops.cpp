#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/flops.h"
#include "mlprof/render/flops_render.h"

namespace mlprof::cli {
namespace {

struct FlopsArgs {
  std::string path;
  bool json = false;
  double peak = 0;
  size_t top = 30;
};

MLPROF_REGISTER_COMMAND(
    "flops", "FLOPs of matmul/linear/conv/attention ops from recorded shapes, TFLOP/s and MFU",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<FlopsArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--peak-tflops", a->peak, "device peak TFLOP/s for MFU (default: table)");
      sub.add_option("--top", a->top, "ops shown");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        FlopsOptions o;
        o.peak_tflops = a->peak;
        o.top = a->top;
        FlopsResult r = analyze_flops(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_flops_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_flops_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
