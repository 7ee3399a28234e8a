// The analysis catalogue: every analysis of the stage, one row each. Everything else about an
// analysis is derived from its row: AnalysisId and kAnalysisCount, its options in
// AnalysisOptions, its getter and result slot on AnalysisSet, its dispatch, its JSON/text/CSV
// writers' registration (render/analysis_output.cpp), its section in `mlprof analyze`, its report
// tab and REST endpoint, Python's list (`mlprof.Trace.analyze()`) and the web tabs (checked
// against these rows by tests/py/test_analysis_catalog.py).
//
// A new analysis is one row here plus its own files:
//   include/mlprof/analyze/NAME.h   its Result and Options types
//   src/analyze/NAME.cpp            the analysis, and `Result compute_NAME(AnalysisSet&)` reading
//                                   its options and the results it needs from the set
//   src/render/NAME_render.{h,cpp}  `write_NAME_json(JsonWriter&, const Result&)` and
//                                   `render_NAME_text(const Result&, const TextOptions&)`
//   src/cli/cmd_NAME.cpp            the subcommand (options, then run_analysis_command)
// analysis_catalog_dummy_test (tests/catalog/) builds the stage with a dummy row added to prove it.
//
// Columns:
//   X(Id, name, Result, Options, needs, requires, report, analyze_json, analyze_text, title, csv,
//     schema)
//   Id            AnalysisId::k<Id>
//   name          the subcommand, JSON key, AnalysisOptions member and AnalysisSet getter
//   Result        what the getter returns
//   Options       its member of AnalysisOptions (NoOptions: none)
//   needs         results computed first and read by compute_NAME: (kSteps, kMemory), or ()
//   requires      without it the analysis is {"unavailable": why} (AnalysisRequires)
//   report        a report tab, a `serve` endpoint /api/profiler/NAME, a web tab's data
//   analyze_json  position in `mlprof analyze --json` (0: not there)
//   analyze_text  position of its section in `mlprof analyze`'s text (0: none; ranks heads the
//                 text of a rank set with its own lines)
//   title         that section's title
//   csv           the table `mlprof NAME --csv` writes ("": none)
//   schema        the major version of its JSON, "schema": "mlprof.NAME/<schema>" and
//                 schemas/NAME.schema.json (a field renamed or removed: the next major;
//                 docs/json.md)
//
// Rows are in AnalysisId order, which is the report's tab order.
#pragma once

#include <cstddef>
#include <cstdint>

#define MLPROF_ANALYSES(X)                                                                         \
  X(Summary, summary, SummaryResult, SummaryOptions, (), kNothing, true, 1, 1, "Summary",          \
    "top_ops", 1)                                                                                  \
  X(Ops, ops, OpsResult, OpsOptions, (kGraphs), kNothing, true, 0, 0, "", "ops", 1)                \
  X(Steps, steps, StepsResult, StepsOptions, (), kNothing, true, 2, 2, "Steps", "steps", 1)        \
  X(Kernels, kernels, KernelsResult, KernelsOptions, (kGraphs), kGpuStreams, true, 4, 4,           \
    "Kernels", "kernels", 1)                                                                       \
  X(Gpu, gpu, GpuResult, GpuOptions, (kSteps), kGpuStreams, true, 3, 3, "GPU",                     \
    "idle_time_breakdown", 1)                                                                      \
  X(Memory, memory, MemoryResult, MemoryOptions, (), kNothing, true, 5, 5, "Memory", "ops", 1)     \
  X(Leaks, leaks, LeakResult, LeakOptions, (kSteps), kNothing, true, 6, 6, "Leaks",                \
    "surviving_ops", 1)                                                                            \
  X(Heap, heap, HeapResult, HeapOptions, (), kNothing, false, 0, 0, "", "peak_stacks", 1)          \
  /* GPU results only when the trace has GPU streams, ranks only for a rank set. */                \
  X(Bottlenecks, bottlenecks, BottleneckResult, NoOptions,                                         \
    (kSteps, kMemory, kLeaks, kGpu, kKernels, kRanks, kRoofline, kGraphs), kNothing, true, 8, 12,  \
    "Bottlenecks", "findings", 1)                                                                  \
  X(Flops, flops, FlopsResult, FlopsOptions, (kSteps, kGraphs), kNothing, true, 7, 7, "FLOPs",     \
    "ops", 1)                                                                                      \
  X(Flame, flame, FlameGraph, FlameOptions, (), kNothing, true, 0, 0, "", "frames", 1)             \
  X(Timeline, timeline, TimelineResult, TimelineOptions, (), kNothing, true, 0, 0, "", "lanes", 1) \
  X(Modules, modules, ModulesResult, ModulesOptions, (kSteps, kGraphs), kModuleEvents, true, 9, 8, \
    "Modules", "", 1)                                                                              \
  X(CriticalPath, critical_path, CriticalPathResult, CriticalPathOptions, (), kCriticalPathWindow, \
    true, 10, 9, "Critical path", "", 1)                                                           \
  X(Ranks, ranks, RanksResult, RanksOptions, (), kRanks, false, 13, 0, "Ranks", "ranks", 1)        \
  X(Compile, compile, CompileResult, CompileOptions, (), kCompiledRegions, true, 11, 10,           \
    "Compile", "", 1)                                                                              \
  X(MemorySnapshot, memory_snapshot, SnapshotResult, SnapshotOptions, (), kMemorySnapshot, true,   \
    12, 11, "CUDA memory snapshot", "fragmented_segments", 1)                                      \
  X(Roofline, roofline, RooflineResult, RooflineOptions, (kSteps, kGraphs), kGpuStreams, true, 14, \
    13, "Roofline", "shapes", 1)                                                                   \
  X(Graphs, graphs, GraphsResult, GraphsOptions, (), kGpuStreams, true, 0, 0, "", "", 1)           \
  MLPROF_EXTRA_ANALYSES(X)

// A test build adds rows here (tests/catalog/dummy_analysis.h); empty otherwise.
#ifdef MLPROF_EXTRA_ANALYSES_HEADER
#include MLPROF_EXTRA_ANALYSES_HEADER
#else
#define MLPROF_EXTRA_ANALYSES(X)
#endif

// `needs` is a parenthesized list: MLPROF_ANALYSIS_LIST needs -> kSteps, kMemory
#define MLPROF_ANALYSIS_LIST(...) __VA_ARGS__

namespace mlprof {

// What an analysis needs from its input, else it is {"unavailable": why}.
enum class AnalysisRequires : uint8_t {
  kNothing,
  kGpuStreams,          // GPU streams (not a CPU-only profile)
  kRanks,               // a rank set (a directory with one trace per rank)
  kCompiledRegions,     // torch.compile regions, or torch.compile logs
  kMemorySnapshot,      // a CUDA memory snapshot
  kModuleEvents,        // nn.Module events
  kCriticalPathWindow,  // the events and default window of a critical path
};

// The options of an analysis that has none.
struct NoOptions {};

}  // namespace mlprof
