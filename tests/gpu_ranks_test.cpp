// `ranks` on two ranks of a 128-rank A100 job (trace_filter/sampled_rank-{0,1}), against the
// per-rank numbers Holistic Trace Analysis published for them (trace_filter_2ranks.json).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <map>

#include "mlprof/analyze/ranks.h"
#include "mlprof/import.h"
#include "shared_data.h"

namespace mlprof {
namespace {

std::string data(const std::string& rel) { return std::string(MLPROF_TEST_DATA) + "/gpu/" + rel; }

double num(simdjson::dom::element e) {
  if (e.is_null()) return NAN;
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  return NAN;
}

class TwoRanks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* f : {"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"}) {
      MLPROF_SHARED_OR_SKIP(path, std::string("traces/kineto-gpu/trace_filter/") + f);
      auto t = load_trace(path);
      ASSERT_TRUE(t.is_ok()) << t.error();
      t->meta.source = path;
      traces_.push_back(std::move(t.value()));
    }
  }
  static void TearDownTestSuite() { traces_.clear(); }
  // A skip in SetUpTestSuite does not reach every gtest version's test bodies: repeat it here.
  void SetUp() override {
    if (traces_.size() != 2) {
      GTEST_SKIP() << ::mlprof::test::missing_shared("traces/kineto-gpu/trace_filter/");
    }
  }
  RanksResult analyze(bool hta) {
    std::vector<const Trace*> ptrs;
    for (const Trace& t : traces_) ptrs.push_back(&t);
    RanksOptions o;
    o.hta_compatible = hta;
    return analyze_ranks(ptrs, o);
  }
  static std::vector<Trace> traces_;
};
std::vector<Trace> TwoRanks::traces_;

TEST_F(TwoRanks, MatchesHtaPerRank) {
  RanksResult r = analyze(true);
  ASSERT_EQ(r.ranks.size(), 2u);
  simdjson::dom::parser parser;
  simdjson::dom::element ref;
  ASSERT_EQ(parser.load(data("hta_reference/trace_filter_2ranks.json")).get(ref),
            simdjson::SUCCESS);
  std::map<int, const RankStats*> mine;
  for (const RankStats& s : r.ranks) mine[s.rank] = &s;
  for (auto row : ref["temporal_breakdown"].get_array()) {
    int rank = static_cast<int>(num(row["rank"]));
    ASSERT_TRUE(mine.count(rank)) << rank;
    const TemporalBreakdown& t = mine[rank]->temporal;
    EXPECT_NEAR(t.span_ns / 1000.0, num(row["kernel_time(us)"]), 2.0) << rank;
    EXPECT_NEAR(t.idle_pct, num(row["idle_time_pctg"]), 0.1) << rank;
    EXPECT_NEAR(t.compute_pct, num(row["compute_time_pctg"]), 0.1) << rank;
    EXPECT_NEAR(t.non_compute_pct, num(row["non_compute_time_pctg"]), 0.1) << rank;
  }
  for (auto row : ref["comm_comp_overlap"].get_array()) {
    int rank = static_cast<int>(num(row["rank"]));
    EXPECT_NEAR(mine[rank]->comm_comp_overlap_pct, num(row["comp_comm_overlap_pctg"]), 0.1);
  }
}

TEST_F(TwoRanks, ImbalanceAndCollectives) {
  RanksResult r = analyze(false);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].rank, 0);
  EXPECT_EQ(r.ranks[1].rank, 1);
  // max/mean of two values lies in [1, 2).
  EXPECT_GE(r.load_imbalance, 1.0);
  EXPECT_LT(r.load_imbalance, 2.0);
  ASSERT_FALSE(r.collectives.empty());
  uint64_t calls = 0;
  for (const CollectiveStats& c : r.collectives) calls += c.count;
  EXPECT_GT(calls, 0u);
  for (const RankStats& s : r.ranks) {
    EXPECT_GT(s.temporal.communication_ns, 0);
    EXPECT_LE(s.exposed_comm_ns, s.temporal.communication_ns);
  }
}

}  // namespace
}  // namespace mlprof
