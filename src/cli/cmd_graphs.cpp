// `mlprof graphs PATH`: CUDA/HIP graph replays attributed to the ops, modules and kernels of the
// capture pass (--capture DIR|FILE). Like every command (and the report, serve and Python, which
// read one file), it does not load capture_traces/ beside the trace by itself: it says so.
#include "cli/command.h"
#include "cli/graph_captures.h"

namespace mlprof::cli {
namespace {

std::function<int()> setup_graphs(CLI::App& sub) {
  auto a = std::make_shared<AnalysisArgs>();
  auto o = std::make_shared<AnalysisOptions>();
  add_analysis_args(sub, *a);  // with --capture DIR|FILE
  sub.add_option("--top", o->graphs.top, "rows per table in the text (default 30)");
  sub.add_option("--min-match", o->graphs.min_match,
                 "share of a replay's kernels that must match a capture in order (default 0.9)");
  return [a, o]() {
    if (a->captures.empty()) load_graph_captures(a->path, {}, o->graphs);  // the note only
    return run_analysis_command(*a, AnalysisId::kGraphs, *o);
  };
}

}  // namespace

MLPROF_REGISTER_COMMAND("graphs",
                        "CUDA/HIP graph replays attributed to the captured ops, modules, kernels",
                        setup_graphs);

}  // namespace mlprof::cli
