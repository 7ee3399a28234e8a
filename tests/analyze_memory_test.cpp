// Memory and leak analyses on hand-built traces (expected numbers by construction); the real
// traces are checked in tests/py/test_analyze_memory.py against a Python computation.
#include <gtest/gtest.h>

#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/trace.h"

using namespace mlprof;

namespace {

struct Builder {
  TraceBuilder b;
  uint32_t cpu = b.thread_track(b.process(1), 1);
  StringId cat = b.intern("cpu_op");
  void slice(int64_t ts, int64_t dur, const char* name) {
    b.add_slice(cpu, ts, dur, b.intern(name), cat);
  }
};

}  // namespace

TEST(Memory, PeakUnfreedAndPerOpFromRecordedTotals) {
  Builder t;
  t.slice(0, 100, "forward");
  t.slice(10, 20, "aten::empty");
  t.slice(40, 20, "aten::mm");
  // CUDA:0 with totals; reserved 2 MiB throughout.
  const int64_t mib = 1 << 20;
  t.b.add_memory(t.cpu, 15, 0xA, 1000, DeviceType::kCuda, 0, 1000, 2 * mib);
  t.b.add_memory(t.cpu, 45, 0xB, 5000, DeviceType::kCuda, 0, 6000, 2 * mib);
  t.b.add_memory(t.cpu, 50, 0xA, -1000, DeviceType::kCuda, 0, 5000, 2 * mib);
  t.b.add_memory(t.cpu, 120, 0xC, 300, DeviceType::kCuda, 0, 5300, 2 * mib);
  Trace trace = std::move(t.b).finish();
  MemoryResult r = analyze_memory(trace);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceMemory& d = r.devices[0];
  EXPECT_EQ(d.device, "CUDA:0");
  EXPECT_EQ(d.allocs, 3u);
  EXPECT_EQ(d.frees, 1u);
  EXPECT_EQ(d.peak_allocated, 6000);
  EXPECT_EQ(d.peak_ts_ns, 45);
  EXPECT_EQ(d.peak_op, "aten::mm");
  EXPECT_EQ(d.peak_context, "forward > aten::mm");
  EXPECT_FALSE(d.allocated_reconstructed);
  EXPECT_TRUE(d.has_reserved);
  EXPECT_EQ(d.peak_reserved, 2 * mib);
  EXPECT_EQ(d.max_unused_reserved, 2 * mib - 1000);
  // Never freed: 0xB (5000, in aten::mm) and 0xC (300, outside any op).
  EXPECT_EQ(d.unfreed_count, 2u);
  EXPECT_EQ(d.unfreed_bytes, 5300);
  ASSERT_EQ(d.unfreed.size(), 2u);
  EXPECT_EQ(d.unfreed[0].bytes, 5000);
  EXPECT_EQ(d.unfreed[0].op, "aten::mm");
  EXPECT_EQ(d.final_allocated, 5300);
  ASSERT_GE(r.ops.size(), 3u);
  EXPECT_EQ(r.ops[0].op, "aten::mm");
  EXPECT_EQ(r.ops[0].bytes_allocated, 5000);
  // The free happened inside aten::mm too (attributed to the op running at the time).
  EXPECT_EQ(r.ops[0].frees, 1u);
}

TEST(Memory, ReconstructsTotalsWhenAbsent) {
  Builder t;
  t.slice(0, 100, "aten::empty");
  t.b.add_memory(t.cpu, 1, 0x1, 100, DeviceType::kCpu, -1);
  t.b.add_memory(t.cpu, 2, 0x2, 50, DeviceType::kCpu, -1);
  t.b.add_memory(t.cpu, 3, 0x1, -100, DeviceType::kCpu, -1);
  Trace trace = std::move(t.b).finish();
  MemoryResult r = analyze_memory(trace);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_TRUE(r.devices[0].allocated_reconstructed);
  EXPECT_EQ(r.devices[0].peak_allocated, 150);
  EXPECT_EQ(r.devices[0].final_allocated, 50);
  EXPECT_FALSE(r.devices[0].has_reserved);
  EXPECT_EQ(r.devices[0].unfreed_bytes, 50);
  std::vector<int64_t> totals = memory_allocated_totals(trace);
  EXPECT_EQ(totals, (std::vector<int64_t>{100, 150, 50}));
}

TEST(Memory, TimelineKeepsThePeak) {
  Builder t;
  int64_t total = 0;
  for (int i = 0; i < 5000; ++i) {
    int64_t bytes = (i == 3333) ? 1'000'000 : 8;
    total += bytes;
    t.b.add_memory(t.cpu, i, 0x1000 + i, bytes, DeviceType::kCpu, -1, total, -1);
  }
  Trace trace = std::move(t.b).finish();
  MemoryOptions o;
  o.timeline_points = 100;
  MemoryResult r = analyze_memory(trace, o);
  const auto& tl = r.devices[0].timeline;
  EXPECT_LE(tl.size(), 101u);
  int64_t mx = 0;
  for (const MemoryPoint& p : tl) mx = std::max(mx, p.allocated);
  EXPECT_EQ(mx, r.devices[0].peak_allocated);
  EXPECT_EQ(tl.back().allocated, total);
}

namespace {
// Steps of 100 ns; each step allocates 64 KiB in "leak_append" that is never freed (when
// `leak`), plus a temporary freed within the step; `noise` adds a +-50 B wobble.
Trace stepped(int steps, bool leak) {
  Builder t;
  StringId ann = t.b.intern("user_annotation");
  int64_t total = 0;
  uint64_t addr = 0x10000;
  for (int s = 0; s < steps; ++s) {
    int64_t base = s * 100;
    t.b.add_slice(t.cpu, base, 90, t.b.intern("ProfilerStep#" + std::to_string(s + 1)), ann);
    t.slice(base + 10, 20, "aten::empty");
    t.slice(base + 40, 20, "leak_append");
    total += 4096;
    t.b.add_memory(t.cpu, base + 15, addr, 4096, DeviceType::kCpu, -1, total, 0);
    total -= 4096;
    t.b.add_memory(t.cpu, base + 25, addr, -4096, DeviceType::kCpu, -1, total, 0);
    ++addr;
    int64_t wobble = (s % 2) ? 50 : -50;
    int64_t kept = leak ? 65536 : 200 + wobble;
    total += kept;
    t.b.add_memory(t.cpu, base + 45, addr++, kept, DeviceType::kCpu, -1, total, 0);
    if (!leak) {
      total -= kept;
      t.b.add_memory(t.cpu, base + 80, addr - 1, -kept, DeviceType::kCpu, -1, total, 0);
    }
  }
  return std::move(t.b).finish();
}
}  // namespace

TEST(Leaks, GrowthAcrossStepsIsALeak) {
  Trace trace = stepped(10, true);
  LeakResult r = analyze_leaks(trace);
  EXPECT_EQ(r.steps, 10u);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_TRUE(r.leak);
  EXPECT_DOUBLE_EQ(r.devices[0].slope_bytes_per_step, 65536);
  EXPECT_EQ(r.devices[0].growth_bytes, 9 * 65536);
  EXPECT_LT(r.devices[0].p_value, 0.001);
  ASSERT_FALSE(r.surviving_ops.empty());
  EXPECT_EQ(r.surviving_ops[0].op, "leak_append");
  EXPECT_EQ(r.surviving_ops[0].count, 10u);
  EXPECT_EQ(r.surviving_ops[0].steps, 10u);
}

TEST(Leaks, FlatMemoryIsNotALeak) {
  Trace trace = stepped(10, false);
  LeakResult r = analyze_leaks(trace);
  EXPECT_FALSE(r.leak);
  EXPECT_TRUE(r.surviving_ops.empty());
}

TEST(Leaks, TooFewStepsNeverReport) {
  Trace trace = stepped(4, true);
  LeakResult r = analyze_leaks(trace);
  EXPECT_FALSE(r.leak);
  EXPECT_FALSE(r.devices[0].test_valid);
}
