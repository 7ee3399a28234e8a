// Steps on hand-built traces (expected numbers by construction) and, when the importer reads it,
// on a real PyTorch trace (expected numbers from tests/py/test_analyze_steps.py's computation).
#include <gtest/gtest.h>

#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

using namespace mlprof;

namespace {

struct Builder {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  StringId cat = b.intern("user_annotation");
  StringId op = b.intern("cpu_op");
  void slice(uint32_t track, int64_t ts, int64_t dur, const char* name, StringId c) {
    b.add_slice(track, ts, dur, b.intern(name), c);
  }
};

}  // namespace

TEST(Steps, ClassifiesNames) {
  EXPECT_EQ(classify_step_phase("data_load"), StepPhase::kDataLoading);
  EXPECT_EQ(classify_step_phase("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"),
            StepPhase::kDataLoading);
  EXPECT_EQ(classify_step_phase("forward"), StepPhase::kForward);
  EXPECT_EQ(classify_step_phase("nn.Module: Linear_0"), StepPhase::kForward);
  EXPECT_EQ(classify_step_phase("autograd::engine::evaluate_function: AddmmBackward0"),
            StepPhase::kBackward);
  EXPECT_EQ(classify_step_phase("Optimizer.step#SGD.step"), StepPhase::kOptimizer);
  EXPECT_EQ(classify_step_phase("Optimizer.zero_grad#SGD.zero_grad"), StepPhase::kOptimizer);
  EXPECT_EQ(classify_step_phase("nccl:all_reduce"), StepPhase::kCommunication);
  EXPECT_EQ(classify_step_phase("CompiledFunction"), StepPhase::kForward);
  EXPECT_EQ(classify_step_phase("CompiledFunctionBackward"), StepPhase::kBackward);
  EXPECT_EQ(classify_step_phase("Torch-Compiled Region: 0/0"), StepPhase::kForward);
  EXPECT_EQ(classify_step_phase("DistributedDataParallel.forward"), StepPhase::kForward);
  EXPECT_EQ(classify_step_phase("FullyShardedDataParallel.forward"), StepPhase::kForward);
  EXPECT_EQ(classify_step_phase("FSDP::post_backward_reduce"), StepPhase::kBackward);
  EXPECT_EQ(classify_step_phase("aten::addmm"), std::nullopt);
  EXPECT_EQ(classify_step_phase("ProfilerStep#3"), std::nullopt);
  EXPECT_EQ(step_number("ProfilerStep#12"), 12);
  EXPECT_EQ(step_number("ProfilerStep#"), std::nullopt);
  EXPECT_EQ(step_number("ProfilerStep#1x"), std::nullopt);
}

TEST(Steps, SplitsEachStepByInnermostPhase) {
  Builder t;
  // Step 1: [0, 100): data 20, forward 30 (an op inside), backward 30 (an all_reduce inside: 5),
  // optimizer 15, 5 unclassified.
  t.slice(t.cpu, 0, 100, "ProfilerStep#1", t.cat);
  t.slice(t.cpu, 0, 20, "data_load", t.cat);
  t.slice(t.cpu, 20, 30, "forward", t.cat);
  t.slice(t.cpu, 25, 20, "aten::addmm", t.op);
  t.slice(t.cpu, 50, 30, "backward", t.cat);
  t.slice(t.cpu, 60, 5, "nccl:all_reduce", t.op);
  t.slice(t.cpu, 80, 15, "optimizer", t.cat);
  // Steps 2..6 of 100 ns, then an outlier step of 400 ns.
  for (int k = 2; k <= 6; ++k)
    t.slice(t.cpu, k * 110, 100 + k, ("ProfilerStep#" + std::to_string(k)).c_str(), t.cat);
  t.slice(t.cpu, 770, 400, "ProfilerStep#7", t.cat);
  Trace trace = std::move(t.b).finish();
  StepsResult r = analyze_steps(trace);
  ASSERT_EQ(r.steps.size(), 7u);
  const StepInfo& s = r.steps[0];
  EXPECT_EQ(s.number, 1);
  EXPECT_EQ(s.dur_ns, 100);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kDataLoading)], 20);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kForward)], 30);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kBackward)], 25);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kCommunication)], 5);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kOptimizer)], 15);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kOther)], 5);
  EXPECT_FALSE(r.has_gpu);
  // Durations 100, 102..106, 400: median 104, MAD 2 -> only step 7 is an outlier.
  EXPECT_DOUBLE_EQ(r.median_ns, 104);
  EXPECT_DOUBLE_EQ(r.mad_ns, 2);
  ASSERT_EQ(r.outlier_steps.size(), 1u);
  EXPECT_EQ(r.outlier_steps[0], 7);
  EXPECT_EQ(r.min_ns, 100);
  EXPECT_EQ(r.max_ns, 400);
}

// A compiled model under DDP (the df_index_resolver trace's shape): forward is the compiled region
// on the step's thread, backward runs on autograd's engine thread of the same process while the
// step's thread waits, with the gradient allreduce inside it. A thread of another process (a
// DataLoader worker) does not count.
TEST(Steps, BackwardOnAutogradThreadCounts) {
  Builder t;
  uint32_t autograd = t.b.thread_track(t.b.process(1), 2);
  uint32_t other_proc = t.b.thread_track(t.b.process(9), 3);
  t.slice(t.cpu, 0, 100, "ProfilerStep#1", t.cat);
  t.slice(t.cpu, 0, 30, "CompiledFunction", t.op);
  t.slice(t.cpu, 85, 10, "Optimizer.step#SGD.step", t.cat);
  // Backward 30-80 on the engine thread, starting inside the step; an allreduce 60-70 inside.
  t.slice(autograd, 30, 50, "autograd::engine::evaluate_function: CompiledFunctionBackward", t.op);
  t.slice(autograd, 31, 48, "CompiledFunctionBackward", t.op);
  t.slice(autograd, 60, 10, "record_param_comms", t.op);
  // A top-level backward slice reaching into the next step from before it: 150-190 of 200-300
  // is outside, so only 190-210 counts for step 2; and an unclassified top-level slice.
  t.slice(t.cpu, 200, 100, "ProfilerStep#2", t.cat);
  t.slice(autograd, 190, 20, "autograd::engine::evaluate_function: AddmmBackward0", t.op);
  t.slice(autograd, 250, 10, "aten::copy_", t.op);
  t.slice(other_proc, 200, 100, "backward", t.cat);
  Trace trace = std::move(t.b).finish();
  StepsResult r = analyze_steps(trace);
  ASSERT_EQ(r.steps.size(), 2u);
  const StepInfo& s = r.steps[0];
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kForward)], 30);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kBackward)], 40);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kCommunication)], 10);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kOptimizer)], 10);
  EXPECT_EQ(s.phase_ns[size_t(StepPhase::kOther)], 10);
  const StepInfo& s2 = r.steps[1];
  EXPECT_EQ(s2.phase_ns[size_t(StepPhase::kBackward)], 10);
  EXPECT_EQ(s2.phase_ns[size_t(StepPhase::kOther)], 90);
}

TEST(Steps, GpuClassesFollowThePluginPriority) {
  Builder t;
  uint32_t gpu = t.b.thread_track(t.b.process(0), 7);
  t.b.mark_gpu_track(gpu, 0, 7);
  StringId kernel = t.b.intern("kernel"), memcpy = t.b.intern("gpu_memcpy");
  StringId runtime = t.b.intern("cuda_runtime");
  t.slice(t.cpu, 0, 100, "ProfilerStep#1", t.cat);
  t.slice(t.cpu, 0, 60, "aten::mm", t.op);                         // CPU op 0-60
  t.slice(t.cpu, 10, 10, "cudaLaunchKernel", runtime);             // runtime 10-20
  t.slice(gpu, 15, 20, "sgemm_kernel", kernel);                    // kernel 15-35
  t.slice(gpu, 30, 20, "Memcpy HtoD (Pinned -> Device)", memcpy);  // memcpy 30-50 (35-50 visible)
  t.slice(gpu, 70, 10, "ncclKernel_AllReduce", kernel);            // communication 70-80
  Trace trace = std::move(t.b).finish();
  StepsResult r = analyze_steps(trace);
  ASSERT_EQ(r.steps.size(), 1u);
  ASSERT_TRUE(r.has_gpu);
  const auto& c = r.steps[0].gpu_class_ns;
  EXPECT_EQ(c[size_t(GpuStepClass::kKernel)], 20);
  EXPECT_EQ(c[size_t(GpuStepClass::kMemcpy)], 15);
  EXPECT_EQ(c[size_t(GpuStepClass::kCommunication)], 10);
  EXPECT_EQ(c[size_t(GpuStepClass::kRuntime)], 5);  // 10-15
  EXPECT_EQ(c[size_t(GpuStepClass::kCpuOp)], 20);   // 0-10, 50-60
  EXPECT_EQ(c[size_t(GpuStepClass::kOther)], 30);   // 60-70, 80-100
}

TEST(Steps, NoStepsIsEmpty) {
  Builder t;
  t.slice(t.cpu, 0, 10, "aten::mm", t.op);
  Trace trace = std::move(t.b).finish();
  StepsResult r = analyze_steps(trace);
  EXPECT_TRUE(r.steps.empty());
  EXPECT_EQ(r.total_ns, 0);
}
