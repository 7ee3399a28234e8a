// How each analysis of the catalogue (mlprof/analysis_catalog.h) is computed from an AnalysisSet:
// its options and the results it reads (declared in its row's `needs`; analysis_set_test checks
// they match). Called once per set by the getter. A new analysis may put its compute_NAME in its
// own src/analyze/NAME.cpp instead.
#include <utility>

#include "analyze/op_groups_replayed.h"
#include "analyze/op_rows.h"
#include "mlprof/analysis_set.h"
#include "mlprof/analyze/device_time.h"
#include "trace/formats/compile_log_format.h"

namespace mlprof::analysis_stage {

SummaryResult compute_summary(AnalysisSet& s) { return summarize(s.trace(), s.options().summary); }

OpsResult compute_ops(AnalysisSet& s) {
  const OpsOptions& o = s.options().ops;
  OpsResult r;
  OpStatsOptions so = o.stats;
  so.device_time = true;
  DeviceTime dt;  // once, for the rows and the groups
  if (s.has_gpu()) dt = device_time_by_slice(s.trace());
  so.device_times = &dt;
  if (s.has_gpu()) so.replays = &s.graphs();
  // Statistics only for the rows kept (a trace of 1e6 op names, ops.top set).
  r.ops = op_stats_top(s.trace(), so, o.sort, o.top, &r.rows);
  r.device_time = s.has_gpu();
  // The groups charge replays as the rows do (not under --hta-compatible), ordered as the rows.
  r.groups = op_groups_replayed(s.trace(), s.has_gpu() ? &dt : nullptr,
                                so.hta_compatible ? nullptr : so.replays, o.top, o.sort);
  return r;
}

StepsResult compute_steps(AnalysisSet& s) { return analyze_steps(s.trace(), s.options().steps); }

KernelsResult compute_kernels(AnalysisSet& s) {
  return s.has_gpu() ? analyze_kernels(s.trace(), s.options().kernels, &s.graphs())
                     : KernelsResult{};
}

GpuResult compute_gpu(AnalysisSet& s) {
  return s.has_gpu() ? analyze_gpu(s.trace(), s.options().gpu, &s.steps()) : GpuResult{};
}

MemoryResult compute_memory(AnalysisSet& s) {
  return analyze_memory(s.trace(), s.options().memory);
}

LeakResult compute_leaks(AnalysisSet& s) {
  return analyze_leaks(s.trace(), s.steps(), s.options().leaks);
}

HeapResult compute_heap(AnalysisSet& s) { return analyze_heap(s.trace(), s.options().heap); }

GraphsResult compute_graphs(AnalysisSet& s) {
  return analyze_graphs(s.trace(), s.options().graphs);
}

BottleneckResult compute_bottlenecks(AnalysisSet& s) {
  BottleneckInputs in;
  in.steps = &s.steps();
  in.memory = &s.memory();
  in.leaks = &s.leaks();
  if (s.has_gpu()) {
    in.gpu = &s.gpu();
    in.kernels = &s.kernels();
    if (!s.unavailable(AnalysisId::kRoofline)) in.roofline = &s.roofline();
    in.graphs = &s.graphs();
  }
  if (!s.unavailable(AnalysisId::kRanks)) in.ranks = &s.ranks();
  // The set's dependency graph: its replay prices the findings (the critical path reads it too).
  in.graph = &s.dependency_graph();
  return find_bottlenecks(s.trace(), in);
}

FlopsResult compute_flops(AnalysisSet& s) {
  // The roofline's calls (a graph replay charged to its captured ops), so the FLOPs agree.
  return analyze_flops(s.trace(), s.steps(), s.options().flops,
                       s.has_gpu() ? &s.graphs() : nullptr);
}

FlameGraph compute_flame(AnalysisSet& s) { return build_flame_graph(s.trace(), s.options().flame); }

TimelineResult compute_timeline(AnalysisSet& s) {
  return analyze_timeline(s.trace(), s.options().timeline);
}

ModulesResult compute_modules(AnalysisSet& s) {
  return analyze_modules(s.trace(), s.options().modules, s.has_gpu() ? &s.graphs() : nullptr,
                         &s.steps());
}

CriticalPathResult compute_critical_path(AnalysisSet& s) {
  return analyze_critical_path(
      s.trace(), with_step_annotation(s.options().critical_path, s.options().steps.step_annotation),
      &s.dependency_graph());
}

RanksResult compute_ranks(AnalysisSet& s) {
  RanksOptions ro = s.options_.ranks;
  if (ro.step_annotation.empty()) ro.step_annotation = s.options_.steps.step_annotation;
  RanksResult r = s.summaries_.empty()
                      ? analyze_ranks(s.ranks_, ro)
                      : analyze_rank_summaries(std::exchange(s.summaries_, {}), s.options_.ranks);
  r.errors = s.rank_errors_;
  return r;
}

CompileResult compute_compile(AnalysisSet& s) {
  if (s.unavailable(AnalysisId::kCompile)) return CompileResult{};
  // A torch.compile log (or a TORCH_TRACE directory of them): the logs-only form of
  // `mlprof compile`; logs carried by a Kineto trace (`mlprof compile LOGS TRACE`): both joined;
  // a Kineto trace: its compiled regions.
  const Trace& t = s.trace();
  if (t.compile_logs)
    return analyze_compile(*t.compile_logs, t.meta.format == kCompileLogFormat ? nullptr : &t,
                           s.options().compile);
  return analyze_compile({}, &t, s.options().compile);
}

SnapshotResult compute_memory_snapshot(AnalysisSet& s) {
  const Trace& t = s.trace();
  if (!t.memory_snapshot) return SnapshotResult{};
  SnapshotResult r = analyze_memory_snapshot(*t.memory_snapshot, s.options().memory_snapshot);
  r.source = t.meta.source;  // the name every consumer gives the file (serve reads an fd)
  return r;
}

}  // namespace mlprof::analysis_stage
