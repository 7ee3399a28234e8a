#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/render/steps_render.h"

namespace mlprof::cli {
namespace {

struct StepsArgs {
  std::string path;
  bool json = false;
};

MLPROF_REGISTER_COMMAND(
    "steps",
    "Training steps (ProfilerStep#N): times, outliers, data/forward/backward/optimizer split",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<StepsArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        StepsResult r = analyze_steps(*trace);
        if (a->json) {
          JsonWriter w(true);
          write_steps_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_steps_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
