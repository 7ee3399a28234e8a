#include "cli/graph_captures.h"

#include <cstdio>

#include "cli/command.h"
#include "import/graph_capture_files.h"
#include "mlprof/analyze/graph_capture_inputs.h"

namespace mlprof::cli {

bool load_graph_captures(const std::string& trace_path, const std::vector<std::string>& given,
                         GraphsOptions& o) {
  if (given.empty()) {
    std::string dir = capture_dir_beside(trace_path);
    if (!dir.empty())
      std::fprintf(stderr,
                   "mlprof: note: %s is a graph capture pass beside the trace: add --capture %s "
                   "to charge graph replays to the captured ops\n",
                   dir.c_str(), dir.c_str());
    return true;
  }
  ImportOptions io;
  io.strict = strict_import();
  Result<std::vector<CaptureTrace>> loaded = load_capture_traces(given, io);
  if (!loaded) {
    std::fprintf(stderr, "mlprof: %s\n", loaded.error().c_str());
    return false;
  }
  for (const CaptureTrace& c : *loaded) print_import_warnings(c.trace);
  for (GraphCaptureInput& in : graph_capture_inputs(std::move(loaded.value())))
    o.captures.push_back(std::move(in));
  return true;
}

}  // namespace mlprof::cli
