#include <cstdio>

#include "cli/command.h"

namespace mlprof::cli {
namespace {

MLPROF_REGISTER_COMMAND(
    "critical-path",
    "HTA's critical path of a step or annotation: CPU-bound, GPU compute, launch and "
    "kernel-kernel overhead, the events on it",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<AnalysisArgs>();
      auto o = std::make_shared<AnalysisOptions>();
      auto no_zero_launch = std::make_shared<bool>(false);
      add_analysis_args(sub, *a);
      auto app = &sub;
      sub.add_option("--annotation", o->critical_path.annotation,
                     "annotation whose window is analyzed (substring of its name; \"\" = whole "
                     "trace)");
      sub.add_option("--instance", o->critical_path.instance,
                     "which occurrence of the annotation (0 = first)");
      sub.add_option("--step", o->critical_path.step,
                     "analyze step ProfilerStep#N (its exact number, as `mlprof steps` lists "
                     "steps) instead of an annotation")
          ->check(CLI::NonNegativeNumber)
          ->excludes("--annotation")
          ->excludes("--instance");
      sub.add_flag("--no-zero-weight-launch-edges", *no_zero_launch,
                   "do not add HTA's zero-weight launch -> kernel edges");
      sub.add_option("--top", o->critical_path.top, "events listed");
      return [a, o, no_zero_launch, app]() {
        o->critical_path.zero_weight_launch_edges = !*no_zero_launch;
        o->steps.step_annotation = a->step_annotation;
        auto set = open_analysis(a->path, *o, a->threads);
        if (!set) return set.exit_code;
        // A window asked for by name that the trace does not have is bad input: one line on
        // stderr naming the file and what it has instead (the default window, the first
        // ProfilerStep, is the analysis' own: its absence reads as unavailable).
        bool asked = app->count("--step") + app->count("--annotation") + app->count("--instance");
        if (asked)
          if (auto why = set->unavailable(AnalysisId::kCriticalPath)) {
            std::fprintf(stderr, "mlprof: %s: %s\n", set->trace().meta.source.c_str(),
                         why->c_str());
            return kExitBadInput;
          }
        return output_analysis(*set, AnalysisId::kCriticalPath, *a);
      };
    });

}  // namespace
}  // namespace mlprof::cli
