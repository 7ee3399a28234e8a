#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/modules.h"
#include "mlprof/render/modules_render.h"

namespace mlprof::cli {
namespace {

struct ModulesArgs {
  std::string path;
  bool json = false;
  size_t top = 20;
  size_t depth = 3;
};

MLPROF_REGISTER_COMMAND(
    "modules",
    "nn.Module tree (with_stack/with_modules traces): per layer calls, host and GPU time, "
    "FLOPs, share of the step; slowest, most variable and shared layers",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ModulesArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output (every module path)");
      sub.add_option("--top", a->top, "rows in the slowest / most variable / shared lists");
      sub.add_option("--depth", a->depth, "tree levels printed");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        ModulesOptions o;
        o.top = a->top;
        ModulesResult r = analyze_modules(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_modules_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_modules_text(r, a->depth);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
