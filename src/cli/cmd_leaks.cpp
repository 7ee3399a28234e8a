#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/leaks.h"
#include "mlprof/render/memory_render.h"

namespace mlprof::cli {
namespace {

struct LeaksArgs {
  std::string path;
  bool json = false;
  double alpha = kLeakAlpha;
  double min_bytes = kLeakMinBytesPerStep;
};

MLPROF_REGISTER_COMMAND(
    "leaks",
    "Memory growth across steps (Theil-Sen slope, Mann-Kendall test) and the ops that keep it",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<LeaksArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--alpha", a->alpha, "significance level of the trend test (default 0.05)");
      sub.add_option("--min-bytes-per-step", a->min_bytes,
                     "smallest growth per step reported as a leak (default 1024)");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        LeakOptions o;
        o.alpha = a->alpha;
        o.min_bytes_per_step = a->min_bytes;
        LeakResult r = analyze_leaks(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_leaks_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_leaks_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
