// The GPU capture of `mlprof run --gpu` without a GPU: the real injection library
// (libmlprof_cupti.so) bound to a fake libcupti.so.13 (tests/gpu_fakes/fake_cupti.cpp) that
// delivers CUDA 13 activity records, loaded by a program that does what the driver does at
// cuInit (tests/gpu_fakes/fake_cuda_app.cpp). The expected rows below are the fake's script
// written out by hand; every time is BASE + an offset, BASE being the fake's first reading of
// the clock the injection library registered.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "gpu_fakes/fake_gpu_run.h"

namespace {

using namespace mlprof;
using namespace mlprof::testing;

#if defined(MLPROF_FAKE_CUPTI_LIB) && defined(MLPROF_FAKE_CUDA_APP)
constexpr bool kHaveFakes = true;
const char* const kFakeCupti = MLPROF_FAKE_CUPTI_LIB;
const char* const kFakeApp = MLPROF_FAKE_CUDA_APP;
#else
constexpr bool kHaveFakes = false;
const char* const kFakeCupti = "";
const char* const kFakeApp = "";
#endif

constexpr int64_t us = 1000;

class cupti_capture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!kHaveFakes) return;
    run_ =
        new FakeGpuRun(run_mlprof(std::string("FAKE_CUPTI_LIB='") + kFakeCupti +
                                      "' MLPROF_CUPTI_DRIVER=1 MLPROF_NVML_LIB=/nonexistent/nvml",
                                  "--gpu", std::string("'") + kFakeApp + "'"));
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    if (!kHaveFakes) GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers";
    ASSERT_EQ(run_->exit_code, 0) << run_->err;
    ASSERT_TRUE(run_->trace.has_value()) << run_->err;
  }
  const Trace& t() const { return *run_->trace; }
  // BASE: the runtime launch of correlation 11 starts at BASE + 100 us.
  int64_t base() const {
    auto s = slices_named(t(), "cudaLaunchKernel");
    EXPECT_FALSE(s.empty());
    return s.empty() ? 0 : t().slices.ts[s.front()] - 100 * us;
  }
  size_t one(std::string_view name) const {
    auto s = slices_named(t(), name);
    EXPECT_EQ(s.size(), 1u) << name;
    return s.empty() ? 0 : s.front();
  }
  std::string where(size_t slice) const { return t().track_label(t().slices.track[slice]); }
  static FakeGpuRun* run_;
};
FakeGpuRun* cupti_capture::run_ = nullptr;

TEST_F(cupti_capture, KernelRowsAndArgs) {
  const Trace& tr = t();
  int64_t b = base();
  size_t k = one("vector_add(float*, float*, float*, int)");
  EXPECT_EQ(tr.slices.ts[k], b + 120 * us);
  EXPECT_EQ(tr.slices.dur[k], 30 * us);
  EXPECT_EQ(tr.str(tr.slices.cat[k]), "kernel");
  EXPECT_TRUE(tr.is_gpu_track(tr.slices.track[k]));
  EXPECT_EQ(tr.tracks[tr.slices.track[k]].device, 0);
  EXPECT_EQ(tr.tracks[tr.slices.track[k]].stream, 7);
  EXPECT_EQ(arg(tr, k, "correlation"), "11");
  EXPECT_EQ(arg(tr, k, "device"), "0");
  EXPECT_EQ(arg(tr, k, "stream"), "7");
  EXPECT_EQ(arg(tr, k, "context"), "1");
  EXPECT_EQ(arg(tr, k, "grid"), "[4, 2, 1]");
  EXPECT_EQ(arg(tr, k, "block"), "[256, 1, 1]");
  EXPECT_EQ(arg(tr, k, "registers per thread"), "32");
  EXPECT_EQ(arg(tr, k, "shared memory"), "1536");  // 1024 static + 512 dynamic
  EXPECT_EQ(arg(tr, k, "External id"), "4242");
  EXPECT_EQ(arg(tr, k, "graph id"), "<none>");

  size_t s = one("simple_kernel");  // not a mangled name: kept as is
  EXPECT_EQ(tr.slices.ts[s], b + 510 * us);
  EXPECT_EQ(tr.slices.dur[s], 10 * us);
  EXPECT_EQ(tr.tracks[tr.slices.track[s]].stream, 8);
  EXPECT_EQ(arg(tr, s, "grid"), "[1, 1, 1]");

  size_t g = one("graph_kernel");
  EXPECT_EQ(tr.slices.ts[g], b + 1000 * us);
  EXPECT_EQ(arg(tr, g, "graph id"), "5");
  EXPECT_EQ(arg(tr, g, "correlation"), "19");

  size_t w = one("worker_kernel()");  // from the second thread's buffer, on GPU 1
  EXPECT_EQ(tr.slices.ts[w], b + 1110 * us);
  EXPECT_EQ(tr.slices.dur[w], 20 * us);
  EXPECT_EQ(tr.tracks[tr.slices.track[w]].device, 1);
  EXPECT_EQ(tr.tracks[tr.slices.track[w]].stream, 3);
  EXPECT_EQ(where(w), "GPU 1 stream 3");

  size_t kernels = 0;
  for (size_t i = 0; i < tr.slices.size(); ++i) kernels += tr.str(tr.slices.cat[i]) == "kernel";
  EXPECT_EQ(kernels, 4u);
  EXPECT_NE(run_->out.find("GPU capture: 4 kernels, 3 memcpys, 1 memsets, 2 syncs, 9 CUDA API "
                           "calls, 7 launch->GPU links, 7 records dropped by CUPTI"),
            std::string::npos)
      << run_->out;
}

TEST_F(cupti_capture, MemcpyOfEachKindAndMemset) {
  const Trace& tr = t();
  int64_t b = base();
  size_t h = one("Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(tr.slices.ts[h], b + 210 * us);
  EXPECT_EQ(tr.slices.dur[h], 4 * us);
  EXPECT_EQ(tr.str(tr.slices.cat[h]), "gpu_memcpy");
  EXPECT_EQ(arg(tr, h, "bytes"), "4096");
  EXPECT_DOUBLE_EQ(tr.slice_arg(h, "memory bandwidth (GB/s)")->as_double().value(), 1.024);
  EXPECT_EQ(arg(tr, h, "correlation"), "12");

  size_t d = one("Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(tr.slices.ts[d], b + 305 * us);
  EXPECT_EQ(arg(tr, d, "bytes"), "1048576");
  EXPECT_DOUBLE_EQ(tr.slice_arg(d, "memory bandwidth (GB/s)")->as_double().value(),
                   1048576.0 / 10000.0);

  size_t dd = one("Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(tr.tracks[tr.slices.track[dd]].stream, 8);
  EXPECT_EQ(arg(tr, dd, "bytes"), "8192");

  size_t m = one("Memset (Device)");
  EXPECT_EQ(tr.slices.ts[m], b + 400 * us);
  EXPECT_EQ(tr.slices.dur[m], 2 * us);
  EXPECT_EQ(tr.str(tr.slices.cat[m]), "gpu_memset");
  EXPECT_EQ(arg(tr, m, "bytes"), "256");
}

TEST_F(cupti_capture, RuntimeAndDriverApiRows) {
  const Trace& tr = t();
  int64_t b = base();
  // CUPTI's version suffixes (_v7000) are dropped, as Kineto does.
  struct Want {
    const char* name;
    const char* cat;
    int64_t start_us, dur_us;
  };
  const Want want[] = {
      {"cudaMemcpyAsync", "cuda_runtime", 200, 5},
      {"cudaMemcpy", "cuda_runtime", 300, 20},
      {"cuMemcpyDtoDAsync", "cuda_driver", 330, 2},
      {"cudaMemsetAsync", "cuda_runtime", 395, 3},
      {"cuLaunchKernel", "cuda_driver", 500, 5},
      {"cudaStreamSynchronize", "cuda_runtime", 598, 104},
      {"cudaDeviceSynchronize", "cuda_runtime", 798, 104},
  };
  for (const Want& w : want) {
    size_t s = one(w.name);
    EXPECT_EQ(tr.str(tr.slices.cat[s]), w.cat) << w.name;
    EXPECT_EQ(tr.slices.ts[s], b + w.start_us * us) << w.name;
    EXPECT_EQ(tr.slices.dur[s], w.dur_us * us) << w.name;
    EXPECT_FALSE(tr.is_gpu_track(tr.slices.track[s])) << w.name;
  }
  auto launches = slices_named(tr, "cudaLaunchKernel");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(arg(tr, launches[0], "External id"), "4242");
  EXPECT_EQ(arg(tr, launches[0], "cbid"), "211");
  // Per-thread buffers: the second launch is on another host thread of the same process.
  const Track& t0 = tr.tracks[tr.slices.track[launches[0]]];
  const Track& t1 = tr.tracks[tr.slices.track[launches[1]]];
  EXPECT_EQ(t0.pid, t1.pid);
  EXPECT_EQ(t1.tid, t0.tid + 1);
  EXPECT_EQ(tr.slices.ts[launches[1]], b + 1100 * us);
}

TEST_F(cupti_capture, LaunchToGpuWorkFlows) {
  const Trace& tr = t();
  std::set<std::pair<std::string, std::string>> got;
  for (size_t f = 0; f < tr.flows.size(); ++f) {
    ASSERT_EQ(tr.str(tr.flows.cat[f]), "ac2g");
    ASSERT_GE(tr.flows.src_slice[f], 0);
    ASSERT_GE(tr.flows.dst_slice[f], 0);
    got.emplace(tr.str(tr.slices.name[tr.flows.src_slice[f]]),
                tr.str(tr.slices.name[tr.flows.dst_slice[f]]));
  }
  std::set<std::pair<std::string, std::string>> want = {
      {"cudaLaunchKernel", "vector_add(float*, float*, float*, int)"},
      {"cudaMemcpyAsync", "Memcpy HtoD (Pageable -> Device)"},
      {"cudaMemcpy", "Memcpy DtoH (Device -> Pinned)"},
      {"cuMemcpyDtoDAsync", "Memcpy DtoD (Device -> Device)"},
      {"cudaMemsetAsync", "Memset (Device)"},
      {"cuLaunchKernel", "simple_kernel"},
      {"cudaLaunchKernel", "worker_kernel()"},
  };
  EXPECT_EQ(got, want);  // graph_kernel: no launch record, no flow
  EXPECT_EQ(tr.flows.size(), 7u);
}

TEST_F(cupti_capture, SynchronizationRows) {
  const Trace& tr = t();
  int64_t b = base();
  size_t s = one("Stream Sync");
  EXPECT_EQ(tr.str(tr.slices.cat[s]), "cuda_sync");
  EXPECT_EQ(tr.slices.ts[s], b + 600 * us);
  EXPECT_EQ(tr.slices.dur[s], 100 * us);
  EXPECT_EQ(where(s), "GPU 0 stream 7");
  EXPECT_EQ(arg(tr, s, "stream"), "7");
  EXPECT_EQ(arg(tr, s, "correlation"), "17");
  // A context sync names no stream: it sits in the waiting thread's cudaDeviceSynchronize.
  size_t c = one("Context Sync");
  EXPECT_EQ(tr.str(tr.slices.cat[c]), "cuda_sync");
  EXPECT_EQ(tr.slices.ts[c], b + 800 * us);
  EXPECT_EQ(arg(tr, c, "stream"), "<none>");
  size_t api = one("cudaDeviceSynchronize");
  EXPECT_EQ(tr.slices.track[c], tr.slices.track[api]);
  EXPECT_EQ(tr.slices.parent[c], static_cast<int32_t>(api));
}

TEST_F(cupti_capture, DroppedAndBadTimestampsSurfaced) {
  const Trace& tr = t();
  EXPECT_EQ(tr.meta.dropped_events, 7u);  // 3 + 4, one count per buffer
  EXPECT_EQ(meta_extra(tr, "gpu_dropped_records"), "7");
  EXPECT_EQ(meta_extra(tr, "gpu_bad_timestamps"), "2");
  EXPECT_TRUE(slices_named(tr, "never_started").empty());
  for (size_t i = 0; i < tr.slices.size(); ++i)
    EXPECT_NE(arg(tr, i, "correlation"), "21") << "the copy that ends before it starts";
  EXPECT_NE(run_->out.find("2 GPU records with zero or reversed timestamps skipped"),
            std::string::npos)
      << run_->out;
  EXPECT_NE(run_->out.find("WARNING: the recorder dropped 7 events"), std::string::npos)
      << run_->out;
}

TEST_F(cupti_capture, GpuClockIsTheHostClock) {
  // The fake's own clock runs a day ahead of CLOCK_MONOTONIC: GPU rows inside the command's
  // lifetime (measured by mlprof on the host) prove the injection library gave CUPTI our clock.
  const Trace& tr = t();
  auto life = slices_named(tr, "process fake_cuda_app");
  ASSERT_EQ(life.size(), 1u);
  int64_t lo = tr.slices.ts[life[0]], hi = tr.slices.end(life[0]);
  size_t gpu_rows = 0;
  for (size_t i = 0; i < tr.slices.size(); ++i) {
    if (i == life[0]) continue;
    EXPECT_GE(tr.slices.ts[i], lo) << tr.str(tr.slices.name[i]);
    EXPECT_LE(tr.slices.end(i), hi) << tr.str(tr.slices.name[i]);
    gpu_rows += tr.is_gpu_track(tr.slices.track[i]);
  }
  EXPECT_EQ(gpu_rows, 9u);  // 4 kernels, 3 memcpys, 1 memset, 1 stream sync
}

// Issue 32 item 1: the program closes fds 3..1023 and opens a file (fd 3, the tracer's old
// number) that it keeps open through exit, when the tracer writes its records. The file must hold
// only the program's bytes, the capture every GPU row, and the run must say what happened.
TEST(cupti_closefrom, RecordsNeverLandInTheProgramsFile) {
  if (!kHaveFakes) GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers";
  std::string data =
      ::testing::TempDir() + "/cupti_closefrom_" + std::to_string(::getpid()) + ".txt";
  FakeGpuRun r =
      run_mlprof(std::string("FAKE_CUPTI_LIB='") + kFakeCupti + "' FAKE_APP_CLOSEFROM='" + data +
                     "' MLPROF_NVML_LIB=/nonexistent/nvml",
                 "--gpu", std::string("'") + kFakeApp + "'");
  std::string written = read_file(data);
  std::remove(data.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(written, "the app's data\n");
  ASSERT_TRUE(r.trace.has_value()) << r.err;
  size_t gpu_rows = 0;
  for (size_t i = 0; i < r.trace->slices.size(); ++i)
    gpu_rows += r.trace->is_gpu_track(r.trace->slices.track[i]);
  EXPECT_EQ(gpu_rows, 9u);  // as GpuClockIsTheHostClock: every row of the fake's script
  EXPECT_NE(r.out.find("closed the GPU tracer's capture file 1 time(s)"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("not closed"), std::string::npos) << r.out;
}

// The second H100 session: torch.profiler inside `mlprof run --gpu` registered Kineto's buffer
// callbacks over mlprof's, CUPTI completed mlprof's buffer to Kineto ("unknown buffer") and both
// lost the GPU activity, while mlprof said only "0 kernels". The run must say what happened.
TEST(cupti_second_client, TakeoverIsReported) {
  if (!kHaveFakes) GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers";
  FakeGpuRun r = run_mlprof(std::string("FAKE_CUPTI_LIB='") + kFakeCupti +
                                "' FAKE_APP_SECOND_CLIENT=1 MLPROF_NVML_LIB=/nonexistent/nvml",
                            "--gpu", std::string("'") + kFakeApp + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("second client: unknown buffer"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("another CUPTI client in the process"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 1 buffers mlprof handed to CUPTI went to it"), std::string::npos)
      << r.out;
}

// One client: every buffer comes back, no such note.
TEST(cupti_second_client, NoNoteWithOneClient) {
  if (!kHaveFakes) GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers";
  FakeGpuRun r = run_mlprof(
      std::string("FAKE_CUPTI_LIB='") + kFakeCupti + "' MLPROF_NVML_LIB=/nonexistent/nvml", "--gpu",
      std::string("'") + kFakeApp + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("another CUPTI client"), std::string::npos) << r.out;
}

}  // namespace
