// Which slice names are iteration markers (the step model's, steps.h). Private to src/analyze.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/steps.h"

namespace mlprof {

// Which slice names are iteration markers, of any source (bit 1 << StepSource per name): the one
// rule step_markers picks its source and slices from, and what op listings leave out (compare's
// op groups: the step-time comparison covers the iterations). Each name is classified once.
// An invalid regex: error() says why and only the built-in sources are recognized.
class IterationMarkerNames {
 public:
  IterationMarkerNames(const Trace& trace, std::string_view step_annotation);
  uint8_t sources(StringId name);
  bool is_marker(StringId name) { return sources(name) != 0; }
  const std::string& error() const { return error_; }

 private:
  const Trace& trace_;
  std::function<bool(std::string_view)> user_;  // --step-annotation; empty without one
  std::vector<uint8_t> kind_;                   // per StringId; kUnset until classified
  std::string error_;
};

}  // namespace mlprof
