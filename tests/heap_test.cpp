// analyze_heap on small hand-built traces whose answers are worked out in the comments.
#include "mlprof/analyze/heap.h"

#include <gtest/gtest.h>

#include "mlprof/trace.h"

namespace mlprof {
namespace {

// Process 1, one thread. Stacks: A = [alpha, main], B = [beta, main].
//   t=0    alloc 0x10 100 B (A)
//   t=10   alloc 0x20 300 B (B)
//   t=20   free  0x10            (lifetime 20 ns: temporary at threshold 100 ns)
//   t=1000 alloc 0x30 50 B (A)   -> heap 350; peak was 400 at t=10 (A 100 + B 300)
//   t=2000 alloc 0x40 25 B (B)   -> heap 375
//   t=3000 free  0x99            (never allocated: unmatched)
// End: live = 0x20 (B 300), 0x30 (A 50), 0x40 (B 25) -> leaks B 2 blocks 325 B, A 1 block 50 B.
Trace make_trace() {
  TraceBuilder b;
  uint32_t p = b.process(1);
  uint32_t t = b.thread_track(p, 1);
  StringId main = b.intern("main"), alpha = b.intern("alpha"), beta = b.intern("beta");
  uint32_t A = b.add_stack({alpha, main});
  uint32_t B = b.add_stack({beta, main});
  b.add_memory(t, 0, 0x10, 100, DeviceType::kCpu, -1, -1, -1, A);
  b.add_memory(t, 10, 0x20, 300, DeviceType::kCpu, -1, -1, -1, B);
  b.add_memory(t, 20, 0x10, -100, DeviceType::kCpu, -1, -1, -1, A);
  b.add_memory(t, 2000, 0x40, 25, DeviceType::kCpu, -1, -1, -1, B);  // out of order on purpose
  b.add_memory(t, 1000, 0x30, 50, DeviceType::kCpu, -1, -1, -1, A);
  b.add_memory(t, 3000, 0x99, -8, DeviceType::kCpu, -1, -1, -1, 0);
  b.add_memory(t, 500, 0x77, 4096, DeviceType::kCuda, 0, -1, -1, 0);  // other device: ignored
  return std::move(b).finish();
}

TEST(Heap, PeakLeaksTemporariesRate) {
  Trace t = make_trace();
  HeapOptions o;
  o.temporary_ns = 100;
  o.rate_buckets = 3;
  HeapResult r = analyze_heap(t, o);
  EXPECT_EQ(r.memory_events, 6u);
  EXPECT_EQ(r.allocations, 4u);
  EXPECT_EQ(r.frees, 1u);
  EXPECT_EQ(r.unmatched_frees, 1u);
  EXPECT_EQ(r.bytes_allocated, 475u);
  EXPECT_EQ(r.span_ns, 3000);
  EXPECT_EQ(r.peak_bytes, 400);
  EXPECT_EQ(r.peak_ts_ns, 10);
  EXPECT_EQ(r.peak_blocks, 2u);
  ASSERT_EQ(r.peak_stacks.size(), 2u);
  EXPECT_EQ(r.peak_stacks[0].frames.front(), "beta");
  EXPECT_EQ(r.peak_stacks[0].bytes, 300u);
  EXPECT_EQ(r.peak_stacks[1].frames.front(), "alpha");

  EXPECT_EQ(r.leaked_bytes, 375u);
  EXPECT_EQ(r.leaked_blocks, 3u);
  ASSERT_EQ(r.leaks.size(), 2u);
  EXPECT_EQ(r.leaks[0].frames, (std::vector<std::string>{"beta", "main"}));
  EXPECT_EQ(r.leaks[0].bytes, 325u);
  EXPECT_EQ(r.leaks[0].count, 2u);
  EXPECT_EQ(r.leaks[1].bytes, 50u);
  EXPECT_EQ(r.leaks[1].pids, (std::vector<int64_t>{1}));

  EXPECT_EQ(r.temporary_blocks, 1u);
  EXPECT_EQ(r.temporary_bytes, 100u);
  ASSERT_EQ(r.temporaries.size(), 1u);
  EXPECT_EQ(r.temporaries[0].frames.front(), "alpha");

  // Buckets of 1000 ns: [0,1000) has 2 allocs + 1 free, heap 300 at its end;
  // [1000,2000) 1 alloc -> 350; [2000,3000] 1 alloc -> 375 (the unmatched free changes nothing).
  ASSERT_EQ(r.rate.size(), 3u);
  EXPECT_EQ(r.rate[0].allocations, 2u);
  EXPECT_EQ(r.rate[0].frees, 1u);
  EXPECT_EQ(r.rate[0].heap_bytes_end, 300);
  EXPECT_EQ(r.rate[1].allocations, 1u);
  EXPECT_EQ(r.rate[1].heap_bytes_end, 350);
  EXPECT_EQ(r.rate[2].allocations, 1u);
  EXPECT_EQ(r.rate[2].heap_bytes_end, 375);
}

TEST(Heap, SameAddressInTwoProcessesIsTwoBlocks) {
  TraceBuilder b;
  uint32_t t1 = b.thread_track(b.process(1), 1);
  uint32_t t2 = b.thread_track(b.process(2), 2);
  b.add_memory(t1, 0, 0x10, 64, DeviceType::kCpu, -1);
  b.add_memory(t2, 5, 0x10, 32, DeviceType::kCpu, -1);
  b.add_memory(t2, 9, 0x10, -32, DeviceType::kCpu, -1);
  Trace t = std::move(b).finish();
  HeapResult r = analyze_heap(t);
  EXPECT_EQ(r.processes, 2u);
  EXPECT_EQ(r.peak_bytes, 96);
  EXPECT_EQ(r.leaked_bytes, 64u);
  EXPECT_EQ(r.leaked_blocks, 1u);
  EXPECT_EQ(r.unmatched_frees, 0u);
}

TEST(Heap, EmptyTrace) {
  TraceBuilder b;
  Trace t = std::move(b).finish();
  HeapResult r = analyze_heap(t);
  EXPECT_EQ(r.memory_events, 0u);
  EXPECT_TRUE(r.leaks.empty());
}

}  // namespace
}  // namespace mlprof
