// Clock alignment: one time base for every rank of a set. Kineto's baseTimeNanoseconds when
// every trace has it; else each rank shifted so the collectives it shares with the reference rank
// (the first) end together (the median over the calls); the residual says how well that worked.
#include <cstdlib>
#include <unordered_map>

#include "analyze/rank_phases.h"

namespace mlprof::rank_phases {

std::vector<int64_t> align_clocks(const RankInputs& in, RanksResult& r) {
  const std::vector<RankSummary>& sums = in.sums;
  const size_t n = in.size();
  auto key_of = [&](size_t i, const CollectiveCall& c) { return in.key_of(i, c); };
  std::vector<int64_t> offset(n, 0);
  ClockAlignment& clock = r.clock;
  clock.reference_rank = r.ranks[0].rank;
  std::unordered_map<CallKey, int64_t, CallKeyHash> ref_end;
  for (const CollectiveCall& c : sums[0].calls) ref_end[key_of(0, c)] = c.end_ns;
  // Per rank, its calls' end - the reference's end, over the calls both have.
  auto end_diffs = [&](size_t i) {
    std::vector<int64_t> d;
    for (const CollectiveCall& c : sums[i].calls) {
      auto it = ref_end.find(key_of(i, c));
      if (it != ref_end.end()) d.push_back(it->second - c.end_ns);
    }
    return d;
  };
  size_t without_base = 0;
  for (const RankSummary& s : sums) without_base += s.base_time_ns == 0;
  bool all_base = without_base == 0;
  // "no baseTimeNanoseconds in every trace" read as "in none"; say how many lack it.
  std::string no_base = without_base == n
                            ? "no trace has baseTimeNanoseconds"
                            : "baseTimeNanoseconds missing in " + std::to_string(without_base) +
                                  " of " + std::to_string(n) + " traces";
  if (n == 1) {
    clock.note = "one rank";
  } else if (all_base) {
    clock.method = "kineto_base_time";
    for (size_t i = 0; i < n; ++i) offset[i] = sums[i].base_time_ns - sums[0].base_time_ns;
    clock.note = "each trace's baseTimeNanoseconds";
  } else {
    std::vector<int32_t> unaligned;
    size_t aligned = 0;
    for (size_t i = 1; i < n; ++i) {
      std::vector<int64_t> d = end_diffs(i);
      if (d.empty()) {
        unaligned.push_back(r.ranks[i].rank);
        continue;
      }
      offset[i] = std::llround(median_of(std::move(d)));
      ++aligned;
    }
    if (aligned > 0) {
      clock.method = "collective_end";
      clock.note = no_base + ": each rank shifted so the collectives it shares with rank " +
                   std::to_string(clock.reference_rank) + " end together (median over the calls)";
      if (!unaligned.empty())
        clock.note +=
            "; not aligned (no collective shared with the reference): rank " + ranges(unaligned, 4);
    } else {
      clock.note = no_base + " and no collective matched across ranks: raw timestamps";
    }
  }
  if (n > 1) {
    std::vector<int64_t> residuals;
    for (size_t i = 1; i < n; ++i) {
      std::vector<int64_t> d = end_diffs(i);
      if (d.empty()) continue;
      for (int64_t& x : d) x = std::llabs(x - offset[i]);
      residuals.push_back(std::llround(median_of(std::move(d))));
    }
    clock.residual_ns = std::llround(median_of(std::move(residuals)));
  }
  for (size_t i = 0; i < n; ++i) r.ranks[i].clock_offset_ns = offset[i];
  return offset;
}

}  // namespace mlprof::rank_phases
