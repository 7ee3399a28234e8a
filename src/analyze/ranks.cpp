// The cross-rank analysis: per-rank summaries (rank_summary.cpp) -> RanksResult, one phase after
// another (rank_phases.h says which file holds each).
#include "mlprof/analyze/ranks.h"

#include <algorithm>
#include <map>

#include "analyze/rank_phases.h"
#include "mlprof/analyze/stats.h"
#include "trace/parallel_for.h"

namespace mlprof {

namespace rank_phases {

// "2-5, 9, 12-127" for a set of numbers; at most `max_parts` parts, then ", ...".
std::string ranges(std::vector<int32_t> v, size_t max_parts) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  size_t parts = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (parts == max_parts) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    ++parts;
    i = j + 1;
  }
  return out;
}

double median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return stats::quantile_sorted(v, 0.5);
}

RankInputs::RankInputs(const std::vector<RankSummary>& summaries, const RanksResult& r)
    : sums(summaries), duplicate(summaries.size(), false), local_to_global(summaries.size()) {
  const size_t n = sums.size();
  for (size_t i = 1; i < n; ++i)
    duplicate[i] = r.ranks[i].rank >= 0 && r.ranks[i].rank == r.ranks[i - 1].rank;
  {
    std::map<std::string, uint32_t> group_id;
    for (const RankSummary& s : sums)
      for (const std::string& g : s.groups) group_id.emplace(g, 0);
    for (auto& [text, id] : group_id) {
      id = static_cast<uint32_t>(group_text.size());
      group_text.push_back(text);
    }
    for (size_t i = 0; i < n; ++i)
      for (const std::string& g : sums[i].groups) local_to_global[i].push_back(group_id.at(g));
  }
}

}  // namespace rank_phases

RanksResult analyze_rank_summaries(std::vector<RankSummary> sums, const RanksOptions& o) {
  using namespace rank_phases;
  RanksResult r;
  std::sort(sums.begin(), sums.end(), [](const RankSummary& a, const RankSummary& b) {
    return a.stats.rank != b.stats.rank ? a.stats.rank < b.stats.rank
                                        : a.stats.source < b.stats.source;
  });
  // The rows take the stats (not copied: their names are most of a summary); below, the
  // summaries are read for their calls, steps and base times only.
  r.ranks.reserve(sums.size());
  for (RankSummary& s : sums) r.ranks.push_back(std::move(s.stats));
  if (sums.empty()) return r;
  add_warnings(r);
  const RankInputs in(sums, r);
  // Traces without a rank count as distinct ranks.
  r.distinct_ranks =
      static_cast<uint32_t>(std::count(in.duplicate.begin(), in.duplicate.end(), false));
  std::vector<int64_t> offset = align_clocks(in, r);
  std::vector<std::vector<int64_t>> late_by = match_collectives(in, offset, o, r);
  total_collectives(in, r);
  find_stragglers(late_by, o, r);
  add_distributions(r);
  return r;
}

const StragglerEvidence* worst_straggler(const RanksResult& r) {
  const StragglerEvidence* worst = nullptr;
  for (const StragglerEvidence& e : r.straggler_evidence)  // in rank order: the lowest wins ties
    if (worst == nullptr || e.time_lost_ns > worst->time_lost_ns) worst = &e;
  return worst;
}

RanksResult analyze_ranks(const std::vector<const Trace*>& traces, const RanksOptions& o) {
  std::vector<RankSummary> sums(traces.size());
  parallel_for(traces.size(), 0, [&](size_t i) { sums[i] = summarize_rank(*traces[i], o); });
  return analyze_rank_summaries(std::move(sums), o);
}

}  // namespace mlprof
