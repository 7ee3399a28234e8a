#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/memory_snapshot.h"
#include "mlprof/memory_snapshot.h"
#include "mlprof/render/memory_snapshot_render.h"

namespace mlprof::cli {
namespace {

// A CUDA allocator snapshot is not a trace: its own analysis, outside the analysis stage.
int run_snapshot(const AnalysisArgs& a, const AnalysisOptions& o, size_t top) {
  Result<MemorySnapshot> snap = load_memory_snapshot(a.path);
  if (!snap) {
    std::cerr << "mlprof: " << snap.error() << "\n";
    return kExitBadInput;
  }
  SnapshotOptions so;
  so.top = top;
  so.timeline_points = o.memory.timeline_points;
  SnapshotResult r = analyze_memory_snapshot(snap.value(), so);
  if (a.json) {
    JsonWriter w(true);
    write_memory_snapshot_json(w, r);
    std::cout << w.str() << "\n";
  } else {
    std::cout << render_memory_snapshot_text(r);
  }
  return kExitOk;
}

MLPROF_REGISTER_COMMAND(
    "memory",
    "Memory over time per device: peak and its op, never-freed allocations, fragmentation, per "
    "op; or a CUDA memory snapshot (.pickle/.json): segments, blocks, replayed peak, OOM",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      add_analysis_args(sub, *a);
      sub.add_option("--points", o->memory.timeline_points,
                     "timeline points per device (downsampled)");
      auto* top = sub.add_option("--top", o->memory.top_ops,
                                 "per-op rows and never-freed allocations shown");
      return [a, o, top]() {
        if (top->count()) o->memory.top_unfreed = o->memory.top_ops;
        if (is_memory_snapshot_file(a->path))
          return run_snapshot(*a, *o, top->count() ? o->memory.top_ops : 30);
        return run_analysis_command(*a, AnalysisId::kMemory, *o);
      };
    });

}  // namespace
}  // namespace mlprof::cli
