// A duration from another profiler's start and end times, or -1 when it is none: the end before
// the start, or a difference past int64 (a damaged or hostile file's values would overflow).
#pragma once

#include <cstdint>

namespace mlprof::import {

inline int64_t checked_duration(int64_t start, int64_t end) {
  int64_t d;
  return end < start || __builtin_sub_overflow(end, start, &d) ? -1 : d;
}

}  // namespace mlprof::import
