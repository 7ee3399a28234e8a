// The step holding a timestamp, for the per-step tables of roofline and flops. Private to
// src/analyze.
#pragma once

#include <algorithm>
#include <cstdint>

#include "mlprof/analyze/steps.h"

namespace mlprof {

// The index of the step whose [begin, begin + dur) holds ts (steps in time order), -1 none.
inline int64_t step_index_at(const StepsResult& steps, int64_t ts) {
  auto it = std::upper_bound(steps.steps.begin(), steps.steps.end(), ts,
                             [](int64_t t, const StepInfo& st) { return t < st.begin_ns; });
  if (it == steps.steps.begin()) return -1;
  --it;
  if (ts >= it->begin_ns + it->dur_ns) return -1;
  return it - steps.steps.begin();
}

}  // namespace mlprof
