// The capture passes joined to a trace's graph replays: --capture DIR|FILE (a capture_traces/
// directory: vLLM/SGLang/TraceLens layout, execution_details.json naming each file's batch size
// and graph mode), read by load_capture_traces (import/graph_capture_files.h), as Python reads
// them; serve takes them from here.
#pragma once

#include <string>
#include <vector>

#include "mlprof/analyze/graphs.h"

namespace mlprof::cli {

// Loads the capture traces into `o.captures`. False (after a one-line error) when a named
// capture cannot be read. None given: nothing is loaded (a capture pass is joined only when asked
// for: `serve --capture` and Python's load(capture=...) ask the same way); a capture_traces/
// beside the trace is named in a note on stderr.
bool load_graph_captures(const std::string& trace_path, const std::vector<std::string>& given,
                         GraphsOptions& o);

}  // namespace mlprof::cli
