// A graph capture pass (CUDA/HIP graphs: the Stream{Begin,End}Capture window and the launches in
// it), as vLLM/SGLang/TraceLens write it to capture_traces/ with execution_details.json naming
// each file's batch size and graph mode. `--capture DIR|FILE` (CLI and serve) and Python's
// load(capture=...) read them here; the graphs analysis (GraphsOptions::captures) joins them to
// the replays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/import.h"

namespace mlprof {

struct CaptureTrace {
  std::string source;  // the file's name (what the output shows)
  std::string path;    // as opened
  Trace trace;
  int64_t batch_size = -1;  // from execution_details.json, -1 unknown
  std::string mode;         // "FULL", "DECODE", "PIECEWISE", ... ("" unknown)
};

// Each path a capture directory (the files execution_details.json lists, else every trace file
// in it, by name) or one capture trace (its details from an execution_details.json beside it).
// Errors are one line ("PATH: why"): the first file that cannot be read.
Result<std::vector<CaptureTrace>> load_capture_traces(const std::vector<std::string>& paths,
                                                      const ImportOptions& options = {});

// The capture_traces/ directory beside a trace when it holds execution_details.json (what a note
// suggests giving to --capture: it is never loaded unasked), else "".
std::string capture_dir_beside(const std::string& trace_path);

}  // namespace mlprof
