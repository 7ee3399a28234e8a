// The phases of the cross-rank analysis (analyze_rank_summaries, ranks.cpp), one concern each:
//   rank_warnings.cpp     what the set of traces says about itself (unknown, duplicate, missing
//                         ranks, mixed world sizes)
//   rank_clock.cpp        clock alignment: one time base for every rank
//   rank_collectives.cpp  collectives matched across ranks (who arrived last, by how much),
//                         bandwidth by size, per-collective totals
//   rank_stragglers.cpp   imbalance, stragglers and the distributions over ranks
// They share the summaries sorted by rank (RankInputs) and fill one RanksResult in this order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlprof/analyze/ranks.h"

namespace mlprof::rank_phases {

// A call's key across ranks: the group's text (interned over all ranks) and the sequence number.
struct CallKey {
  uint32_t group;
  int64_t seq;
  bool operator==(const CallKey& o) const { return group == o.group && seq == o.seq; }
};
struct CallKeyHash {
  size_t operator()(const CallKey& k) const {
    return std::hash<uint64_t>{}((static_cast<uint64_t>(k.group) << 40) ^
                                 static_cast<uint64_t>(k.seq));
  }
};

// The summaries of a rank set, sorted by rank then file, as the phases read them.
struct RankInputs {
  const std::vector<RankSummary>& sums;
  // Several traces of one rank (copies, reruns): the first (by file name) stands for the rank in
  // the collectives; the others keep their own row, but a call is not matched twice on one rank.
  std::vector<bool> duplicate;
  // Group texts interned over all ranks, numbered in text order (the order calls are listed in).
  std::vector<std::string> group_text;
  std::vector<std::vector<uint32_t>> local_to_global;  // per rank: its group index -> global

  RankInputs(const std::vector<RankSummary>& sums, const RanksResult& r);
  size_t size() const { return sums.size(); }
  CallKey key_of(size_t i, const CollectiveCall& c) const {
    return CallKey{local_to_global[i][c.group], c.seq};
  }
};

// "2-5, 9, 12-127" for a set of numbers; at most `max_parts` parts, then ", ...".
std::string ranges(std::vector<int32_t> v, size_t max_parts = 8);
double median_of(std::vector<int64_t> v);
// NCCL's bus-bandwidth factor of a collective over n ranks.
double bus_factor(std::string_view op, int64_t n);

// Fills r.warnings and r.world_size from the rows (sorted by rank).
void add_warnings(RanksResult& r);
// Fills r.clock and each row's clock_offset_ns; returns the offsets (ns to add to rank i's time).
std::vector<int64_t> align_clocks(const RankInputs& in, RanksResult& r);
// Matches each collective call across ranks: r.matched_calls, each row's collective_calls,
// last_count and late_total_ns, r.late_calls and r.size_buckets. Returns, per rank, how late it
// arrived each time it was last.
std::vector<std::vector<int64_t>> match_collectives(const RankInputs& in,
                                                    const std::vector<int64_t>& offset,
                                                    const RanksOptions& o, RanksResult& r);
// r.collectives: per collective name over all ranks (a duplicate trace's calls once).
void total_collectives(const RankInputs& in, RanksResult& r);
// r.step_mean_ns, the imbalances, the stragglers with their evidence.
void find_stragglers(const std::vector<std::vector<int64_t>>& late_by, const RanksOptions& o,
                     RanksResult& r);
// r.distributions: each metric's spread over the ranks.
void add_distributions(RanksResult& r);

}  // namespace mlprof::rank_phases
