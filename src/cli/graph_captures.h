// The capture passes `mlprof graphs` joins to a trace's graph replays: --capture DIR|FILE, or
// capture_traces/ beside the trace (vLLM/SGLang/TraceLens layout, execution_details.json naming
// each file's batch size and graph mode).
#pragma once

#include <string>
#include <vector>

#include "mlprof/analyze/graphs.h"

namespace mlprof::cli {

// Loads the capture traces into `o.captures`. False (after a one-line error) when a named
// capture cannot be read; a missing capture_traces/ beside the trace is no error.
bool load_graph_captures(const std::string& trace_path, const std::vector<std::string>& given,
                         GraphsOptions& o);

}  // namespace mlprof::cli
