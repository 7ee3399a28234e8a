// `mlprof run --gpu` samples NVML: checked against a fake libnvidia-ml.so.1 with two GPUs whose
// readings follow a script (tests/gpu_fakes/fake_nvml.cpp), and with no NVML at all (the
// machine without a driver: one line, and the run completes).
#include <gtest/gtest.h>

#include <map>

#include "gpu_fakes/fake_gpu_run.h"
#include "record/nvml/nvml_sampler.h"

namespace {

using namespace mlprof;
using namespace mlprof::testing;

#ifdef MLPROF_FAKE_NVML_LIB
const char* const kFakeNvml = MLPROF_FAKE_NVML_LIB;
#else
const char* const kFakeNvml = nullptr;
#endif

const char* const kSleeper = "sh -c 'sleep 0.3'";

// Counter series "GPU N metric" -> its (ts, value) points in time order.
std::map<std::string, std::vector<std::pair<int64_t, double>>> counters(const Trace& t) {
  std::map<std::string, std::vector<std::pair<int64_t, double>>> out;
  for (size_t i = 0; i < t.counter_series.size(); ++i)
    out[std::string(t.str(t.counter_series[i].name))];
  for (size_t i = 0; i < t.counters.size(); ++i)
    out[std::string(t.str(t.counter_series[t.counters.series[i]].name))].emplace_back(
        t.counters.ts[i], t.counters.value[i]);
  for (auto& [name, points] : out) std::sort(points.begin(), points.end());
  return out;
}

TEST(nvml_capture, CounterTracksFollowTheScript) {
  ASSERT_NE(kFakeNvml, nullptr);
  FakeGpuRun r = run_mlprof(std::string("MLPROF_NVML_LIB='") + kFakeNvml + "'",
                            "--gpu --gpu-interval 20 -q", kSleeper);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.trace) << r.err;
  EXPECT_EQ(r.err.find("no GPU metrics"), std::string::npos) << r.err;
  const Trace& t = *r.trace;
  auto c = counters(t);
  auto& util0 = c["GPU 0 utilization"];
  // Sampled while the command ran (every 20 ms of 300 ms) and once after it ended.
  ASSERT_GE(util0.size(), 3u);
  size_t n = util0.size();
  for (int d = 0; d < 2; ++d) {
    std::string g = "GPU " + std::to_string(d) + " ";
    ASSERT_EQ(c[g + "utilization"].size(), n) << g;
    ASSERT_EQ(c[g + "memory utilization"].size(), n) << g;
    ASSERT_EQ(c[g + "memory used"].size(), n) << g;
    ASSERT_EQ(c[g + "temperature"].size(), n) << g;
    ASSERT_EQ(c[g + "SM clock"].size(), n) << g;
    for (size_t k = 0; k < n; ++k) {
      EXPECT_EQ(c[g + "utilization"][k].second, 10.0 * d + k % 100) << g << k;
      EXPECT_EQ(c[g + "memory utilization"][k].second, 5.0 + k % 50) << g << k;
      EXPECT_EQ(c[g + "memory used"][k].second, double((d + 1ull) << 30) + double(k << 20));
      EXPECT_EQ(c[g + "temperature"][k].second, 40.0 + d);
      EXPECT_EQ(c[g + "SM clock"][k].second, 1410.0 + 100 * d);
      // Both devices are read at the same instant.
      EXPECT_EQ(c[g + "utilization"][k].first, util0[k].first);
    }
  }
  auto& power0 = c["GPU 0 power"];
  ASSERT_EQ(power0.size(), n);
  for (size_t k = 0; k < n; ++k) EXPECT_DOUBLE_EQ(power0[k].second, 100.0 + 0.5 * k);  // W
  EXPECT_TRUE(c["GPU 1 power"].empty()) << "NVML_ERROR_NOT_SUPPORTED: no points, not zeros";
  for (size_t i = 0; i < t.counter_series.size(); ++i) {
    std::string name(t.str(t.counter_series[i].name));
    std::string unit(t.str(t.counter_series[i].unit));
    std::string want = name.find("utilization") != std::string::npos   ? "%"
                       : name.find("memory used") != std::string::npos ? "bytes"
                       : name.find("power") != std::string::npos       ? "W"
                       : name.find("SM clock") != std::string::npos    ? "MHz"
                                                                       : "C";
    EXPECT_EQ(unit, want) << name;
  }
  // Same time base as the host events: samples fall in the command's lifetime measured by
  // mlprof (the last one right after it ended).
  auto life = slices_named(t, "process sh");
  ASSERT_EQ(life.size(), 1u);
  int64_t lo = t.slices.ts[life[0]], hi = t.slices.end(life[0]);
  for (size_t k = 0; k + 1 < n; ++k) {
    EXPECT_GE(util0[k].first, lo);
    EXPECT_LE(util0[k].first, hi);
  }
  EXPECT_GE(util0[n - 1].first, hi);
  EXPECT_LT(util0[n - 1].first - hi, 1000000000);
}

TEST(nvml_capture, NoDriverOneLineNoticeAndTheRunCompletes) {
  // A real program under --gpu where no NVIDIA driver library can be loaded.
  FakeGpuRun r = run_mlprof("MLPROF_NVML_LIB=/nonexistent/libnvidia-ml.so.1", "--gpu -q",
                            "sh -c 'echo hello; exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;  // the command's own exit code
  ASSERT_TRUE(r.trace) << r.err;
  EXPECT_EQ(r.out, "hello\n");
  std::string notice =
      "mlprof run: --gpu: no GPU metrics (/nonexistent/libnvidia-ml.so.1 not found: no NVIDIA "
      "driver on this machine); CPU capture continues\n";
#ifndef MLPROF_HAVE_CUPTI_LIB  // a build without the CUDA toolkit says so too
  notice +=
      "mlprof run: --gpu: libmlprof_cupti.so was not built (no CUDA toolkit at build time); no "
      "kernel capture\n";
#endif
  EXPECT_EQ(r.err, notice);
  EXPECT_EQ(slices_named(*r.trace, "process sh").size(), 1u);
  EXPECT_TRUE(r.trace->counter_series.empty());
}

// Opening NVML fails with the code of why (include/mlprof/status.h): no driver library is
// kNotFound, a library that is not a usable NVML (libc here: no NVML functions) a failed
// precondition; neither is bad input.
TEST(nvml_capture, OpenFailuresCarryTheirCode) {
  auto missing = NvmlSampler::open("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.error();
  auto not_nvml = NvmlSampler::open("libc.so.6");
  ASSERT_FALSE(not_nvml.is_ok());
  EXPECT_EQ(not_nvml.code(), StatusCode::kFailedPrecondition) << not_nvml.error();
  EXPECT_EQ(not_nvml.error(), "libc.so.6 lacks an expected NVML function (too old?)");
}

}  // namespace
