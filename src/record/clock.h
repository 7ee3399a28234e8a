// Timestamps: the invariant TSC where the CPU has one (constant_tsc + nonstop_tsc in
// /proc/cpuinfo), calibrated against CLOCK_MONOTONIC; steady_clock (CLOCK_MONOTONIC) otherwise.
// Either way the Trace gets CLOCK_MONOTONIC nanoseconds.
#pragma once

#include <cstdint>

namespace mlprof::record {

// One simultaneous reading of the TSC and the system clocks.
struct ClockPair {
  uint64_t tsc = 0;
  int64_t mono_ns = 0;
  int64_t real_ns = 0;
};

// True when /proc/cpuinfo lists constant_tsc and nonstop_tsc (cached). MLPROF_CLOCK=steady
// forces the steady clock (tests, and machines whose TSC misbehaves despite the flags).
bool tsc_is_invariant();

// Reads the pair with the narrowest CLOCK_MONOTONIC window out of a few tries.
ClockPair read_clock_pair();
int64_t monotonic_ns();

// Nanoseconds per TSC tick from two pairs; falls back to (and refines) a process-wide estimate
// when the pairs are too close together for a precise slope.
double ns_per_tick(const ClockPair& a, const ClockPair& b);

}  // namespace mlprof::record
