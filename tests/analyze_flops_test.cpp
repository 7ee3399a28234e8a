// FLOP formulas against hand-computed values (the arithmetic is written out beside each), and
// the outermost-op rule on a built trace. Real traces: tests/py/test_analyze_flops.py.
#include <gtest/gtest.h>

#include "mlprof/analyze/flops.h"
#include "mlprof/trace.h"

using namespace mlprof;

namespace {
double flops(const char* op, const char* dims) {
  auto d = parse_input_dims(dims);
  EXPECT_TRUE(d.has_value()) << dims;
  return op_flops(op, *d).value_or(-1);
}
}  // namespace

TEST(Flops, ParsesInputDims) {
  auto d = parse_input_dims("[[64], [32, 32], [32, 64], [], []]");
  ASSERT_TRUE(d);
  ASSERT_EQ(d->size(), 5u);
  EXPECT_EQ((*d)[1], (Shape{32, 32}));
  EXPECT_TRUE((*d)[3].empty());
  EXPECT_FALSE(parse_input_dims("not json"));
  auto nested = parse_input_dims("[[[2, 3], [4]], [5, 6]]");  // a TensorList input
  ASSERT_TRUE(nested);
  EXPECT_EQ((*nested)[1], (Shape{5, 6}));
}

TEST(Flops, MatmulFamily) {
  EXPECT_EQ(flops("aten::mm", "[[32, 64], [64, 16]]"), 2.0 * 32 * 64 * 16);
  EXPECT_EQ(flops("aten::addmm", "[[16], [32, 64], [64, 16], [], []]"), 2.0 * 32 * 64 * 16);
  EXPECT_EQ(flops("aten::linear", "[[8, 1024], [10, 1024], [10]]"), 2.0 * 8 * 1024 * 10);
  EXPECT_EQ(flops("aten::linear", "[[4, 8, 64], [32, 64], []]"), 2.0 * 32 * 64 * 32);
  // Broadcast batch [2,1] with [3] -> 6 batches of 8x16 @ 16x4.
  EXPECT_EQ(flops("aten::matmul", "[[2, 1, 8, 16], [3, 16, 4]]"), 2.0 * 6 * 8 * 16 * 4);
  EXPECT_EQ(flops("aten::matmul", "[[16], [16, 4]]"), 2.0 * 16 * 4);
  EXPECT_EQ(flops("aten::bmm", "[[4, 8, 16], [4, 16, 2]]"), 2.0 * 4 * 8 * 16 * 2);
  EXPECT_EQ(flops("aten::baddbmm", "[[4, 8, 2], [4, 8, 16], [4, 16, 2], [], []]"),
            2.0 * 4 * 8 * 16 * 2);
  EXPECT_EQ(flops("aten::mm", "[[32, 64]]"), -1);  // shapes that do not fit
  EXPECT_EQ(flops("aten::relu", "[[32, 64]]"), -1);
}

TEST(Flops, ConvAndAttention) {
  // conv2d: 2 * N 8 * Cout 8 * (32*32 output, same as input) * Cin 3 * 3x3 kernel.
  EXPECT_EQ(flops("aten::conv2d", "[[8, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], []]"),
            2.0 * 8 * 8 * 1024 * 3 * 9);
  // Backward: grad_out [8,16,16,16], input [8,8,16,16], weight [16,8,3,3]: 2 x forward.
  EXPECT_EQ(
      flops("aten::convolution_backward",
            "[[8, 16, 16, 16], [8, 8, 16, 16], [16, 8, 3, 3], [], [], [], [], [], [], [], []]"),
      2 * (2.0 * 8 * 16 * 256 * 8 * 9));
  // SDPA: B*H = 8, L = S = 128, E = 64: QK^T and AV, 2*8*128*128*64 each.
  EXPECT_EQ(flops("aten::scaled_dot_product_attention",
                  "[[2, 4, 128, 64], [2, 4, 128, 64], [2, 4, 128, 64]]"),
            4.0 * 8 * 128 * 128 * 64);
}

TEST(Flops, CountsOutermostOpsOnlyAndPerStep) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  StringId cat = b.intern("cpu_op"), ann = b.intern("user_annotation");
  StringId dims = b.intern("Input Dims"), types = b.intern("Input type");
  auto op = [&](int64_t ts, int64_t dur, const char* name, const char* d) {
    uint32_t m = b.args_mark();
    b.arg_json(dims, d);
    b.arg_json(types, "[\"float\", \"float\", \"float\"]");
    b.add_slice(cpu, ts, dur, b.intern(name), cat, b.args_since(m));
  };
  b.add_slice(cpu, 0, 1000, b.intern("ProfilerStep#1"), ann);
  op(10, 100, "aten::linear", "[[8, 1024], [10, 1024], [10]]");
  op(20, 80, "aten::addmm", "[[10], [8, 1024], [1024, 10], [], []]");  // inside linear: skipped
  op(200, 50, "aten::mm", "[[8, 10], [10, 1024]]");
  op(2000, 50, "aten::mm", "[[8, 10], [10, 1024]]");      // outside any step
  b.add_slice(cpu, 3000, 10, b.intern("aten::mm"), cat);  // no shapes
  Trace trace = std::move(b).finish();
  FlopsResult r = analyze_flops(trace);
  // The perf models (perf_model.h): linear with its bias adds (8 x 10 outputs).
  double linear = 2.0 * 8 * 1024 * 10 + 8 * 10, mm = 2.0 * 8 * 10 * 1024;
  EXPECT_DOUBLE_EQ(r.total_flops, linear + 2 * mm);
  EXPECT_EQ(r.calls_without_shapes, 1u);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(r.steps[0].flops, linear + mm);
  EXPECT_EQ(r.wall_ns, 1000);
  EXPECT_DOUBLE_EQ(r.achieved_tflops_per_s, (linear + mm) / 1000 / 1e3);
  EXPECT_EQ(r.counted_op_ns, 200);
  EXPECT_EQ(r.dtype, "fp32");
  EXPECT_TRUE(std::isnan(r.mfu));  // CPU trace, no peak given
  FlopsOptions o;
  o.peak_tflops = 1.0;
  FlopsResult with_peak = analyze_flops(trace, o);
  EXPECT_DOUBLE_EQ(with_peak.mfu, with_peak.achieved_tflops_per_s / 1.0);
}
