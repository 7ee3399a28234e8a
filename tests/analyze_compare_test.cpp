// compare on built traces: a real slowdown is a regression, an identical distribution is not,
// a small-but-significant shift below the effect threshold is "unchanged".
#include <gtest/gtest.h>

#include <cmath>

#include "mlprof/analyze/compare.h"
#include "mlprof/trace.h"

using namespace mlprof;

namespace {
// 40 steps; per step one call of each op. Durations jitter deterministically by +-5%.
Trace make(double a_scale, double c_scale, bool with_d) {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  StringId cat = b.intern("cpu_op"), ann = b.intern("user_annotation");
  for (int s = 0; s < 40; ++s) {
    int64_t base = s * 10000;
    double jitter = 1.0 + 0.05 * ((s * 7919) % 11 - 5) / 5.0;
    int64_t a = static_cast<int64_t>(2000 * a_scale * jitter);
    int64_t bb = static_cast<int64_t>(3000 * jitter);
    int64_t c = static_cast<int64_t>(1500 * c_scale * jitter);
    b.add_slice(cpu, base, a + bb + c + 300, b.intern("ProfilerStep#" + std::to_string(s)), ann);
    b.add_slice(cpu, base + 10, a, b.intern("op_a"), cat);
    b.add_slice(cpu, base + 20 + a, bb, b.intern("op_b"), cat);
    b.add_slice(cpu, base + 30 + a + bb, c, b.intern("op_c"), cat);
    if (with_d) b.add_slice(cpu, base + 40 + a + bb + c, 100, b.intern("op_d"), cat);
  }
  return std::move(b).finish();
}
const OpDiff* find(const CompareResult& r, const std::string& name) {
  for (const OpDiff& d : r.ops)
    if (d.name == name) return &d;
  return nullptr;
}
}  // namespace

TEST(Compare, SeparatesRegressionsFromNoise) {
  Trace base = make(1.0, 1.0, false);
  Trace next = make(1.5, 1.02, true);
  CompareResult r = compare_traces(base, next);
  const OpDiff* a = find(r, "op_a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->verdict, DiffVerdict::kRegression);
  EXPECT_NEAR(a->delta_mean_pct, 50.0, 0.5);
  EXPECT_NEAR(a->speedup, 1 / 1.5, 0.01);
  EXPECT_LT(a->p_value, 1e-6);
  const OpDiff* b = find(r, "op_b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->verdict, DiffVerdict::kUnchanged);
  EXPECT_GT(b->p_value, 0.5);
  const OpDiff* c = find(r, "op_c");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict, DiffVerdict::kUnchanged);  // 2%: below the 5% effect threshold
  const OpDiff* d = find(r, "op_d");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->verdict, DiffVerdict::kAdded);
  EXPECT_EQ(r.regressions, 1u);
  EXPECT_EQ(r.speedup_basis, "step mean");
  EXPECT_LT(r.overall_speedup, 1.0);
  EXPECT_TRUE(r.step_regression);
  EXPECT_GE(r.worst_regression_pct, 50.0 - 0.5);
  // Welch agrees on the big one.
  CompareOptions o;
  o.test = SignificanceTest::kWelch;
  CompareResult w = compare_traces(base, next, o);
  EXPECT_EQ(find(w, "op_a")->verdict, DiffVerdict::kRegression);
}

TEST(Compare, IdenticalTracesHaveNoRegression) {
  Trace base = make(1.0, 1.0, false);
  Trace same = make(1.0, 1.0, false);
  CompareResult r = compare_traces(base, same);
  EXPECT_EQ(r.regressions, 0u);
  EXPECT_EQ(r.improvements, 0u);
  EXPECT_DOUBLE_EQ(r.overall_speedup, 1.0);
  EXPECT_TRUE(r.worst_regression.empty());
}

TEST(Compare, ManyTracesAgainstTheFirst) {
  Trace t0 = make(1.0, 1.0, false), t1 = make(0.5, 1.0, false), t2 = make(2.0, 1.0, false);
  MultiCompareResult r = compare_many({&t0, &t1, &t2});
  ASSERT_EQ(r.pairs.size(), 2u);
  EXPECT_EQ(find(r.pairs[0], "op_a")->verdict, DiffVerdict::kImprovement);
  EXPECT_EQ(find(r.pairs[1], "op_a")->verdict, DiffVerdict::kRegression);
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(r.rows[0].total_ns.size(), 3u);
}

// Run-specific tokens are replaced in the match key; everything else is kept.
TEST(Compare, MatchKeyDropsRunSpecificTokens) {
  EXPECT_EQ(compare_match_key("<built-in method relu of type object at 0x7f1f3132d1e0>"),
            "<built-in method relu of type object at 0x*>");
  EXPECT_EQ(compare_match_key("/tmp/ipykernel_4242/123.py(3): f"), "/tmp/ipykernel_*/123.py(3): f");
  EXPECT_EQ(compare_match_key("<ipython-input-12-abc>(1): g"), "<ipython-input-*-abc>(1): g");
  // Short hex literals (template arguments) and line numbers are not run-specific.
  EXPECT_EQ(compare_match_key("kernel<0x10>"), "kernel<0x10>");
  EXPECT_EQ(compare_match_key("model.py(42): forward"), "model.py(42): forward");
}

// Python events of two runs whose names differ only by the object's address are one row,
// shown under the base's name, in the python table; ops stay in theirs.
TEST(Compare, MatchesPythonFunctionsAcrossAddresses) {
  auto make_run = [](const std::string& address) {
    TraceBuilder b;
    uint32_t cpu = b.thread_track(b.process(1), 1);
    StringId py = b.intern("python_function"), op = b.intern("cpu_op");
    StringId relu = b.intern("<built-in method relu of type object at " + address + ">");
    for (int i = 0; i < 10; ++i) {
      b.add_slice(cpu, i * 100, 50, relu, py);
      b.add_slice(cpu, i * 100 + 10, 30, b.intern("aten::relu"), op);
    }
    return std::move(b).finish();
  };
  Trace base = make_run("0x7fa25cb2d1e0"), next = make_run("0x7fb4c992d1e0");
  CompareResult r = compare_traces(base, next);
  ASSERT_EQ(r.python.size(), 1u);
  EXPECT_EQ(r.python[0].name, "<built-in method relu of type object at 0x7fa25cb2d1e0>");
  EXPECT_EQ(r.python[0].base_count, 10u);  // 10 calls on each side, none added or removed
  EXPECT_EQ(r.python[0].new_count, 10u);
  EXPECT_EQ(r.python[0].verdict, DiffVerdict::kUnchanged);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].name, "aten::relu");
  CompareOptions together;
  together.python_with_ops = true;
  EXPECT_EQ(compare_traces(base, next, together).ops.size(), 2u);
}

// A row whose calls per step multiplied at the same mean per call is a regression, from calls;
// its delta per step splits into "from calls" + "from mean". 40 steps, op_e 2 -> 6 calls of
// 1000 ns (+-5%) per step: planted +4 calls x 1000 ns = +4000 ns per step.
TEST(Compare, MoreCallsAtTheSameMeanIsARegression) {
  auto make_calls = [](int calls) {
    TraceBuilder b;
    uint32_t cpu = b.thread_track(b.process(1), 1);
    StringId cat = b.intern("cpu_op"), ann = b.intern("user_annotation");
    for (int s = 0; s < 40; ++s) {
      int64_t t = s * 100000;
      b.add_slice(cpu, t, 90000, b.intern("ProfilerStep#" + std::to_string(s)), ann);
      b.add_slice(cpu, t + 10, 20000, b.intern("op_a"), cat);
      for (int k = 0; k < calls; ++k) {
        int64_t d = 1000 + 50 * (((s + k) * 7919) % 3 - 1);  // 950, 1000, 1050 ns
        b.add_slice(cpu, t + 30000 + k * 2000, d, b.intern("op_e"), cat);
      }
    }
    return std::move(b).finish();
  };
  Trace base = make_calls(2), next = make_calls(6);
  CompareResult r = compare_traces(base, next);
  EXPECT_EQ(r.per_step_basis, "step");
  const OpDiff* e = find(r, "op_e");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->verdict, DiffVerdict::kRegression);
  EXPECT_EQ(e->cause, "calls");
  EXPECT_DOUBLE_EQ(e->base_calls_per_step, 2.0);
  EXPECT_DOUBLE_EQ(e->new_calls_per_step, 6.0);
  EXPECT_NEAR(e->delta_per_step_ns, 4000, 100);
  EXPECT_NEAR(e->calls_effect_ns + e->mean_effect_ns, e->delta_per_step_ns, 1e-6);
  EXPECT_LT(e->calls_p_value, 1e-6);
  EXPECT_LT(std::fabs(e->delta_mean_pct), 5.0);
  EXPECT_EQ(find(r, "op_a")->verdict, DiffVerdict::kUnchanged);
  EXPECT_EQ(r.worst_regression, "op_e");
  EXPECT_NEAR(r.worst_regression_pct, 200, 10);
}
