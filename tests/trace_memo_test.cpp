// The analysis stage's shared derived tables (src/analyze/trace_memo.h): one build per set,
// a rebuild when the trace changed, nothing shared outside a set.
#include "analyze/trace_memo.h"

#include <gtest/gtest.h>

#include "mlprof/analyze/gpu_events.h"
#include "mlprof/trace.h"

namespace mlprof {
namespace {

TEST(TraceMemo, BuildsOncePerKeyAndAgainWhenTheTraceGrows) {
  Trace t;
  TraceMemo memo;
  int builds = 0;
  auto build = [&] { return ++builds; };
  auto a = memo.get<int>(t, MemoTable::kGpuEvents, nullptr, build);
  auto b = memo.get<int>(t, MemoTable::kGpuEvents, nullptr, build);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(builds, 1);
  int other = 0;
  auto c = memo.get<int>(t, MemoTable::kGpuEvents, &other, build);  // another input result
  EXPECT_EQ(*c, 2);
  auto d = memo.get<int>(t, MemoTable::kGpuEventsHta, nullptr, build);
  EXPECT_EQ(*d, 3);
  t.args.emplace_back();  // the trace changed: the entry is built again
  auto e = memo.get<int>(t, MemoTable::kGpuEvents, nullptr, build);
  EXPECT_EQ(*e, 4);
  EXPECT_EQ(*a, 1);  // a caller still holding the old table keeps it
}

TEST(TraceMemo, SharedOnlyInsideAScope) {
  Trace t;
  EXPECT_EQ(TraceMemo::current(), nullptr);
  EXPECT_NE(shared_gpu_events(t).get(), shared_gpu_events(t).get());
  TraceMemo memo;
  {
    TraceMemoScope scope(memo);
    EXPECT_EQ(TraceMemo::current(), &memo);
    auto a = shared_gpu_events(t);
    EXPECT_EQ(a.get(), shared_gpu_events(t).get());
    GpuEventsOptions hta;
    hta.hta_compatible = true;
    EXPECT_NE(a.get(), shared_gpu_events(t, hta).get());
    TraceMemo inner;
    {
      TraceMemoScope nested(inner);
      EXPECT_EQ(TraceMemo::current(), &inner);
    }
    EXPECT_EQ(TraceMemo::current(), &memo);
  }
  EXPECT_EQ(TraceMemo::current(), nullptr);
}

}  // namespace
}  // namespace mlprof
