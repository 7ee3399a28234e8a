// What every format fuzzer checks of a reader's answer: an error is one line naming the input; a
// trace keeps the Trace's invariants (slices on tracks that exist, durations >= 0, parents that
// exist, names that resolve).
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::fuzz {

inline void check_result(const Result<Trace>& t, std::string_view name) {
  if (!t) {
    std::string_view e = t.error();
    if (e.find('\n') != std::string_view::npos || !e.starts_with(name)) __builtin_trap();
    return;
  }
  const Trace& tr = t.value();
  const SliceTable& s = tr.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.track[i] >= tr.tracks.size() || s.dur[i] < 0) __builtin_trap();
    if (s.parent[i] >= static_cast<int32_t>(s.size())) __builtin_trap();
    (void)tr.str(s.name[i]);
  }
}

}  // namespace mlprof::fuzz
