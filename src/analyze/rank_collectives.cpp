// Collectives matched across ranks: each call (group, sequence number) with its arrival on every
// rank, on the aligned clock. Who arrived last and how late, the calls that waited longest, the
// bandwidth by message size (bucketed at powers of two) and per-collective totals.
#include <algorithm>
#include <climits>
#include <map>
#include <queue>
#include <span>

#include "analyze/rank_phases.h"

namespace mlprof::rank_phases {

// NCCL's bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md): the data each rank moves over
// the slowest link relative to the message size.
double bus_factor(std::string_view op, int64_t n) {
  if (n <= 1) return 1.0;
  double r = static_cast<double>(n);
  std::string lower(op);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto has = [&](const char* s) { return lower.find(s) != std::string::npos; };
  if (has("allreduce") || has("all_reduce")) return 2.0 * (r - 1) / r;
  if (has("allgather") || has("all_gather") || has("reduce_scatter") || has("reducescatter") ||
      has("alltoall") || has("all_to_all")) {
    return (r - 1) / r;
  }
  return 1.0;
}

namespace {

// Every call once, as (rank row, index in its summary), sorted by key (group, sequence number),
// then by aligned arrival and rank row: each key's arrivals are one run. Beside the summaries
// this takes 8 bytes a call, not a copy of every call in a map by key.
struct Ref {
  uint32_t row;
  uint32_t call;
};
struct Arrivals {
  const RankInputs& in;
  const std::vector<int64_t>& offset;
  std::vector<Ref> refs;
  std::vector<size_t> run;  // where each key's arrivals begin in `refs`, then refs.size()

  Arrivals(const RankInputs& inputs, const std::vector<int64_t>& offsets)
      : in(inputs), offset(offsets) {
    const std::vector<RankSummary>& sums = in.sums;
    const std::vector<bool>& duplicate = in.duplicate;
    const size_t n = in.size();
    auto ref_key = [&](const Ref& x) { return key(x); };
    auto start_of = [&](const Ref& x) { return start(x); };
    {
      size_t total = 0;
      for (size_t i = 0; i < n; ++i) total += duplicate[i] ? 0 : sums[i].calls.size();
      refs.reserve(total);
    }
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < sums[i].calls.size() && !duplicate[i]; ++j)
        refs.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j)});
    std::sort(refs.begin(), refs.end(), [&](const Ref& a, const Ref& b) {
      CallKey ka = ref_key(a), kb = ref_key(b);
      if (ka.group != kb.group) return ka.group < kb.group;
      if (ka.seq != kb.seq) return ka.seq < kb.seq;
      int64_t sa = start_of(a), sb = start_of(b);
      return sa != sb ? sa < sb : a.row < b.row;
    });
    for (size_t i = 0; i < refs.size(); ++i)
      if (i == 0 || !(ref_key(refs[i]) == ref_key(refs[i - 1]))) run.push_back(i);
    run.push_back(refs.size());
  }
  const CollectiveCall& call(const Ref& x) const { return in.sums[x.row].calls[x.call]; }
  int64_t start(const Ref& x) const { return call(x).start_ns + offset[x.row]; }
  int64_t end(const Ref& x) const { return call(x).end_ns + offset[x.row]; }
  CallKey key(const Ref& x) const { return in.key_of(x.row, call(x)); }
  size_t keys() const { return run.size() - 1; }
  std::span<const Ref> operator()(size_t k) const {
    return std::span<const Ref>(refs.data() + run[k], run[k + 1] - run[k]);
  }
};

}  // namespace

std::vector<std::vector<int64_t>> match_collectives(const RankInputs& in,
                                                    const std::vector<int64_t>& offset,
                                                    const RanksOptions& o, RanksResult& r) {
  const std::vector<RankSummary>& sums = in.sums;
  const std::vector<std::string>& group_text = in.group_text;
  const Arrivals arrivals(in, offset);
  auto call_of = [&](const Ref& x) -> const CollectiveCall& { return arrivals.call(x); };
  auto start_of = [&](const Ref& x) { return arrivals.start(x); };
  auto end_of = [&](const Ref& x) { return arrivals.end(x); };
  auto ref_key = [&](const Ref& x) { return arrivals.key(x); };
  const size_t keys = arrivals.keys();
  std::vector<std::vector<int64_t>> late_by(in.size());
  struct Late {
    int64_t late_by;
    size_t key;
  };
  auto later = [](const Late& a, const Late& b) {  // min-heap on lateness, then key order
    return a.late_by != b.late_by ? a.late_by > b.late_by : a.key < b.key;
  };
  std::priority_queue<Late, std::vector<Late>, decltype(later)> worst(later);
  struct BucketKey {
    std::string name;
    int64_t min_bytes;
    bool operator<(const BucketKey& o) const {
      return name != o.name ? name < o.name : min_bytes < o.min_bytes;
    }
  };
  std::map<BucketKey, SizeBucket> buckets;
  for (size_t k = 0; k < keys; ++k) {
    std::span<const Ref> a = arrivals(k);
    // Bandwidth: the shortest kernel of the call moves the data without waiting.
    int64_t transfer = INT64_MAX, bytes = 0;
    int32_t group_size = 0;
    for (const Ref& x : a) {
      transfer = std::min(transfer, end_of(x) - start_of(x));
      bytes = std::max(bytes, call_of(x).bytes);
      group_size = std::max(group_size, call_of(x).group_size);
    }
    if (bytes > 0 && transfer > 0) {
      int64_t lo = 1;
      while (lo <= bytes / 2) lo *= 2;
      const std::string& name = sums[a.front().row].names[call_of(a.front()).name];
      SizeBucket& b = buckets[{name, lo}];
      b.name = name;
      b.min_bytes = lo;
      ++b.calls;
      b.bytes += bytes;
      b.time_ns += transfer;
      b.group_size = std::max<int64_t>(b.group_size, group_size);
    }
    if (a.size() < 2) continue;
    ++r.matched_calls;
    for (const Ref& x : a) ++r.ranks[x.row].collective_calls;
    const Ref& last = a.back();
    int64_t late = start_of(last) - start_of(a[a.size() - 2]);
    // The last two arrived together (identical ranks, or a tie to the ns): nobody was last.
    if (late <= 0) continue;
    RankStats& lr = r.ranks[last.row];
    ++lr.last_count;
    lr.late_total_ns += late;
    late_by[last.row].push_back(late);
    if (o.top_calls > 0) {
      worst.push({late, k});
      if (worst.size() > o.top_calls) worst.pop();
    }
  }
  while (!worst.empty()) {
    const Late& w = worst.top();
    std::span<const Ref> a = arrivals(w.key);
    const Ref& last = a.back();
    LateCall c;
    CallKey key = ref_key(last);
    c.group = group_text[key.group];
    c.seq = key.seq;
    c.name = sums[last.row].names[call_of(last).name];
    for (const Ref& x : a) c.bytes = std::max(c.bytes, call_of(x).bytes);
    c.ranks = static_cast<uint32_t>(a.size());
    c.last_rank = r.ranks[last.row].rank;
    c.late_by_ns = w.late_by;
    c.spread_ns = start_of(last) - start_of(a.front());
    c.aligned_start_ns = start_of(last);
    r.late_calls.push_back(std::move(c));
    worst.pop();
  }
  std::reverse(r.late_calls.begin(), r.late_calls.end());
  for (auto& [key, b] : buckets) {
    b.algbw_gbps = static_cast<double>(b.bytes) / static_cast<double>(b.time_ns);
    b.busbw_gbps = b.algbw_gbps * bus_factor(b.name, b.group_size);
    r.size_buckets.push_back(b);
  }
  return late_by;
}

void total_collectives(const RankInputs& in, RanksResult& r) {
  const std::vector<RankSummary>& sums = in.sums;
  const std::vector<bool>& duplicate = in.duplicate;
  const size_t n = in.size();
  std::map<std::string, CollectiveStats> coll;
  for (size_t i = 0; i < n; ++i) {
    if (duplicate[i]) continue;
    const RankSummary& s = sums[i];
    for (const CollectiveCall& c : s.calls) {
      const std::string& name = s.names[c.name];
      CollectiveStats& cs = coll[name];
      cs.name = name;
      ++cs.count;
      cs.time_ns += c.end_ns - c.start_ns;
      cs.bytes += c.bytes;
      if (cs.dtype.empty()) cs.dtype = s.names[c.dtype];
      if (c.group_size > 0) cs.group_size = c.group_size;
    }
  }
  for (auto& [name, c] : coll) {
    if (c.time_ns > 0 && c.bytes > 0) {
      c.algbw_gbps = static_cast<double>(c.bytes) / static_cast<double>(c.time_ns);
      c.busbw_gbps = c.algbw_gbps * bus_factor(name, c.group_size);
    }
    r.collectives.push_back(c);
  }
  std::stable_sort(
      r.collectives.begin(), r.collectives.end(),
      [](const CollectiveStats& a, const CollectiveStats& b) { return a.time_ns > b.time_ns; });
}

}  // namespace mlprof::rank_phases
