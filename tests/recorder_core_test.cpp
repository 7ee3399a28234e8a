// The recorder on one thread: nesting, durations against CLOCK_MONOTONIC, dynamic names,
// counters, instants, memory, steps, sampling, run-time disable.
#include <gtest/gtest.h>
#include <time.h>

#include <string>
#include <vector>

#include "mlprof/mlprof.h"

namespace {

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

mlprof::SessionOptions quiet_options() {
  mlprof::SessionOptions o;
  o.buffer_mb = 8;
  o.rss_interval_ms = 0;
  return o;
}

std::vector<size_t> slices_named(const mlprof::Trace& t, std::string_view name) {
  std::vector<size_t> out;
  for (size_t i = 0; i < t.slices.size(); ++i)
    if (t.str(t.slices.name[i]) == name) out.push_back(i);
  return out;
}

// Spins until `ns` have passed on CLOCK_MONOTONIC; returns (first, last) readings.
std::pair<int64_t, int64_t> busy_wait(int64_t ns) {
  int64_t a = mono_ns(), b = a;
  volatile uint64_t sink = 0;
  while (b - a < ns) {
    for (int i = 0; i < 100; ++i) sink = sink + i;
    b = mono_ns();
  }
  return {a, b};
}

TEST(recorder_core, NestingAndDurationsMatchClockMonotonic) {
  mlprof::Session s(quiet_options());
  ASSERT_TRUE(s.start().is_ok());
  int64_t outer_before = 0, outer_after = 0;
  std::pair<int64_t, int64_t> inner1, inner2;
  outer_before = mono_ns();
  {
    MLPROF_SCOPE("outer");
    {
      MLPROF_SCOPE_CAT("inner", "compute");
      inner1 = busy_wait(15'000'000);
    }
    {
      MLPROF_SCOPE_CAT("inner", "compute");
      inner2 = busy_wait(10'000'000);
    }
  }
  outer_after = mono_ns();
  mlprof::Trace t = s.stop();

  auto outer = slices_named(t, "outer");
  auto inner = slices_named(t, "inner");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 2u);
  const auto& sl = t.slices;
  EXPECT_EQ(sl.depth[outer[0]], 0);
  for (size_t i : inner) {
    EXPECT_EQ(sl.depth[i], 1);
    EXPECT_EQ(sl.parent[i], static_cast<int32_t>(outer[0]));
    EXPECT_EQ(t.str(sl.cat[i]), "compute");
  }
  EXPECT_EQ(sl.self[outer[0]], sl.dur[outer[0]] - sl.dur[inner[0]] - sl.dur[inner[1]]);

  // Each scope must lie between the CLOCK_MONOTONIC readings taken just outside and just inside
  // it. Tolerance: the TSC fit (ppm-level) plus a few microseconds of reading jitter.
  auto within = [&](size_t i, int64_t outside_begin, int64_t inside_begin, int64_t inside_end,
                    int64_t outside_end) {
    int64_t tol = 20'000 + (outside_end - outside_begin) / 1000;
    EXPECT_GE(sl.ts[i], outside_begin - tol);
    EXPECT_LE(sl.ts[i], inside_begin + tol);
    EXPECT_GE(sl.end(i), inside_end - tol);
    EXPECT_LE(sl.end(i), outside_end + tol);
  };
  within(inner[0], outer_before, inner1.first, inner1.second, inner2.first);
  within(inner[1], inner1.second, inner2.first, inner2.second, outer_after);
  within(outer[0], outer_before, inner1.first, inner2.second, outer_after);
  EXPECT_EQ(t.meta.format, "mlprof");
  EXPECT_EQ(t.meta.dropped_events, 0u);
}

int traced_add(int a, int b) {
  MLPROF_FUNCTION();
  return a + b;
}

TEST(recorder_core, FunctionsDynamicNamesCountersInstantsThreadNames) {
  mlprof::Session s(quiet_options());
  ASSERT_TRUE(s.start().is_ok());
  mlprof::set_thread_name("trainer");
  EXPECT_EQ(traced_add(2, 3), 5);
  for (int layer = 0; layer < 3; ++layer) {
    std::string name = "layer" + std::to_string(layer);
    MLPROF_SCOPE_DYNAMIC(name);
  }
  int r = mlprof::profile_function(
      "square", [](int x) { return x * x; }, 7);
  EXPECT_EQ(r, 49);
  std::string op = mlprof::time_op(
      "concat", [](std::string a) { return a + "!"; }, "hi");
  EXPECT_EQ(op, "hi!");
  auto wrapped = mlprof::profiled("wrapped", [](int x) { return x + 1; });
  EXPECT_EQ(wrapped(1) + wrapped(2), 5);
  mlprof::counter("loss", 0.31);
  mlprof::counter("loss", 0.25);
  mlprof::instant("checkpoint");
  MLPROF_INSTANT("marker");
  mlprof::Trace t = s.stop();

  EXPECT_EQ(slices_named(t, "traced_add").size(), 1u);
  for (int layer = 0; layer < 3; ++layer)
    EXPECT_EQ(slices_named(t, "layer" + std::to_string(layer)).size(), 1u);
  auto sq = slices_named(t, "square");
  ASSERT_EQ(sq.size(), 1u);
  EXPECT_EQ(t.str(t.slices.cat[sq[0]]), "function");
  auto concat = slices_named(t, "concat");
  ASSERT_EQ(concat.size(), 1u);
  EXPECT_EQ(t.str(t.slices.cat[concat[0]]), "op");
  EXPECT_EQ(slices_named(t, "wrapped").size(), 2u);

  ASSERT_EQ(t.counter_series.size(), 1u);
  EXPECT_EQ(t.str(t.counter_series[0].name), "loss");
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_DOUBLE_EQ(t.counters.value[0], 0.31);
  EXPECT_DOUBLE_EQ(t.counters.value[1], 0.25);
  ASSERT_EQ(t.instants.size(), 2u);
  EXPECT_EQ(t.str(t.instants.name[0]), "checkpoint");
  EXPECT_EQ(t.str(t.instants.name[1]), "marker");
  ASSERT_EQ(t.tracks.size(), 1u);
  EXPECT_EQ(t.str(t.tracks[0].name), "trainer");
}

TEST(recorder_core, MemoryEventsCarryRunningTotalsAndPeak) {
  mlprof::Session s(quiet_options());
  ASSERT_TRUE(s.start().is_ok());
  std::vector<char> a(1000), b(500);
  mlprof::track_alloc(a.data(), 1000);
  mlprof::track_alloc(b.data(), 500);
  mlprof::track_free(a.data());
  mlprof::track_alloc(&a, 64, mlprof::DeviceType::kCuda, 1);
  EXPECT_EQ(mlprof::current_bytes(), 500);
  EXPECT_EQ(mlprof::peak_bytes(), 1500);
  EXPECT_EQ(mlprof::current_bytes(mlprof::DeviceType::kCuda, 1), 64);
  mlprof::track_free(&b);  // never tracked: ignored
  mlprof::Trace t = s.stop();

  const auto& m = t.memory;
  ASSERT_EQ(m.size(), 4u);
  std::vector<int64_t> bytes(m.bytes.begin(), m.bytes.end());
  std::vector<int64_t> totals(m.total_allocated.begin(), m.total_allocated.end());
  EXPECT_EQ(bytes, (std::vector<int64_t>{1000, 500, -1000, 64}));
  EXPECT_EQ(totals, (std::vector<int64_t>{1000, 1500, 500, 64}));
  EXPECT_EQ(m.addr[0], reinterpret_cast<uint64_t>(a.data()));
  EXPECT_EQ(m.device_type[0], static_cast<int8_t>(mlprof::DeviceType::kCpu));
  EXPECT_EQ(m.device_type[3], static_cast<int8_t>(mlprof::DeviceType::kCuda));
  EXPECT_EQ(m.device_id[3], 1);
}

TEST(recorder_core, StepsBecomeProfilerStepSlices) {
  mlprof::Session s(quiet_options());
  ASSERT_TRUE(s.start().is_ok());
  for (int i = 0; i < 3; ++i) {
    MLPROF_STEP("train");
    MLPROF_SCOPE("work");
  }
  for (int i = 0; i < 2; ++i) {
    mlprof::step();
    MLPROF_SCOPE("loop_body");
  }
  mlprof::Trace t = s.stop();
  for (int n = 0; n < 5; ++n) {
    auto st = slices_named(t, "ProfilerStep#" + std::to_string(n));
    ASSERT_EQ(st.size(), 1u) << n;
    EXPECT_EQ(t.str(t.slices.cat[st[0]]), n < 3 ? "train" : "step");
    EXPECT_EQ(t.slices.depth[st[0]], 0);
  }
  for (size_t i : slices_named(t, "work")) EXPECT_EQ(t.slices.depth[i], 1);
  EXPECT_EQ(slices_named(t, "loop_body").size(), 2u);
  // The last mlprof::step() was still open at stop: closed there and marked unfinished.
  size_t last = slices_named(t, "ProfilerStep#4")[0];
  const mlprof::Arg* unfinished = t.slice_arg(last, "unfinished");
  ASSERT_NE(unfinished, nullptr);
  EXPECT_EQ(t.slice_arg(slices_named(t, "ProfilerStep#0")[0], "unfinished"), nullptr);
}

TEST(recorder_core, SamplingRecordsOneStepInN) {
  mlprof::SessionOptions o = quiet_options();
  o.sample = 4;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  for (int i = 0; i < 10; ++i) {
    MLPROF_STEP("train");
    MLPROF_SCOPE("work");
  }
  mlprof::Trace t = s.stop();
  // Steps 0, 4 and 8 of 0..9.
  EXPECT_EQ(slices_named(t, "work").size(), 3u);
  for (int n = 0; n < 10; ++n)
    EXPECT_EQ(slices_named(t, "ProfilerStep#" + std::to_string(n)).size(), n % 4 == 0 ? 1u : 0u)
        << n;
  for (size_t i = 0; i < t.slices.size(); ++i)
    EXPECT_EQ(t.slice_arg(i, "unfinished"), nullptr) << t.str(t.slices.name[i]);
}

TEST(recorder_core, NothingIsRecordedWhileDisabledOrWithoutSession) {
  { MLPROF_SCOPE("before_any_session"); }
  mlprof::counter("no_session", 1.0);
  mlprof::Session s(quiet_options());
  ASSERT_TRUE(s.start().is_ok());
  EXPECT_TRUE(mlprof::enabled());
  { MLPROF_SCOPE("recorded"); }
  mlprof::set_enabled(false);
  EXPECT_FALSE(mlprof::enabled());
  for (int i = 0; i < 1000; ++i) {
    MLPROF_SCOPE("while_disabled");
    mlprof::counter("while_disabled", i);
    mlprof::track_alloc(&i, 4);
  }
  mlprof::set_enabled(true);
  { MLPROF_SCOPE("recorded"); }
  mlprof::Trace t = s.stop();
  EXPECT_FALSE(mlprof::enabled());
  EXPECT_EQ(slices_named(t, "recorded").size(), 2u);
  EXPECT_EQ(t.slices.size(), 2u);
  EXPECT_EQ(t.counters.size(), 0u);
  EXPECT_EQ(t.memory.size(), 0u);
  { MLPROF_SCOPE("after_stop"); }
  // A later session sees nothing of what came before it.
  ASSERT_TRUE(s.start().is_ok());
  mlprof::Trace t2 = s.stop();
  EXPECT_EQ(t2.slices.size(), 0u);
}

TEST(recorder_core, OneSessionAtATime) {
  mlprof::Session a(quiet_options()), b(quiet_options());
  ASSERT_TRUE(a.start().is_ok());
  mlprof::Status second = b.start();
  EXPECT_FALSE(second.is_ok());
  EXPECT_NE(second.message().find("another"), std::string::npos);
  EXPECT_TRUE(a.running());
  EXPECT_FALSE(b.running());
  EXPECT_EQ(b.stop().event_count(), 0u);
  a.stop();
  EXPECT_FALSE(a.running());
}

TEST(recorder_core, RssSamplerWritesACounter) {
  mlprof::SessionOptions o = quiet_options();
  o.rss_interval_ms = 2;
  mlprof::Session s(o);
  ASSERT_TRUE(s.start().is_ok());
  busy_wait(20'000'000);
  mlprof::Trace t = s.stop();
  ASSERT_EQ(t.counter_series.size(), 1u);
  EXPECT_EQ(t.str(t.counter_series[0].name), "rss");
  EXPECT_EQ(t.str(t.counter_series[0].unit), "bytes");
  ASSERT_GE(t.counters.size(), 2u);
  for (double v : t.counters.value) EXPECT_GT(v, 1 << 20);  // a running test uses > 1 MiB
}

}  // namespace
