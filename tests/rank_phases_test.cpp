// The phases of the cross-rank analysis (src/analyze/rank_phases.h) that carry logic of their own:
// the rank ranges in warnings, the set's warnings, clock alignment and NCCL's bus factors. The
// expected values are worked out by hand in the comments.
#include "analyze/rank_phases.h"

#include <gtest/gtest.h>

namespace mlprof::rank_phases {
namespace {

TEST(RankPhases, RangesJoinRunsAndStopAtMaxParts) {
  EXPECT_EQ(ranges({12, 2, 3, 4, 5, 9, 13, 3}), "2-5, 9, 12-13");  // sorted, duplicates once
  EXPECT_EQ(ranges({1, 3, 5, 7}, 2), "1, 3, ...");
  EXPECT_EQ(ranges({}), "");
}

TEST(RankPhases, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor("allreduce", 4), 1.5);                    // 2 (n - 1) / n
  EXPECT_DOUBLE_EQ(bus_factor("ncclKernel_AllGather_RING", 8), 0.875);  // (n - 1) / n
  EXPECT_DOUBLE_EQ(bus_factor("reduce_scatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor("allreduce", 1), 1.0);
}

RankStats row(int32_t rank, const char* source, int32_t world_size) {
  RankStats s;
  s.rank = rank;
  s.source = source;
  s.world_size = world_size;
  return s;
}

TEST(RankPhases, WarningsNameDuplicatesMissingAndOutsideRanks) {
  // Ranks 0 (twice), 2 and 5 of a world of 4: 0 is duplicated, 1 and 3 are missing, 5 is outside.
  RanksResult r;
  r.ranks = {row(0, "/d/a.json", 4), row(0, "/d/b.json", 4), row(2, "/d/c.json", 4),
             row(5, "/d/e.json", 4)};
  add_warnings(r);
  EXPECT_EQ(r.world_size, 4);
  ASSERT_EQ(r.warnings.size(), 3u);
  EXPECT_EQ(r.warnings[0], "duplicate rank 0: 2 traces (a.json, b.json)");
  EXPECT_EQ(r.warnings[1], "missing ranks: 2 of world size 4 have no trace (1, 3)");
  EXPECT_EQ(r.warnings[2], "ranks outside world size 4: 5");
}

RankSummary summary(int32_t rank, int64_t base_time,
                    std::vector<std::pair<int64_t, int64_t>> calls) {
  RankSummary s;
  s.stats.rank = rank;
  s.stats.source = "rank" + std::to_string(rank) + ".json";
  s.base_time_ns = base_time;
  s.groups = {"0 [0, 1]"};
  s.names = {"", "allreduce"};
  for (size_t i = 0; i < calls.size(); ++i) {
    CollectiveCall c;
    c.group = 0;
    c.name = 1;
    c.seq = static_cast<int64_t>(i);
    c.start_ns = calls[i].first;
    c.end_ns = calls[i].second;
    s.calls.push_back(c);
  }
  return s;
}

RanksResult rows_of(const std::vector<RankSummary>& sums) {
  RanksResult r;
  for (const RankSummary& s : sums) r.ranks.push_back(s.stats);
  return r;
}

TEST(RankPhases, ClocksFromBaseTimeWhenEveryTraceHasIt) {
  std::vector<RankSummary> sums = {summary(0, 5000, {{0, 10}}), summary(1, 7500, {{0, 10}})};
  RanksResult r = rows_of(sums);
  RankInputs in(sums, r);
  std::vector<int64_t> offset = align_clocks(in, r);
  EXPECT_EQ(r.clock.method, "kineto_base_time");
  EXPECT_EQ(offset, (std::vector<int64_t>{0, 2500}));  // 7500 - 5000
  EXPECT_EQ(r.ranks[1].clock_offset_ns, 2500);
}

TEST(RankPhases, ClocksFromCollectiveEndsWithoutBaseTime) {
  // Rank 1's clock runs 1000 ns behind: its calls end at 900, 1900, 2900 where rank 0's end at
  // 1900, 2900, 3900. Each end difference is 1000, so is their median, and what is left after
  // the shift (the residual) is 0.
  std::vector<RankSummary> sums = {summary(0, 0, {{1000, 1900}, {2000, 2900}, {3000, 3900}}),
                                   summary(1, 0, {{100, 900}, {1200, 1900}, {2100, 2900}})};
  RanksResult r = rows_of(sums);
  RankInputs in(sums, r);
  std::vector<int64_t> offset = align_clocks(in, r);
  EXPECT_EQ(r.clock.method, "collective_end");
  EXPECT_EQ(r.clock.reference_rank, 0);
  EXPECT_EQ(offset, (std::vector<int64_t>{0, 1000}));
  EXPECT_EQ(r.clock.residual_ns, 0);
  // The last to arrive at each call, on the aligned clock: rank 1 starts at 1100, 2200, 3100,
  // after rank 0's 1000, 2000, 3000, so it is last three times, late by 100, 200, 100.
  std::vector<std::vector<int64_t>> late = match_collectives(in, offset, RanksOptions{}, r);
  EXPECT_EQ(r.matched_calls, 3u);
  EXPECT_EQ(r.ranks[1].last_count, 3u);
  EXPECT_EQ(r.ranks[1].late_total_ns, 400);
  EXPECT_EQ(late[1], (std::vector<int64_t>{100, 200, 100}));
  EXPECT_TRUE(late[0].empty());
}

}  // namespace
}  // namespace mlprof::rank_phases
