// Loaded capture passes (import's CaptureTrace, from load_capture_traces) as the graphs analysis
// takes them (GraphCaptureInput). The one conversion for the CLI, serve's --capture and Python's
// load(capture=...); a template so that the analyze stage names no import type.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "mlprof/analyze/graphs.h"

namespace mlprof {

template <typename LoadedCapture>
std::vector<GraphCaptureInput> graph_capture_inputs(std::vector<LoadedCapture>&& loaded) {
  std::vector<GraphCaptureInput> out;
  out.reserve(loaded.size());
  for (LoadedCapture& c : loaded) {
    GraphCaptureInput in;
    in.source = std::move(c.source);
    in.batch_size = c.batch_size;
    in.mode = std::move(c.mode);
    in.trace = std::make_shared<const Trace>(std::move(c.trace));
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace mlprof
