#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "memory",
    "Memory over time per device: peak and its op, never-freed allocations, fragmentation, per "
    "op; or a CUDA memory snapshot (.pickle/.json): segments, blocks, replayed peak, OOM",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      add_analysis_args(sub, *a);
      auto* points = sub.add_option("--points", o->memory.timeline_points,
                                    "timeline points per device (downsampled)");
      auto* top = sub.add_option("--top", o->memory.top_ops,
                                 "per-op rows and never-freed allocations shown");
      return [a, o, top, points]() {
        if (top->count()) {
          o->memory.top_unfreed = o->memory.top_ops;
          o->memory_snapshot.top = o->memory.top_ops;
        }
        if (points->count()) o->memory_snapshot.timeline_points = o->memory.timeline_points;
        // A CUDA allocator snapshot loads as a trace too; this command shows the allocator's own
        // view of it (segments, blocks, replayed peak), the memory analysis of anything else.
        o->steps.step_annotation = a->step_annotation;
        auto set = open_analysis(a->path, *o, a->threads);
        if (!set) return set.exit_code;
        AnalysisId id =
            set->trace().memory_snapshot ? AnalysisId::kMemorySnapshot : AnalysisId::kMemory;
        return output_analysis(*set, id, *a);
      };
    });

}  // namespace
}  // namespace mlprof::cli
