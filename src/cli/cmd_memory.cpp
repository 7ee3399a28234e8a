#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/render/memory_render.h"

namespace mlprof::cli {
namespace {

struct MemoryArgs {
  std::string path;
  bool json = false;
  size_t points = 1000;
  size_t top = 30;
};

MLPROF_REGISTER_COMMAND(
    "memory",
    "Memory over time per device: peak and its op, never-freed allocations, fragmentation, per op",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<MemoryArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--points", a->points, "timeline points per device (downsampled)");
      sub.add_option("--top", a->top, "per-op rows and never-freed allocations shown");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        MemoryOptions o;
        o.timeline_points = a->points;
        o.top_ops = a->top;
        o.top_unfreed = a->top;
        MemoryResult r = analyze_memory(*trace, o);
        if (a->json) {
          JsonWriter w(true);
          write_memory_json(w, r);
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_memory_text(r);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
