// The capture passes joined to a trace's graph replays: --capture DIR|FILE (a capture_traces/
// directory: vLLM/SGLang/TraceLens layout, execution_details.json naming each file's batch size
// and graph mode).
#pragma once

#include <string>
#include <vector>

#include "mlprof/analyze/graphs.h"

namespace mlprof::cli {

// Loads the capture traces into `o.captures`. False (after a one-line error) when a named
// capture cannot be read. None given: nothing is loaded (serve, the report and Python read one
// file, and every surface shows the same numbers); a capture_traces/ beside the trace is named
// in a note on stderr.
bool load_graph_captures(const std::string& trace_path, const std::vector<std::string>& given,
                         GraphsOptions& o);

}  // namespace mlprof::cli
