// Every timestamp and event end of a Trace lies within +-kMaxTimeNs (2^62 ns: 146 years around
// the epoch, +-4.6e15 us), so the difference of any two, a span included, fits 64 bits (events
// at -9e15 and +9e15 us gave "span -446744073.710 s"). Readers skip and count (or refuse)
// anything outside (docs/hardening.md).
#pragma once

#include <cstdint>

namespace mlprof {

inline constexpr int64_t kMaxTimeNs = (int64_t{1} << 62) - 1;
inline constexpr bool time_in_range(int64_t ns) { return ns >= -kMaxTimeNs && ns <= kMaxTimeNs; }

}  // namespace mlprof
