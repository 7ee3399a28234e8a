#include "record/clock.h"

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "mlprof/mlprof.h"

namespace mlprof::record {

namespace {

bool read_invariant_flags() {
  const char* forced = std::getenv("MLPROF_CLOCK");
  if (forced && std::strcmp(forced, "steady") == 0) return false;
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    auto has = [&](const char* flag) {
      std::string padded = " " + line + " ";
      return padded.find(std::string(" ") + flag + " ") != std::string::npos;
    };
    return has("constant_tsc") && has("nonstop_tsc");
  }
#endif
  return false;
}

int64_t read_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Process-wide slope estimate, refined by every session long enough to measure it well.
std::mutex g_slope_mu;
double g_slope = 0;
int64_t g_slope_span_ns = 0;

// Below this span two pairs' jitter (~1 us here) would make the slope worse than 1e-4.
constexpr int64_t kMinSlopeSpanNs = 20'000'000;

}  // namespace

bool tsc_is_invariant() {
  static const bool invariant = read_invariant_flags();
  return invariant;
}

int64_t monotonic_ns() { return read_ns(CLOCK_MONOTONIC); }

ClockPair read_clock_pair() {
  ClockPair best;
  int64_t best_window = INT64_MAX;
  for (int i = 0; i < 5; ++i) {
    int64_t before = read_ns(CLOCK_MONOTONIC);
    uint64_t tsc = detail::read_tsc();
    int64_t after = read_ns(CLOCK_MONOTONIC);
    if (after - before < best_window) {
      best_window = after - before;
      best.tsc = tsc;
      best.mono_ns = before + (after - before) / 2;
    }
  }
  best.real_ns = read_ns(CLOCK_REALTIME) - (read_ns(CLOCK_MONOTONIC) - best.mono_ns);
  return best;
}

double ns_per_tick(const ClockPair& a, const ClockPair& b) {
  int64_t span = b.mono_ns - a.mono_ns;
  std::lock_guard<std::mutex> lock(g_slope_mu);
  if (span >= kMinSlopeSpanNs && b.tsc > a.tsc) {
    double slope = static_cast<double>(span) / static_cast<double>(b.tsc - a.tsc);
    if (span > g_slope_span_ns) {
      g_slope = slope;
      g_slope_span_ns = span;
    }
    return slope;
  }
  if (g_slope_span_ns < kMinSlopeSpanNs) {
    // No long session yet: measure over kMinSlopeSpanNs once (stop() of a short session pays
    // this 20 ms, once per process). Sleeping is fine: both clocks keep running.
    ClockPair p0 = read_clock_pair();
    std::this_thread::sleep_for(std::chrono::nanoseconds(kMinSlopeSpanNs));
    ClockPair p1 = read_clock_pair();
    g_slope = static_cast<double>(p1.mono_ns - p0.mono_ns) / static_cast<double>(p1.tsc - p0.tsc);
    g_slope_span_ns = p1.mono_ns - p0.mono_ns;
  }
  return g_slope;
}

}  // namespace mlprof::record
