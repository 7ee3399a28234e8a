// Ranks at scale: per-rank summaries (streaming reduction, lossless bytes for MPI) and the
// cross-rank analyses over them, on small jobs built here with known answers: which rank arrives
// last at each collective and by how much, clock alignment (baseTimeNanoseconds, or collective
// ends), stragglers with evidence, distributions over ranks, duplicate/missing ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>

#include "mlprof/analysis_set.h"
#include "mlprof/analyze/bottlenecks.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/import.h"
#include "render/analysis_output.h"
#include "render/ranks_render.h"
#include "trace/json_writer.h"

namespace mlprof {
namespace {

constexpr int64_t kUs = 1000;

struct Job {
  int ranks = 4;
  int late_rank = -1;
  int64_t late_us = 0;
  int calls = 5;
  bool base_time = false;
  std::vector<int64_t> shift_us;  // per rank clock shift
  int world_size = -1;            // -1: ranks
};

// One rank of a job: two steps, a compute kernel, and `calls` all-reduces on stream 7. Call k
// starts at 1000 + 2000 k us (the late rank `late_us` later) and ends, on every rank, at
// start + 100 us + late_us: everyone waits for the late rank.
std::string rank_json(const Job& job, int rank, int world_size) {
  int64_t shift = job.shift_us.empty() ? 0 : job.shift_us[static_cast<size_t>(rank)];
  auto t = [&](int64_t us) { return std::to_string(us + shift); };
  std::string j = R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
                  R"(, "world_size": )" + std::to_string(world_size) + "}, ";
  if (job.base_time)
    j += R"("baseTimeNanoseconds": )" + std::to_string(1'700'000'000'000'000'000LL - shift * kUs) +
         ", ";
  j += R"("traceEvents": [)";
  int64_t end_all = 1000 + 2000 * job.calls;
  j += R"({"ph":"X","pid":1,"tid":1,"name":"ProfilerStep#1","cat":"user_annotation","ts":)" + t(0) +
       R"(,"dur":)" + std::to_string(end_all / 2) + "},";
  j += R"({"ph":"X","pid":1,"tid":1,"name":"ProfilerStep#2","cat":"user_annotation","ts":)" +
       t(end_all / 2) + R"(,"dur":)" + std::to_string(end_all / 2) + "},";
  j += R"({"ph":"X","pid":0,"tid":8,"name":"gemm","cat":"kernel","ts":)" + t(10) +
       R"(,"dur":500,"args":{"stream":8,"device":0}})";
  for (int k = 0; k < job.calls; ++k) {
    int64_t start = 1000 + 2000 * k;
    int64_t late = job.late_us;
    int64_t end = start + 100 + late;
    if (rank == job.late_rank) start += late;
    j += R"J(,{"ph":"X","pid":0,"tid":7,"name":"ncclKernel_AllReduce_RING_LL_Sum_float(x)",)J"
         R"("cat":"kernel","ts":)" +
         t(start) + R"(,"dur":)" + std::to_string(end - start) +
         R"(,"args":{"stream":7,"device":0,"Collective name":"allreduce","In msg nelems":)" +
         std::to_string(1 << (10 + k)) + R"(,"dtype":"Float","Group size":)" +
         std::to_string(job.ranks) + R"(,"Process Group Name":"0","Process Group Ranks":"[all]"}})";
  }
  return j + "]}";
}

std::vector<RankSummary> summaries_of(const Job& job, const std::vector<int>& which = {}) {
  std::vector<RankSummary> out;
  std::vector<int> ranks = which;
  if (ranks.empty())
    for (int r = 0; r < job.ranks; ++r) ranks.push_back(r);
  int n = 0;
  for (int r : ranks) {
    std::string name = "rank-" + std::to_string(r) + "-" + std::to_string(n++) + ".json";
    Result<Trace> t = import_chrome_json_buffer(
        rank_json(job, r, job.world_size > 0 ? job.world_size : job.ranks), name);
    EXPECT_TRUE(t.is_ok()) << (t ? "" : t.error());
    t->meta.source = name;
    out.push_back(summarize_rank(t.value()));
  }
  return out;
}

std::string json_of(const RanksResult& r) {
  JsonWriter w;
  write_ranks_json(w, r);
  return w.str();
}

TEST(RanksScale, LateRankIsLastByItsDelayWithCollectiveEndAlignment) {
  Job job;
  job.late_rank = 2;
  job.late_us = 300;
  job.shift_us = {0, 5000, -7000, 123};
  RanksResult r = analyze_rank_summaries(summaries_of(job));
  ASSERT_EQ(r.ranks.size(), 4u);
  EXPECT_EQ(r.clock.method, "collective_end");
  EXPECT_EQ(r.clock.reference_rank, 0);
  for (const RankStats& s : r.ranks)  // aligned = own + offset: undoes the shift exactly
    EXPECT_EQ(s.clock_offset_ns, -job.shift_us[static_cast<size_t>(s.rank)] * kUs) << s.rank;
  EXPECT_EQ(r.clock.residual_ns, 0);
  EXPECT_EQ(r.matched_calls, 5u);
  ASSERT_EQ(r.stragglers, std::vector<int32_t>{2});
  ASSERT_EQ(r.straggler_evidence.size(), 1u);
  const StragglerEvidence& e = r.straggler_evidence[0];
  EXPECT_EQ(e.last_count, 5u);
  EXPECT_EQ(e.calls, 5u);
  EXPECT_EQ(e.late_median_ns, 300 * kUs);
  EXPECT_EQ(e.late_total_ns, 5 * 300 * kUs);
  EXPECT_NE(e.reason.find("last to arrive at 5 of 5"), std::string::npos) << e.reason;
  ASSERT_EQ(r.late_calls.size(), 5u);
  for (const LateCall& c : r.late_calls) {
    EXPECT_EQ(c.last_rank, 2);
    EXPECT_EQ(c.late_by_ns, 300 * kUs);
    EXPECT_EQ(c.spread_ns, 300 * kUs);
    EXPECT_EQ(c.ranks, 4u);
    EXPECT_EQ(c.group, "0 [all]");
  }
  // Bandwidth from the shortest kernel of each call (the late rank's 100 us), per size bucket:
  // call k moves 4 * 2^(10+k) bytes.
  ASSERT_EQ(r.size_buckets.size(), 5u);
  for (int k = 0; k < 5; ++k) {
    const SizeBucket& b = r.size_buckets[static_cast<size_t>(k)];
    int64_t bytes = 4LL << (10 + k);
    EXPECT_EQ(b.min_bytes, bytes);
    EXPECT_EQ(b.calls, 1u);
    EXPECT_EQ(b.time_ns, 100 * kUs);
    EXPECT_DOUBLE_EQ(b.algbw_gbps, static_cast<double>(bytes) / (100 * kUs));
    EXPECT_DOUBLE_EQ(b.busbw_gbps, b.algbw_gbps * 2.0 * 3 / 4);  // all-reduce over 4 ranks
  }
  // Per rank: the late rank's last count and lateness; the others were never last.
  for (const RankStats& s : r.ranks) {
    EXPECT_EQ(s.collective_calls, 5u);
    EXPECT_EQ(s.last_count, s.rank == 2 ? 5u : 0u);
    EXPECT_EQ(s.straggler, s.rank == 2);
  }
  EXPECT_TRUE(r.warnings.empty());
}

TEST(RanksScale, BaseTimeAlignmentWhenEveryTraceHasIt) {
  Job job;
  job.late_rank = 1;
  job.late_us = 50;
  job.base_time = true;
  job.shift_us = {100, -2000, 0, 999};
  RanksResult r = analyze_rank_summaries(summaries_of(job));
  EXPECT_EQ(r.clock.method, "kineto_base_time");
  for (const RankStats& s : r.ranks)
    EXPECT_EQ(s.clock_offset_ns,
              (job.shift_us[0] - job.shift_us[static_cast<size_t>(s.rank)]) * kUs);
  EXPECT_EQ(r.clock.residual_ns, 0);
  EXPECT_EQ(r.stragglers, std::vector<int32_t>{1});
  ASSERT_FALSE(r.late_calls.empty());
  EXPECT_EQ(r.late_calls[0].late_by_ns, 50 * kUs);
}

TEST(RanksScale, NoStragglerWhenNobodyIsLate) {
  Job job;
  job.shift_us = {0, 10, 20, 30};
  RanksResult r = analyze_rank_summaries(summaries_of(job));
  EXPECT_TRUE(r.stragglers.empty());
  EXPECT_EQ(r.matched_calls, 5u);
  // Identical ranks arrive together at every call (aligned at collective ends): a tie has no
  // rank that arrived last (the highest row was counted last at every call, by 0 ns).
  for (const RankStats& s : r.ranks) {
    EXPECT_EQ(s.collective_calls, 5u);
    EXPECT_EQ(s.last_count, 0u) << "rank " << s.rank;
    EXPECT_EQ(s.late_total_ns, 0);
  }
  EXPECT_TRUE(r.late_calls.empty()) << json_of(r);
}

TEST(RanksScale, DuplicateTraceIsNotMatchedTwice) {
  Job job;
  job.ranks = 8;
  job.late_rank = 7;
  job.late_us = 300;
  // rank 3 twice, ranks 5 and 6 missing: 7 traces of 6 ranks.
  RanksResult r = analyze_rank_summaries(summaries_of(job, {0, 1, 2, 3, 3, 4, 7}));
  ASSERT_EQ(r.ranks.size(), 7u);
  EXPECT_EQ(r.distinct_ranks, 6u);
  ASSERT_EQ(r.late_calls.size(), 5u);
  for (const LateCall& c : r.late_calls) {
    EXPECT_EQ(c.ranks, 6u);  // not 7: the copy of rank 3 is no member of its own
    EXPECT_EQ(c.last_rank, 7);
    EXPECT_EQ(c.late_by_ns, 300 * kUs);
  }
  // The first trace of rank 3 (by source) stands for it; the copy keeps its row, unmatched.
  EXPECT_EQ(r.ranks[3].source, "rank-3-3.json");
  EXPECT_EQ(r.ranks[3].collective_calls, 5u);
  EXPECT_EQ(r.ranks[4].source, "rank-3-4.json");
  EXPECT_EQ(r.ranks[4].collective_calls, 0u);
  ASSERT_FALSE(r.collectives.empty());
  EXPECT_EQ(r.collectives[0].count, 6u * 5u);  // each rank's calls once
  EXPECT_EQ(render_ranks_text(r, 200, 0).rfind("7 traces of 6 ranks (world size 8)", 0), 0u)
      << render_ranks_text(r, 200, 0);
}

// A template argument in parentheses is no parameter list: kernels are kept by their full names
// (cut at the first '(', both of these read "void k<float, " and were merged into one).
TEST(RanksScale, TopKernelsKeepTheirFullNames) {
  std::string j = R"({"traceEvents": [)"
                  R"J({"ph":"X","pid":0,"tid":7,"name":"void k<float, (E)1>(int)","cat":"kernel",)J"
                  R"("ts":0,"dur":30,"args":{"stream":7,"device":0}},)"
                  R"J({"ph":"X","pid":0,"tid":7,"name":"void k<float, (E)2>(int)","cat":"kernel",)J"
                  R"("ts":40,"dur":20,"args":{"stream":7,"device":0}}]})";
  Result<Trace> t = import_chrome_json_buffer(j, "rank-0.json");
  ASSERT_TRUE(t.is_ok()) << t.error();
  RankSummary s = summarize_rank(t.value());
  ASSERT_EQ(s.stats.top_kernels.size(), 2u);
  EXPECT_EQ(s.stats.top_kernels[0].name, "void k<float, (E)1>(int)");
  EXPECT_EQ(s.stats.top_kernels[0].time_ns, 30 * kUs);
  EXPECT_EQ(s.stats.top_kernels[1].name, "void k<float, (E)2>(int)");
}

// The straggler found from the arrival order is analyzed in depth (every rank's steps last as
// long: the slowest rank by step time would be rank 0) and is a bottleneck finding whose saving
// is the time the others wait for it.
TEST(RanksScale, StragglerIsAnalyzedInDepthAndIsAFinding) {
  Job job;
  job.late_rank = 2;
  job.late_us = 300;
  auto loader = [](Job j) -> RankLoader {  // reloads "rank-R-N.json" of job j
    return [j](const std::string& path) -> Result<Trace> {
      Result<Trace> t =
          import_chrome_json_buffer(rank_json(j, std::stoi(path.substr(5)), j.ranks), path);
      if (t) t->meta.source = path;
      return t;
    };
  };
  AnalysisSet set(summaries_of(job), loader(job));
  EXPECT_EQ(set.trace().meta.source, "rank-2-2.json");
  EXPECT_EQ(set.focus_reason(), "the straggler");
  ASSERT_EQ(set.ranks().straggler_evidence.size(), 1u);
  EXPECT_EQ(set.ranks().straggler_evidence[0].time_lost_ns, 5 * 300 * kUs);
  const Finding* f = nullptr;
  for (const Finding& x : set.bottlenecks().findings)
    if (x.kind == "straggler") f = &x;
  ASSERT_NE(f, nullptr) << analysis_json(set, AnalysisId::kBottlenecks);
  EXPECT_EQ(f->ops, std::vector<std::string>{"rank 2"});
  EXPECT_EQ(f->est_savings_ns, 5 * 300 * kUs);
  EXPECT_NE(f->title.find("Rank 2 is a straggler: last to arrive at 5 of 5"), std::string::npos)
      << f->title;
  EXPECT_NE(f->recommendation.find("rank-2-2.json"), std::string::npos) << f->recommendation;
  EXPECT_NE(f->recommendation.find("The other findings here are this rank's"), std::string::npos);

  // Nobody late: the slowest rank (the first of equals), as before.
  Job even;
  AnalysisSet plain(summaries_of(even), loader(even));
  EXPECT_EQ(plain.focus_reason(), "the slowest rank");
  EXPECT_EQ(plain.trace().meta.source, "rank-0-0.json");
  for (const Finding& x : plain.bottlenecks().findings) EXPECT_NE(x.kind, "straggler");
}

TEST(RanksScale, DuplicateMissingAndMixedWorldSizesAreWarnings) {
  Job job;
  job.ranks = 8;
  // rank 3 twice, ranks 5 and 6 missing
  std::vector<RankSummary> s = summaries_of(job, {0, 1, 2, 3, 3, 4, 7});
  RanksResult r = analyze_rank_summaries(s);
  EXPECT_EQ(r.world_size, 8);
  ASSERT_EQ(r.warnings.size(), 2u) << json_of(r);
  EXPECT_EQ(r.warnings[0], "duplicate rank 3: 2 traces (rank-3-3.json, rank-3-4.json)");
  EXPECT_EQ(r.warnings[1], "missing ranks: 2 of world size 8 have no trace (5-6)");

  Job mixed;
  mixed.ranks = 2;
  std::vector<RankSummary> m = summaries_of(mixed);
  m[1].stats.world_size = 16;
  r = analyze_rank_summaries(m);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("mixed world sizes: 2 (1 trace: rank 0); 16 (1 trace: rank 1)"),
            std::string::npos)
      << r.warnings[0];

  // 64 copies of one rank (the issue's case): one warning, not 64 identical rows unnoticed.
  std::vector<RankSummary> copies = summaries_of(mixed, std::vector<int>(64, 0));
  r = analyze_rank_summaries(copies);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("duplicate rank 0: 64 traces"), std::string::npos);
}

TEST(RanksScale, DistributionsUseTheLinearPercentile) {
  // Five ranks whose step means are 1..5 ms (one rank per value): numpy's linear percentile of
  // [1,2,3,4,5] gives p50 3, p90 4.6, p99 4.96; mean 3, max/mean 5/3.
  std::vector<RankSummary> s;
  for (int r = 0; r < 5; ++r) {
    RankSummary x;
    x.stats.rank = r;
    x.stats.source = "r" + std::to_string(r);
    x.stats.steps = 1;
    x.stats.step_mean_ns = (5 - r) * 1e6;  // given out of order
    x.stats.wall_ns = (5 - r) * 1'000'000;
    s.push_back(x);
  }
  RanksResult r = analyze_rank_summaries(s);
  const RankDistribution* d = nullptr;
  for (const RankDistribution& x : r.distributions)
    if (x.metric == "step_mean_ns") d = &x;
  ASSERT_NE(d, nullptr);
  EXPECT_DOUBLE_EQ(d->min, 1e6);
  EXPECT_DOUBLE_EQ(d->p50, 3e6);
  EXPECT_NEAR(d->p90, 4.6e6, 1e-3);
  EXPECT_NEAR(d->p99, 4.96e6, 1e-3);
  EXPECT_DOUBLE_EQ(d->max, 5e6);
  EXPECT_DOUBLE_EQ(d->mean, 3e6);
  EXPECT_DOUBLE_EQ(d->max_over_mean, 5.0 / 3.0);
  EXPECT_EQ(d->max_rank, 0);
  EXPECT_EQ(d->min_rank, 4);
  // Step criterion: rank 0 (5 ms) is 67% above the median (3 ms).
  EXPECT_EQ(r.stragglers, (std::vector<int32_t>{0, 1}));
}

TEST(RanksScale, SummariesRoundTripAsBytesAndOrderDoesNotMatter) {
  Job job;
  job.late_rank = 3;
  job.late_us = 200;
  job.shift_us = {0, 1, 2, 3};
  std::vector<RankSummary> s = summaries_of(job);
  std::string bytes = encode_rank_summaries(s);
  auto back = decode_rank_summaries(bytes);
  ASSERT_TRUE(back.is_ok()) << back.error();
  EXPECT_EQ(encode_rank_summaries(back.value()), bytes);
  std::string want = json_of(analyze_rank_summaries(s));
  EXPECT_EQ(json_of(analyze_rank_summaries(back.value())), want);
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    std::vector<RankSummary> shuffled = s;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    EXPECT_EQ(json_of(analyze_rank_summaries(shuffled)), want);
  }
  // Damaged blocks are errors, never crashes.
  for (size_t cut : {size_t{0}, size_t{3}, size_t{8}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_FALSE(decode_rank_summaries(std::string_view(bytes).substr(0, cut)).is_ok()) << cut;
  for (int i = 0; i < 200; ++i) {
    std::string bad = bytes;
    bad[8 + rng() % (bad.size() - 8)] = static_cast<char>(rng());
    (void)decode_rank_summaries(bad);  // may decode (a changed number) or fail; must not crash
  }
}

// What a summary keeps lives until every rank is reduced: the top names and nothing beside them.
// A rank with 300 op names and 300 kernel names keeps 5 of each, in storage for 5 (a vector of
// all 300 cut down to 5 kept room for 300: 1024 ranks of the sample job grew 20 MB that way),
// and its calls without spare room.
TEST(RanksScale, SummaryKeepsOnlyItsTopNames) {
  std::string j = R"({"traceEvents": [)";
  for (int i = 0; i < 300; ++i) {
    std::string n = std::to_string(i);
    // Times 1..300 us, op and kernel i both last i+1 us; ties between op_7a/op_7b by name.
    j += R"({"ph":"X","pid":1,"tid":1,"name":"aten::op_with_a_long_name_)" + n +
         R"(","cat":"cpu_op","ts":)" + std::to_string(i * 1000) + R"(,"dur":)" +
         std::to_string(i + 1) + "},";
    j += R"({"ph":"X","pid":0,"tid":8,"name":"void kernel_with_a_long_template_name_)" + n +
         R"(<float>","cat":"kernel","ts":)" + std::to_string(i * 1000) + R"(,"dur":)" +
         std::to_string(i + 1) + R"(,"args":{"stream":8,"device":0}},)";
  }
  j += R"({"ph":"X","pid":1,"tid":1,"name":"aten::op_with_a_long_name_tie","cat":"cpu_op",)"
       R"("ts":400000,"dur":300}]})";
  Result<Trace> t = import_chrome_json_buffer(j, "rank-0.json");
  ASSERT_TRUE(t.is_ok()) << t.error();
  RankSummary s = summarize_rank(t.value());
  ASSERT_EQ(s.stats.top_ops.size(), 5u);
  EXPECT_EQ(s.stats.top_ops.capacity(), 5u);
  std::vector<std::string> ops;
  for (const NamedTime& n : s.stats.top_ops) ops.push_back(n.name);
  EXPECT_EQ(ops, (std::vector<std::string>{
                     "aten::op_with_a_long_name_299", "aten::op_with_a_long_name_tie",
                     "aten::op_with_a_long_name_298", "aten::op_with_a_long_name_297",
                     "aten::op_with_a_long_name_296"}));
  EXPECT_EQ(s.stats.top_ops[1].time_ns, 300 * kUs);
  ASSERT_EQ(s.stats.top_kernels.size(), 5u);
  EXPECT_EQ(s.stats.top_kernels.capacity(), 5u);
  EXPECT_EQ(s.stats.top_kernels[0].name, "void kernel_with_a_long_template_name_299<float>");
  EXPECT_EQ(s.stats.top_kernels[4].time_ns, 296 * kUs);

  Job job;
  job.calls = 5;
  Result<Trace> r = import_chrome_json_buffer(rank_json(job, 0, 4), "rank-0.json");
  ASSERT_TRUE(r.is_ok());
  RankSummary c = summarize_rank(r.value());
  ASSERT_EQ(c.calls.size(), 5u);
  EXPECT_EQ(c.calls.capacity(), c.calls.size());
}

TEST(RanksScale, ReductionHoldsAtMostOneTracePerWorker) {
  Job job;
  job.ranks = 12;
  std::vector<std::string> files;
  for (int r = 0; r < job.ranks; ++r) files.push_back("rank-" + std::to_string(r) + ".json");
  files.push_back("broken.json");
  std::atomic<int> live{0}, most{0};
  RankLoader load = [&](const std::string& path) -> Result<Trace> {
    int now = ++live;
    int prev = most.load();
    while (now > prev && !most.compare_exchange_weak(prev, now)) {
    }
    if (path == "broken.json") {
      --live;
      return Status::error("broken.json: not a trace");
    }
    int rank = std::stoi(path.substr(5));
    Result<Trace> t = import_chrome_json_buffer(rank_json(job, rank, job.ranks), path);
    t->meta.source = path;
    --live;  // handed to the worker, which frees it after summarizing
    return t;
  };
  std::vector<std::string> errors;
  std::vector<RankSummary> s = reduce_rank_files(files, load, 3, {}, errors);
  EXPECT_EQ(s.size(), 12u);
  EXPECT_LE(most.load(), 3);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "broken.json: not a trace");
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(s[i].stats.source, files[i]);  // file order
  // Asked to stop: no more files loaded.
  int loads = 0;
  RankLoader counting = [&](const std::string& path) -> Result<Trace> {
    ++loads;
    return load(path);
  };
  errors.clear();
  reduce_rank_files(files, counting, 1, {}, errors, [&] { return loads < 2; });
  EXPECT_EQ(loads, 2);
}

}  // namespace
}  // namespace mlprof
