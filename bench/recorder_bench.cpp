// Recorder overhead: an enabled scope (begin+end) against an empty loop, a raw TSC pair and a
// clock_gettime pair measured in the same run; a scope disabled at run time; a counter; a
// memory event. Prints Google Benchmark's table, then a summary table for the README.
//
//   build-rec/bench/recorder_bench                         # wall time
//   build-rec/bench/recorder_bench --loop=scope 100000     # a plain loop for callgrind
//   bash bench/recorder_callgrind.sh build-rec/bench/recorder_bench   # instructions per scope
#include <benchmark/benchmark.h>
#include <time.h>
#include <x86intrin.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "mlprof/mlprof.h"

namespace {

// Enough for every iteration below to stay on the fast path (no drops, no waiting).
constexpr int64_t kIterations = 2'000'000;

mlprof::SessionOptions bench_options() {
  mlprof::SessionOptions o;
  o.buffer_mb = 128;
  o.rss_interval_ms = 0;
  return o;
}

void BM_EmptyLoop(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(++i);
}

void BM_RawTscPair(benchmark::State& state) {
  for (auto _ : state) {
    uint64_t a = __rdtsc();
    benchmark::DoNotOptimize(a);
    uint64_t b = __rdtsc();
    benchmark::DoNotOptimize(b);
  }
}

void BM_ClockGettimePair(benchmark::State& state) {
  timespec a, b;
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &a);
    benchmark::DoNotOptimize(a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    benchmark::DoNotOptimize(b);
  }
}

void BM_ScopeEnabled(benchmark::State& state) {
  mlprof::Session s(bench_options());
  if (!s.start().is_ok()) state.SkipWithError("session did not start");
  for (auto _ : state) {
    MLPROF_SCOPE("bench");
  }
  mlprof::Trace t = s.stop();
  if (t.meta.dropped_events) state.SkipWithError("events dropped: buffer too small");
}

void BM_ScopeDisabled(benchmark::State& state) {
  mlprof::Session s(bench_options());
  if (!s.start().is_ok()) state.SkipWithError("session did not start");
  mlprof::set_enabled(false);  // disabled at run time: one predictable branch per event
  for (auto _ : state) {
    MLPROF_SCOPE("bench");
  }
  s.stop();
}

void BM_Counter(benchmark::State& state) {
  mlprof::Session s(bench_options());
  if (!s.start().is_ok()) state.SkipWithError("session did not start");
  double v = 0;
  for (auto _ : state) mlprof::counter("loss", v += 1);
  s.stop();
}

void BM_MemoryEvent(benchmark::State& state) {
  mlprof::Session s(bench_options());
  if (!s.start().is_ok()) state.SkipWithError("session did not start");
  static char block[64];
  int i = 0;
  // One event per iteration: allocations and frees alternate.
  for (auto _ : state) {
    if (++i & 1)
      mlprof::track_alloc(block, sizeof(block));
    else
      mlprof::track_free(block);
  }
  s.stop();
}

BENCHMARK(BM_EmptyLoop)->Iterations(kIterations);
BENCHMARK(BM_RawTscPair)->Iterations(kIterations);
BENCHMARK(BM_ClockGettimePair)->Iterations(kIterations);
BENCHMARK(BM_ScopeEnabled)->Iterations(kIterations);
BENCHMARK(BM_ScopeDisabled)->Iterations(kIterations);
BENCHMARK(BM_Counter)->Iterations(kIterations);
BENCHMARK(BM_MemoryEvent)->Iterations(kIterations);

// Collects each benchmark's time per iteration for the summary table.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs)
      if (!r.error_occurred) {
        ns_[r.benchmark_name()] = r.GetAdjustedRealTime();
        cpu_ns_[r.benchmark_name()] = r.GetAdjustedCPUTime();
      }
  }
  double ns(const std::string& name) const { return find(ns_, name); }
  double cpu_ns(const std::string& name) const { return find(cpu_ns_, name); }

 private:
  static double find(const std::map<std::string, double>& m, const std::string& name) {
    auto it = m.find(name + "/iterations:" + std::to_string(kIterations));
    return it == m.end() ? -1 : it->second;
  }
  std::map<std::string, double> ns_, cpu_ns_;
};

// Loops without Google Benchmark, for callgrind (`--toggle-collect=*run_loop*`).
__attribute__((noinline)) void run_loop_scope(long n) {
  for (long i = 0; i < n; ++i) {
    MLPROF_SCOPE("bench");
    __asm__ volatile("" ::: "memory");
  }
}
__attribute__((noinline)) void run_loop_empty(long n) {
  for (long i = 0; i < n; ++i) __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void run_loop_disabled(long n) {
  for (long i = 0; i < n; ++i) {
    MLPROF_SCOPE("bench");
    __asm__ volatile("" ::: "memory");
  }
}

int loop_main(const char* which, long n) {
  mlprof::SessionOptions o = bench_options();
  o.buffer_mb = static_cast<size_t>(n * 32 / (1 << 20) + 8);
  mlprof::Session s(o);
  if (!s.start().is_ok()) return 1;
  if (std::strcmp(which, "scope") == 0) {
    run_loop_scope(n);
  } else if (std::strcmp(which, "disabled") == 0) {
    mlprof::set_enabled(false);
    run_loop_disabled(n);
  } else {
    run_loop_empty(n);
  }
  mlprof::Trace t = s.stop();
  std::printf("%s: %zu slices, %llu dropped\n", which, t.slices.size(),
              static_cast<unsigned long long>(t.meta.dropped_events));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strncmp(argv[1], "--loop=", 7) == 0)
    return loop_main(argv[1] + 7, std::atol(argv[2]));
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  double tsc = reporter.ns("BM_RawTscPair"), tsc_cpu = reporter.cpu_ns("BM_RawTscPair");
  std::printf(
      "\n| what | wall ns/op | vs raw TSC pair | CPU ns/op | vs raw TSC pair |\n"
      "| --- | ---: | ---: | ---: | ---: |\n");
  const std::pair<const char*, const char*> rows[] = {
      {"BM_ScopeEnabled", "enabled scope (begin+end)"},
      {"BM_ScopeDisabled", "scope disabled at run time"},
      {"BM_Counter", "counter(\"loss\", v)"},
      {"BM_MemoryEvent", "memory event (track_alloc or track_free)"},
      {"BM_EmptyLoop", "empty loop"},
      {"BM_RawTscPair", "raw rdtsc pair"},
      {"BM_ClockGettimePair", "clock_gettime(CLOCK_MONOTONIC) pair"},
  };
  for (auto& [bm, label] : rows) {
    double ns = reporter.ns(bm), cpu = reporter.cpu_ns(bm);
    if (ns < 0) continue;
    std::printf("| %s | %.2f | %.2fx | %.2f | %.2fx |\n", label, ns, tsc > 0 ? ns / tsc : 0.0, cpu,
                tsc_cpu > 0 ? cpu / tsc_cpu : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
