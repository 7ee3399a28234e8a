#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/critical_path.h"
#include "mlprof/render/critical_path_render.h"

namespace mlprof::cli {
namespace {

struct CriticalPathArgs {
  std::string path;
  std::string annotation = "ProfilerStep";
  size_t instance = 0;
  bool json = false;
  bool no_zero_launch = false;
  size_t top = 20;
};

MLPROF_REGISTER_COMMAND(
    "critical-path",
    "HTA's critical path of a step or annotation: CPU-bound, GPU compute, launch and "
    "kernel-kernel overhead, the events on it",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CriticalPathArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_option("--annotation", a->annotation,
                     "annotation whose window is analyzed (substring of its name; \"\" = whole "
                     "trace)");
      sub.add_option("--instance", a->instance, "which occurrence of the annotation (0 = first)");
      sub.add_flag("--no-zero-weight-launch-edges", a->no_zero_launch,
                   "do not add HTA's zero-weight launch -> kernel edges");
      sub.add_option("--top", a->top, "events listed");
      sub.add_flag("--json", a->json, "machine-readable output (with every path edge)");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        CriticalPathOptions o;
        o.annotation = a->annotation;
        o.instance = a->instance;
        o.zero_weight_launch_edges = !a->no_zero_launch;
        o.top = a->top;
        CriticalPathResult r = analyze_critical_path(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_critical_path_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_critical_path_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
