// The step replay (include/mlprof/analyze/step_replay.h): the unchanged replay reproduces the
// recorded step times, and each change moves them by what a hand count of the trace says.
#include "mlprof/analyze/step_replay.h"

#include <gtest/gtest.h>

#include <string>

#include "mlprof/analysis_set.h"
#include "mlprof/analyze/critical_path.h"
#include "mlprof/analyze/dependency_graph.h"
#include "mlprof/import.h"
#include "shared_data.h"

namespace mlprof {
namespace {

// One host thread, two steps; per step a 100 us data-loading span, one 10 us launch (inside a
// 20 us op) of a 500 us kernel, and a cudaDeviceSynchronize that waits for it.
Trace two_steps() {
  std::string ev;
  auto x = [&](const std::string& cat, const std::string& name, int64_t ts, int64_t dur, int pid,
               int tid, const std::string& args) {
    if (!ev.empty()) ev += ",";
    ev += R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":)" +
          std::to_string(pid) + R"(,"tid":)" + std::to_string(tid) + R"(,"ts":)" +
          std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"args":{)" + args + "}}";
  };
  int64_t t = 1000;
  for (int k = 0; k < 2; ++k) {
    int64_t s = t;
    x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, 100, 1,
      1, "");
    t += 100;
    x("cpu_op", "aten::mm", t, 20, 1, 1, "");
    std::string corr = R"("correlation":)" + std::to_string(10 + k);
    x("cuda_runtime", "cudaLaunchKernel", t + 10, 10, 1, 1, corr);
    x("kernel", "gemm_kernel", t + 15, 500, 0, 7, corr + R"(,"device":0,"stream":7)");
    t += 20;
    // The kernel ends at t - 5 + 500; the sync returns 5 us later.
    int64_t end = t - 5 + 500 + 5;
    x("cuda_runtime", "cudaDeviceSynchronize", t, end - t, 1, 1,
      R"("correlation":)" + std::to_string(20 + k));
    t = end;
    x("user_annotation", "ProfilerStep#" + std::to_string(k), s, t - s, 1, 1, "");
    t += 10;
  }
  std::string json = R"({"deviceProperties":[{"id":0,"name":"NVIDIA A100","computeMajor":8}],)"
                     R"("traceEvents":[)" +
                     ev + "]}";
  auto r = import_chrome_json_buffer(json, "two_steps");
  EXPECT_TRUE(r.is_ok()) << r.error();
  return std::move(*r);
}

TEST(StepReplay, BaselineReproducesTheSteps) {
  Trace t = two_steps();
  StepModel m(t);
  ASSERT_TRUE(m.usable());
  EXPECT_TRUE(m.has_gpu());
  EXPECT_EQ(m.steps(), 2u);
  EXPECT_TRUE(m.baseline_exact());
  ReplayTime base = m.replay();
  ASSERT_EQ(base.step_ns.size(), 2u);
  // Step 0: 100 + 20 + (500 - 5 + 5) = 620 us; step 1 starts 10 us after step 0's end.
  EXPECT_EQ(base.step_ns[0], 620'000);
  EXPECT_EQ(base.step_ns[1], 630'000);
}

TEST(StepReplay, DataLoadingOverlappedSavesItsTime) {
  Trace t = two_steps();
  StepModel m(t);
  ReplayChange c;
  c.overlap_data_loading = true;
  ReplaySaving s = replay_saving(m.replay(), m.replay(c));
  EXPECT_EQ(s.saving_ns, 200'000);  // 100 us per step
  EXPECT_EQ(s.step_min_ns, 100'000);
  EXPECT_EQ(s.step_max_ns, 100'000);
}

TEST(StepReplay, SyncBehindBusyGpuSavesOnlyTheGap) {
  Trace t = two_steps();
  StepModel m(t);
  ReplayChange c;
  c.remove_host_waits = true;
  ReplaySaving s = replay_saving(m.replay(), m.replay(c));
  // Without the sync, step 1's loading (100 us) and op overlap step 0's kernel: step 1's kernel
  // starts right after step 0's, so step 1 takes its 500 us of GPU instead of
  // 10 + 100 + 20 + 500 = 630 us; step 0 ends with its kernel, 5 us before the sync returned.
  EXPECT_EQ(s.saving_ns, 135'000);
  EXPECT_EQ(s.step_min_ns, 5'000);
  EXPECT_EQ(s.step_max_ns, 130'000);
}

TEST(StepReplay, FasterKernelsAndLaunches) {
  Trace t = two_steps();
  StepModel m(t);
  ReplayChange k;
  k.faster_kernels.assign(t.strings.size(), 0);
  k.faster_kernels[t.strings.find("gemm_kernel")] = 1;
  k.kernel_speedup = 2;
  EXPECT_EQ(replay_saving(m.replay(), m.replay(k)).saving_ns, 500'000);  // 250 us per step
  ReplayChange l;
  l.remove_launch_overhead = true;
  // A CUDA graph: aten::mm's 10 us of dispatch, the 10 us launch call and the 5 us launch delay
  // go; the kernel starts right after the loading, 15 us earlier than recorded, and the sync
  // returns 15 us earlier per step.
  EXPECT_EQ(replay_saving(m.replay(), m.replay(l)).saving_ns, 30'000);
}

// One graph for the critical path and the replay (dependency_graph.h): its vertices and links
// counted by hand on two_steps(), and both consumers give what they give on their own.
TEST(StepReplay, OneDependencyGraphForCriticalPathAndReplay) {
  Trace t = two_steps();
  DependencyGraph g(t);
  // Host calls: aten::mm, cudaLaunchKernel, cudaDeviceSynchronize per step (the DataLoader and
  // ProfilerStep ranges are user annotations, not calls).
  ASSERT_EQ(g.host_calls().size(), 6u);
  EXPECT_FALSE(g.host_calls()[0].runtime);  // aten::mm
  EXPECT_TRUE(g.host_calls()[1].runtime);   // the launch
  EXPECT_EQ(g.host_calls()[1].corr, 10);
  EXPECT_EQ(g.host_calls()[0].corr, kNoCorrelation);
  // GPU events: one kernel per step on stream 7, linked by correlation 10 and 11.
  ASSERT_EQ(g.gpu_events().size(), 2u);
  EXPECT_EQ(g.gpu_events()[0].corr, 10);
  EXPECT_EQ(g.gpu_events()[1].corr, 11);
  EXPECT_EQ(g.gpu_events()[0].stream, 7);
  EXPECT_FALSE(g.has_sync_events());
  ASSERT_EQ(g.gpu_ops().events.size(), 2u);
  EXPECT_EQ(g.markers().slices.size(), 2u);
  // The replay read from the graph is the replay built alone; it is built once.
  const StepModel& m = g.replay();
  EXPECT_EQ(&m, &g.replay());
  EXPECT_EQ(m.replay().step_ns, StepModel(t).replay().step_ns);
  // The critical path walks the same graph, for any window.
  for (int64_t step : {0, 1}) {
    CriticalPathOptions o;
    o.step = step;
    CriticalPathResult a = analyze_critical_path(t, o, &g), b = analyze_critical_path(t, o);
    EXPECT_EQ(a.path_ns, b.path_ns);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.edges, b.edges);
    // Step 0 (1000..1630 us): the kernel's 500 us bound it, after 10 us of aten::mm before
    // the launch and the 5 us launch delay.
    EXPECT_GE(a.path_ns, 515'000);
  }
  // An AnalysisSet builds the graph once; critical_path and bottlenecks read it.
  AnalysisSet set(t);
  EXPECT_EQ(&set.dependency_graph(), &set.dependency_graph());
  EXPECT_EQ(set.critical_path().path_ns, analyze_critical_path(t).path_ns);
  EXPECT_TRUE(set.bottlenecks().replayed);
}

TEST(StepReplay, SharedTracesReplayExactly) {
  for (const char* rel : {"traces/kineto-gpu/critical_path/alexnet/"
                          "benchmark_result_2869224_1695835535_trace.json.gz",
                          "traces/modules/mi300_resnet_act_checkpoint.json.gz",
                          "traces/kineto-gpu/trace_file_list/inference_rank_1.json.gz"}) {
    auto p = test::shared_path(rel);
    if (!p) GTEST_SKIP() << test::missing_shared(rel);
    auto t = load_trace(*p);
    ASSERT_TRUE(t.is_ok()) << t.error();
    StepModel m(*t);
    ASSERT_TRUE(m.usable()) << rel;
    EXPECT_TRUE(m.baseline_exact()) << rel;
  }
}

}  // namespace
}  // namespace mlprof
