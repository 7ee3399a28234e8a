// Times the GPU analyses alone (import excluded) on real traces:
//   build/gpu_analysis_tool TRACE...   (prints ms per analysis, best of 5)
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/import.h"

namespace {

template <typename F>
double best_ms(F&& f) {
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    auto t = mlprof::load_trace(argv[i]);
    if (!t) {
      std::fprintf(stderr, "%s\n", t.error().c_str());
      return 2;
    }
    const mlprof::Trace& trace = *t;
    mlprof::GpuOptions hta;
    hta.hta_compatible = true;
    double gpu = best_ms([&] { mlprof::analyze_gpu(trace); });
    double gpu_hta = best_ms([&] { mlprof::analyze_gpu(trace, hta); });
    double kernels = best_ms([&] { mlprof::analyze_kernels(trace); });
    double ranks = best_ms([&] { mlprof::analyze_ranks({&trace}); });
    std::printf(
        "%s: %zu slices; gpu %.1f ms, gpu --hta-compatible %.1f ms, kernels %.1f ms, "
        "ranks %.1f ms\n",
        argv[i], trace.slices.size(), gpu, gpu_hta, kernels, ranks);
  }
  return 0;
}
