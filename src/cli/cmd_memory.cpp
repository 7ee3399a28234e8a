#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/memory_snapshot.h"
#include "mlprof/memory_snapshot.h"
#include "mlprof/render/memory_render.h"
#include "mlprof/render/memory_snapshot_render.h"

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
    "Memory over time per device: peak and its op, never-freed allocations, fragmentation, per "
    "op; or a CUDA memory snapshot (.pickle/.json): segments, blocks, replayed peak, OOM",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<MemoryArgs>();
      sub.add_option("path", a->path,
                     "trace file (.json, .json.gz, .mlprof) or torch.cuda.memory._dump_snapshot "
                     "file (.pickle, .json, gzipped or not)")
          ->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--points", a->points, "timeline points per device (downsampled)");
      sub.add_option("--top", a->top, "per-op rows and never-freed allocations shown");
      return [a]() {
        if (is_memory_snapshot_file(a->path)) {
          Result<MemorySnapshot> snap = load_memory_snapshot(a->path);
          if (!snap) {
            std::cerr << "mlprof: " << snap.error() << "\n";
            return kExitBadInput;
          }
          SnapshotOptions so;
          so.top = a->top;
          so.timeline_points = a->points;
          SnapshotResult r = analyze_memory_snapshot(snap.value(), so);
          if (a->json) {
            JsonWriter w(true);
            write_memory_snapshot_json(w, r);
            std::cout << w.str() << "\n";
          } else {
            std::cout << render_memory_snapshot_text(r);
          }
          return kExitOk;
        }
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
