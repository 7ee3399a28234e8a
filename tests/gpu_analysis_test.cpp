// GPU analyses on small hand-built traces whose answers are worked out in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "mlprof/analyze/gpu.h"
#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/kernel_class.h"
#include "mlprof/analyze/kernels.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/import.h"
#include "render/gpu_render.h"
#include "render/kernels_render.h"
#include "render/ranks_render.h"
#include "shared_data.h"
#include "trace/json_writer.h"

namespace mlprof {
namespace {

constexpr int64_t us = 1000;

// A CPU thread launching work onto GPU 0 streams, Kineto-style (correlation args).
class GpuTraceBuilder {
 public:
  GpuTraceBuilder() {
    cpu_ = b_.thread_track(b_.process(100), 100);
    k_corr_ = b_.intern("correlation");
    k_bytes_ = b_.intern("bytes");
    k_grid_ = b_.intern("grid");
    k_block_ = b_.intern("block");
    k_regs_ = b_.intern("registers per thread");
    k_occ_ = b_.intern("est. achieved occupancy %");
  }
  uint32_t stream(int64_t s) {
    uint32_t t = b_.thread_track(b_.process(0), s);
    b_.mark_gpu_track(t, 0, s);
    return t;
  }
  // A launch call [launch_ts, +launch_dur) and its GPU event [ts, +dur) on `stream`.
  void launch(int64_t launch_ts, int64_t launch_dur, int64_t stream_id, int64_t ts, int64_t dur,
              const char* name, const char* cat = "kernel", int64_t bytes = 0,
              const char* call = "cudaLaunchKernel") {
    int64_t corr = ++corr_;
    uint32_t m = b_.args_mark();
    b_.arg_int(k_corr_, corr);
    b_.add_slice(cpu_, launch_ts, launch_dur, b_.intern(call), b_.intern("cuda_runtime"),
                 b_.args_since(m));
    m = b_.args_mark();
    b_.arg_int(k_corr_, corr);
    if (bytes) b_.arg_int(k_bytes_, bytes);
    if (std::string_view(cat) == "kernel") {
      b_.arg_json(k_grid_, "[80, 1, 1]");
      b_.arg_json(k_block_, "[128, 1, 1]");
      b_.arg_int(k_regs_, 32);
      b_.arg_int(k_occ_, 50);
    }
    b_.add_slice(stream(stream_id), ts, dur, b_.intern(name), b_.intern(cat), b_.args_since(m));
  }
  void cpu_slice(int64_t ts, int64_t dur, const char* name, const char* cat = "cpu_op") {
    b_.add_slice(cpu_, ts, dur, b_.intern(name), b_.intern(cat));
  }
  Trace finish() { return std::move(b_).finish(); }

 private:
  TraceBuilder b_;
  uint32_t cpu_;
  int64_t corr_ = 0;
  StringId k_corr_, k_bytes_, k_grid_, k_block_, k_regs_, k_occ_;
};

TEST(IntervalSet, MergeAndIntersect) {
  std::vector<Interval> a{{5, 10}, {0, 3}, {2, 4}, {10, 12}};
  merge_intervals(a);
  ASSERT_EQ(a, (std::vector<Interval>{{0, 4}, {5, 12}}));
  EXPECT_EQ(total_length(a), 11);
  std::vector<Interval> b{{3, 6}, {11, 20}};
  EXPECT_EQ(intersection_length(a, b), 1 + 1 + 1);
  EXPECT_EQ(intersect(a, b), (std::vector<Interval>{{3, 4}, {5, 6}, {11, 12}}));
}

TEST(KernelClass, HtaTypesAndTensorCores) {
  EXPECT_EQ(hta_kernel_type("ncclKernel_AllReduce_RING_LL_Sum_float(...)"),
            KernelType::kCommunication);
  EXPECT_EQ(hta_kernel_type("ncclDevKernel_AllGather"), KernelType::kCommunication);
  EXPECT_EQ(hta_kernel_type("Memcpy HtoD (Pageable -> Device)"), KernelType::kMemory);
  EXPECT_EQ(hta_kernel_type("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(hta_kernel_type("volta_sgemm_64x64_nt"), KernelType::kComputation);
  EXPECT_EQ(memory_kernel_kind("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD");
  EXPECT_EQ(memory_kernel_kind("Memset (Device)"), "Memset");
  EXPECT_TRUE(is_pageable_memcpy("Memcpy HtoD (Pageable -> Device)"));
  EXPECT_FALSE(is_pageable_memcpy("Memcpy HtoD (Pinned -> Device)"));
  EXPECT_TRUE(uses_tensor_cores("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64>"));
  EXPECT_TRUE(uses_tensor_cores("volta_h884gemm_64x64_ldg8_nn"));
  EXPECT_TRUE(uses_tensor_cores("sm90_xmma_gemm_bf16bf16_bf16f32"));
  EXPECT_FALSE(uses_tensor_cores("volta_sgemm_64x64_nt"));
  EXPECT_FALSE(uses_tensor_cores("void at::native::vectorized_elementwise_kernel<4>"));
  EXPECT_EQ(step_number("ProfilerStep#12"), 12);
  EXPECT_EQ(step_number("ProfilerStep # 7"), 7);
  EXPECT_EQ(step_number("ProfilerStep"), std::nullopt);
}

// Stream 7: k1 [100,110) launched at 90; k2 [112,120) launched at 95 (queued: gap 2 us is
// kernel wait); k3 [200,210) launched at 150 (after k2 ended at 120: host wait, gap 80).
// Stream 8: an NCCL kernel [105,125) launched at 96, and a pageable HtoD copy [130,140) of
// 1 MB launched at 97 (gap 5 us after the NCCL kernel, launched before it ended: kernel wait).
Trace two_stream_trace() {
  GpuTraceBuilder g;
  g.launch(90 * us, 4 * us, 7, 100 * us, 10 * us, "volta_sgemm_64x64_nt");
  g.launch(95 * us, 3 * us, 7, 112 * us, 8 * us, "volta_h884gemm_64x64");
  g.launch(96 * us, 3 * us, 8, 105 * us, 20 * us, "ncclKernel_AllReduce_RING_LL_Sum_float");
  g.launch(97 * us, 2 * us, 8, 130 * us, 10 * us, "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy",
           1'000'000, "cudaMemcpyAsync");
  g.launch(150 * us, 5 * us, 7, 200 * us, 10 * us, "volta_sgemm_64x64_nt");
  g.cpu_slice(80 * us, 30 * us, "aten::mm");
  return g.finish();
}

TEST(GpuAnalysis, TemporalBreakdownAndOverlap) {
  Trace t = two_stream_trace();
  GpuResult r = analyze_gpu(t);
  ASSERT_EQ(r.devices.size(), 1u);
  const TemporalBreakdown& b = r.temporal;
  // Span [100, 210) = 110 us. Busy: [100,125) + [130,140) + [200,210) = 45 us: idle 65 us.
  EXPECT_EQ(b.span_ns, 110 * us);
  EXPECT_EQ(b.idle_ns, 65 * us);
  // Compute: [100,110) + [112,120) + [200,210) = 28 us; comm 20; memcpy 10.
  EXPECT_EQ(b.compute_ns, 28 * us);
  EXPECT_EQ(b.non_compute_ns, 110 * us - 28 * us - 65 * us);
  EXPECT_EQ(b.communication_ns, 20 * us);
  EXPECT_EQ(b.memcpy_ns, 10 * us);
  EXPECT_NEAR(b.compute_pct, 100.0 * 28 / 110, 1e-9);
  // Comm [105,125) overlaps compute [105,110) + [112,120) = 13 of 20 us.
  EXPECT_NEAR(r.comm_comp_overlap_pct, 65.0, 1e-9);
  // CPU aten::mm [80,110) covers GPU busy [100,110): 10 of 45 us... plus launch calls.
  EXPECT_GT(r.devices[0].cpu_overlap_ns, 0);
  EXPECT_EQ(r.devices[0].gpu_busy_ns, 45 * us);
}

TEST(GpuAnalysis, IdleBreakdownByCause) {
  Trace t = two_stream_trace();
  GpuResult r = analyze_gpu(t);
  ASSERT_EQ(r.idle.size(), 2u);
  const StreamIdle& s7 = r.idle[0];
  EXPECT_EQ(s7.stream, 7);
  EXPECT_EQ(s7.kernel_wait.time_ns, 2 * us);
  EXPECT_EQ(s7.host_wait.time_ns, 80 * us);
  EXPECT_EQ(s7.other.time_ns, 0);
  EXPECT_NEAR(s7.host_wait.ratio, 80.0 / 82, 1e-9);
  EXPECT_EQ(s7.host_wait.intervals_us.count, 1);
  const StreamIdle& s8 = r.idle[1];
  EXPECT_EQ(s8.kernel_wait.time_ns, 5 * us);
  // A 40 us threshold makes no difference; a 4 us one turns the 5 us gap into "other".
  GpuOptions o;
  o.consecutive_kernel_delay_ns = 4 * us;
  GpuResult r2 = analyze_gpu(t, o);
  EXPECT_EQ(r2.idle[1].other.time_ns, 5 * us);
}

TEST(GpuAnalysis, QueueLengthLaunchesAndBandwidth) {
  Trace t = two_stream_trace();
  GpuResult r = analyze_gpu(t);
  ASSERT_EQ(r.queues.size(), 2u);
  // Stream 7: +1@90 +1@95 -1@100 -1@112 +1@150 -1@200 -> 1,2,1,0,1,0.
  const StreamQueue& q = r.queues[0];
  EXPECT_EQ(q.hta.count, 6);
  EXPECT_DOUBLE_EQ(q.hta.mean, 5.0 / 6);
  EXPECT_EQ(q.max_length, 2);
  // Time-weighted over [90,200): 1*5 + 2*5 + 1*12 + 0*38 + 1*50 = 77 us / 110 us.
  EXPECT_NEAR(q.mean_time_weighted, 77.0 / 110, 1e-9);

  const LaunchStats& l = r.launches;
  EXPECT_EQ(l.rows, 5u);
  // Delays: 100-94=6, 112-98=14, 105-99=6, 130-99=31, 200-155=45.
  EXPECT_EQ(l.sum_delay_ns, (6 + 14 + 6 + 31 + 45) * us);
  EXPECT_EQ(l.sum_cpu_ns, (4 + 3 + 3 + 2 + 5) * us);
  EXPECT_EQ(l.short_kernels, 0u);  // every kernel outlasts its launch call

  ASSERT_EQ(r.bandwidth.size(), 1u);
  EXPECT_EQ(r.bandwidth[0].kind, "Memcpy HtoD");
  EXPECT_EQ(r.bandwidth[0].bytes, 1'000'000);
  EXPECT_NEAR(r.bandwidth[0].achieved_gbps, 1e6 / 10e3, 1e-9);  // 100 GB/s
  EXPECT_EQ(r.pageable_memcpy_count, 1);
  EXPECT_EQ(r.bandwidth[0].hta_gbps.count, 1);
}

TEST(GpuAnalysis, ShortKernelsWithLongLaunchesAreFlagged) {
  GpuTraceBuilder g;
  for (int i = 0; i < 10; ++i) {
    g.launch((100 + 20 * i) * us, 15 * us, 7, (116 + 20 * i) * us, 2 * us, "tiny_kernel");
  }
  Trace t = g.finish();
  GpuResult r = analyze_gpu(t);
  EXPECT_EQ(r.launches.short_kernels, 10u);
  EXPECT_EQ(r.launches.short_kernels_gpu_ns, 20 * us);
  EXPECT_EQ(r.launches.short_kernels_cpu_ns, 150 * us);
  ASSERT_FALSE(r.launches.flagged.empty());
  EXPECT_EQ(r.launches.flagged[0].kernel, "tiny_kernel");
  // Every gap is host wait: the next launch ends after the previous kernel.
  EXPECT_EQ(r.idle[0].host_wait.time_ns, 9 * 18 * us);
}

TEST(GpuAnalysis, HtaModeDropsTheLastStepAndRoundsToMicroseconds) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  uint32_t gpu = b.thread_track(b.process(0), 7);
  b.mark_gpu_track(gpu, 0, 7);
  StringId corr = b.intern("correlation");
  for (int s = 0; s < 3; ++s) {
    int64_t base = s * 1000 * us;
    b.add_slice(cpu, base, 900 * us, b.intern("ProfilerStep#" + std::to_string(s + 1)),
                b.intern("user_annotation"));
    uint32_t m = b.args_mark();
    b.arg_int(corr, s + 1);
    b.add_slice(cpu, base + 10 * us, 5 * us, b.intern("cudaLaunchKernel"), b.intern("cuda_runtime"),
                b.args_since(m));
    m = b.args_mark();
    b.arg_int(corr, s + 1);
    b.arg_int(b.intern("stream"), 7);  // HTA's GPU rows need args.stream
    // 100.4 us long, starting 0.3 us into a microsecond.
    b.add_slice(gpu, base + 20 * us + 300, 100 * us + 400, b.intern("gemm"), b.intern("kernel"),
                b.args_since(m));
  }
  Trace t = std::move(b).finish();
  GpuResult def = analyze_gpu(t);
  EXPECT_EQ(def.gpu_events, 3u);
  EXPECT_EQ(def.temporal.compute_ns, 3 * (100 * us + 400));
  GpuOptions o;
  o.hta_compatible = true;
  GpuResult hta = analyze_gpu(t, o);
  EXPECT_TRUE(hta.hta_dropped_last_step);
  EXPECT_EQ(hta.kept_steps, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(hta.gpu_events, 2u);
  // Start 20.3 -> 21 us, end 120.7 -> 120 us: 99 us each.
  EXPECT_EQ(hta.temporal.compute_ns, 2 * 99 * us);
}

// HTA takes a GPU row only with args.stream: MTIA's dma_request events on a track of their own
// carry none. mlprof's default keeps them (they are device work), --hta-compatible does not.
TEST(GpuAnalysis, HtaModeNeedsAStream) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  uint32_t gpu = b.thread_track(b.process(0), 7);
  uint32_t dma = b.thread_track(b.process(0), 801);
  b.mark_gpu_track(gpu, 0, 7);
  b.mark_gpu_track(dma, 0, 801);
  StringId corr = b.intern("correlation");
  uint32_t m = b.args_mark();
  b.arg_int(corr, 1);
  b.add_slice(cpu, 10 * us, 5 * us, b.intern("cudaLaunchKernel"), b.intern("cuda_runtime"),
              b.args_since(m));
  m = b.args_mark();
  b.arg_int(corr, 1);
  b.arg_int(b.intern("stream"), 7);
  b.add_slice(gpu, 20 * us, 10 * us, b.intern("gemm"), b.intern("kernel"), b.args_since(m));
  b.add_slice(dma, 40 * us, 10 * us, b.intern("dma_request"), b.intern("mtia_ccp_events"));
  Trace t = std::move(b).finish();
  GpuResult def = analyze_gpu(t);
  EXPECT_EQ(def.gpu_events, 2u);
  EXPECT_EQ(def.idle.size(), 2u);
  GpuOptions o;
  o.hta_compatible = true;
  GpuResult hta = analyze_gpu(t, o);
  EXPECT_EQ(hta.gpu_events, 1u);
  ASSERT_EQ(hta.idle.size(), 1u);
  EXPECT_EQ(hta.idle[0].stream, 7);
  EXPECT_EQ(hta.temporal.span_ns, 10 * us);
}

TEST(GpuAnalysis, LaunchFoundThroughFlowsWithoutCorrelationArgs) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  uint32_t gpu = b.thread_track(b.process(0), 7);
  b.mark_gpu_track(gpu, 0, 7);
  StringId ac2g = b.intern("ac2g");
  // k1 [10,20) launched at 5; k2 [50,60) launched at 40 > 20: a 30 us host wait.
  const int64_t launches[2] = {5, 40}, kernels[2] = {10, 50};
  for (int i = 0; i < 2; ++i) {
    b.add_slice(cpu, launches[i] * us, 2 * us, b.intern("cudaLaunchKernel"),
                b.intern("cuda_runtime"));
    b.add_slice(gpu, kernels[i] * us, 10 * us, b.intern("k"), b.intern("kernel"));
    b.add_flow(static_cast<uint64_t>(i + 1), ac2g, cpu, launches[i] * us, gpu, kernels[i] * us);
  }
  Trace t = std::move(b).finish();
  GpuResult r = analyze_gpu(t);
  ASSERT_EQ(r.idle.size(), 1u);
  EXPECT_EQ(r.idle[0].host_wait.time_ns, 30 * us);
  EXPECT_EQ(r.launches.rows, 2u);
  EXPECT_EQ(r.launches.sum_delay_ns, (3 + 8) * us);
}

TEST(KernelsAnalysis, StatsLaunchConfigAndTypeBreakdown) {
  Trace t = two_stream_trace();
  KernelsResult r = analyze_kernels(t);
  EXPECT_EQ(r.kernel_count, 5u);
  EXPECT_EQ(r.total_gpu_ns, (10 + 8 + 20 + 10 + 10) * us);
  ASSERT_GE(r.kernels.size(), 4u);
  const KernelStats& top = r.kernels[0];  // sgemm 20 us and nccl 20 us: name order breaks ties
  EXPECT_EQ(top.total_ns, 20 * us);
  const KernelStats* sgemm = nullptr;
  for (const KernelStats& k : r.kernels) {
    if (k.name == "volta_sgemm_64x64_nt") sgemm = &k;
  }
  ASSERT_NE(sgemm, nullptr);
  EXPECT_EQ(sgemm->count, 2u);
  EXPECT_EQ(sgemm->launch.grid, "[80, 1, 1]");
  EXPECT_EQ(sgemm->launch.registers_per_thread, 32);
  EXPECT_DOUBLE_EQ(sgemm->launch.achieved_occupancy, 50);
  EXPECT_FALSE(sgemm->tensor_cores);
  EXPECT_EQ(r.tensor_core_ns, 8 * us);  // the h884 kernel
  EXPECT_NEAR(r.tensor_core_share, 8.0 / 28, 1e-9);
  // Types: compute-only [100,105)+[200,210)=15, compute+comm [105,110)+[112,120)=13,
  // comm-only [110,112)+[120,125)=7, memory [130,140)=10. Total 45.
  std::map<std::string, int64_t> types;
  for (const KernelTypeTime& k : r.type_breakdown) types[k.kernel_type] = k.time_ns;
  EXPECT_EQ(types["COMPUTATION"], 15 * us);
  EXPECT_EQ(types["COMPUTATION overlapping COMMUNICATION"], 13 * us);
  EXPECT_EQ(types["COMMUNICATION"], 7 * us);
  EXPECT_EQ(types["MEMORY"], 10 * us);
}

// MTIA submits work through one runtime call, "runFunction - job_prep_and_submit_for_execution"
// (category mtia_runtime), linked to the device's mtia_ccp_events by correlation. Two
// submissions: [0,300) -> [310,330) and [400,700) -> [700,750): cpu 300+300 = 600 us, gpu
// 20+50 = 70 us, delay 10+0 = 10 us; both calls are over HTA's 50 us runtime cutoff.
TEST(GpuAnalysis, MtiaSubmissionsAreLaunches) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(100), 100);
  uint32_t dev = b.thread_track(b.process(9), 1);
  b.mark_gpu_track(dev, 9, 1);
  StringId corr = b.intern("correlation");
  const int64_t call[2] = {0, 400}, work[2][2] = {{310, 20}, {700, 50}};
  for (int i = 0; i < 2; ++i) {
    uint32_t m = b.args_mark();
    b.arg_int(corr, 100 + i);
    b.add_slice(cpu, call[i] * us, 300 * us,
                b.intern("runFunction - job_prep_and_submit_for_execution"),
                b.intern("mtia_runtime"), b.args_since(m));
    m = b.args_mark();
    b.arg_int(corr, 100 + i);
    b.add_slice(dev, work[i][0] * us, work[i][1] * us, b.intern("aten::mm_kernel"),
                b.intern("mtia_ccp_events"), b.args_since(m));
  }
  Trace t = std::move(b).finish();
  GpuResult r = analyze_gpu(t);
  EXPECT_EQ(r.launches.rows, 2u);
  EXPECT_EQ(r.launches.sum_cpu_ns, 600 * us);
  EXPECT_EQ(r.launches.sum_gpu_ns, 70 * us);
  EXPECT_EQ(r.launches.sum_delay_ns, 10 * us);
  EXPECT_EQ(r.launches.runtime_outliers, 2u);
  ASSERT_EQ(r.queues.size(), 1u);  // each submission waits alone: the queue is 1 at most
  EXPECT_EQ(r.queues[0].max_length, 1);
}

// The real MTIA trace: every kernel comes from a submission, so launch statistics exist.
TEST(GpuAnalysis, MtiaTraceHasLaunchStatistics) {
  MLPROF_SHARED_OR_SKIP(path, "traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz");
  auto t = load_trace(path);
  ASSERT_TRUE(t.is_ok()) << t.error();
  GpuResult r = analyze_gpu(*t);
  EXPECT_GT(r.launches.rows, 0u);
  EXPECT_GT(r.launches.sum_cpu_ns, 0);
  EXPECT_FALSE(r.queues.empty());
}

// Blocks per SM is the duration-weighted mean over the calls, sum(bps * dur) / sum(dur) (the
// TensorBoard plugin's KernelParser): calls of 10, 30 and 60 us with 2, 4 and 0.5 blocks per
// SM give (2*10 + 4*30 + 0.5*60) / 100 = 170 / 100 = 1.7 (the first call says 2, the plain mean
// 2.17). Occupancy 40, 60, 10 % likewise: (400 + 1800 + 600) / 100 = 28 %.
TEST(KernelsAnalysis, BlocksPerSmIsDurationWeighted) {
  TraceBuilder b;
  uint32_t gpu = b.thread_track(b.process(0), 7);
  b.mark_gpu_track(gpu, 0, 7);
  StringId bps = b.intern("blocks per SM"), occ = b.intern("est. achieved occupancy %");
  const int64_t start[3] = {0, 20, 60}, dur[3] = {10, 30, 60};
  const double blocks[3] = {2, 4, 0.5}, occupancy[3] = {40, 60, 10};
  for (int i = 0; i < 3; ++i) {
    uint32_t m = b.args_mark();
    b.arg_double(bps, blocks[i]);
    b.arg_double(occ, occupancy[i]);
    b.add_slice(gpu, start[i] * us, dur[i] * us, b.intern("k"), b.intern("kernel"),
                b.args_since(m));
  }
  Trace t = std::move(b).finish();
  KernelsResult r = analyze_kernels(t);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_NEAR(r.kernels[0].launch.blocks_per_sm, 1.7, 1e-12);
  EXPECT_NEAR(r.kernels[0].launch.achieved_occupancy, 28, 1e-12);
}

TEST(RanksAnalysis, ImbalanceAndStragglers) {
  std::vector<Trace> traces;
  for (int rank = 0; rank < 4; ++rank) {
    TraceBuilder b;
    uint32_t cpu = b.thread_track(b.process(1), 1);
    uint32_t gpu = b.thread_track(b.process(0), 7);
    b.mark_gpu_track(gpu, 0, 7);
    int64_t step = rank == 3 ? 150 * us : 100 * us;  // rank 3 is 50% slower
    for (int s = 0; s < 2; ++s) {
      b.add_slice(cpu, s * step, step, b.intern("ProfilerStep#" + std::to_string(s)),
                  b.intern("user_annotation"));
      b.add_slice(gpu, s * step, step / 2, b.intern("gemm"), b.intern("kernel"));
      b.add_slice(gpu, s * step + step / 2, step / 4, b.intern("ncclKernel_AllReduce"),
                  b.intern("kernel"));
    }
    traces.push_back(std::move(b).finish());
    traces.back().meta.rank = rank;
  }
  std::vector<const Trace*> ptrs;
  for (const Trace& t : traces) ptrs.push_back(&t);
  RanksResult r = analyze_ranks(ptrs);
  ASSERT_EQ(r.ranks.size(), 4u);
  EXPECT_EQ(r.stragglers, (std::vector<int32_t>{3}));
  EXPECT_NEAR(r.load_imbalance, 150.0 / ((3 * 100.0 + 150.0) / 4), 1e-9);
  EXPECT_DOUBLE_EQ(r.ranks[0].step_mean_ns, 100 * us);
  // No overlap: all communication is exposed.
  EXPECT_EQ(r.ranks[0].exposed_comm_ns, 2 * 25 * us);
  EXPECT_NEAR(r.ranks[0].comm_comp_overlap_pct, 0.0, 1e-9);
}

TEST(RanksAnalysis, RankFromFileName) {
  Trace t;
  EXPECT_EQ(rank_of(t, "/x/rank-3.Jul_15.1074.pt.trace.json.gz"), 3);
  EXPECT_EQ(rank_of(t, "/x/sampled_rank_12.json"), 12);
  EXPECT_EQ(rank_of(t, "/x/trace_5.json"), 5);
  t.meta.rank = 7;
  EXPECT_EQ(rank_of(t, "/x/rank-3.json"), 7);
}

TEST(GpuRender, TextAndJsonHaveTheNumbers) {
  Trace t = two_stream_trace();
  GpuResult r = analyze_gpu(t);
  std::string text = render_gpu_text(r);
  EXPECT_NE(text.find("stream 7"), std::string::npos);
  EXPECT_NE(text.find("pageable"), std::string::npos);
  JsonWriter w;
  write_gpu_json(w, r);
  EXPECT_NE(w.str().find("\"span_ns\":110000"), std::string::npos);
  KernelsResult k = analyze_kernels(t);
  JsonWriter kw;
  write_kernels_json(kw, k);
  EXPECT_NE(kw.str().find("\"grid\":[80, 1, 1]"), std::string::npos);
  std::string ktext = render_kernels_text(k, 160);
  EXPECT_NE(ktext.find("volta_sgemm_64x64_nt"), std::string::npos) << ktext;
}

TEST(GpuAnalysis, TraceWithoutGpuIsEmptyNotAnError) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  b.add_slice(cpu, 0, 10, b.intern("aten::add"), b.intern("cpu_op"));
  Trace t = std::move(b).finish();
  GpuResult r = analyze_gpu(t);
  EXPECT_EQ(r.gpu_events, 0u);
  EXPECT_TRUE(r.devices.empty());
  EXPECT_TRUE(std::isnan(r.comm_comp_overlap_pct));
  EXPECT_NE(render_gpu_text(r).find("No GPU events"), std::string::npos);
  KernelsResult k = analyze_kernels(t);
  EXPECT_EQ(k.kernel_count, 0u);
}

}  // namespace
}  // namespace mlprof
