// Imbalance over the ranks (max over mean of the step time and the compute time), the stragglers
// (last to arrive at most collectives, by a margin; or a step time well above the median) with
// their evidence and the time they cost, and each metric's distribution over the ranks.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analyze/rank_phases.h"
#include "mlprof/analyze/stats.h"

namespace mlprof::rank_phases {

void find_stragglers(const std::vector<std::vector<int64_t>>& late_by, const RanksOptions& o,
                     RanksResult& r) {
  const size_t n = r.ranks.size();
  std::vector<double> wall, compute;
  double step_sum = 0;
  for (const RankStats& rs : r.ranks) {
    wall.push_back(rs.steps > 0 ? rs.step_mean_ns : static_cast<double>(rs.wall_ns));
    compute.push_back(static_cast<double>(rs.temporal.compute_ns));
    step_sum += rs.step_mean_ns;
  }
  r.step_mean_ns = step_sum / static_cast<double>(n);
  auto max_over_mean = [](const std::vector<double>& v) {
    double sum = 0, mx = 0;
    for (double x : v) {
      sum += x;
      mx = std::max(mx, x);
    }
    return sum > 0 ? mx / (sum / static_cast<double>(v.size())) : 0.0;
  };
  r.load_imbalance = max_over_mean(wall);
  r.compute_imbalance = max_over_mean(compute);
  double med = stats::median(wall);
  std::vector<double> wall_total;
  for (const RankStats& rs : r.ranks) wall_total.push_back(static_cast<double>(rs.wall_ns));
  const double med_total = stats::median(wall_total);
  double share_needed =
      std::max(o.straggler_last_share, std::min(0.9, 1.5 / static_cast<double>(n)));
  for (size_t i = 0; i < n && n > 1; ++i) {
    RankStats& rs = r.ranks[i];
    StragglerEvidence e;
    e.rank = rs.rank;
    e.last_count = rs.last_count;
    e.calls = rs.collective_calls;
    e.last_share = e.calls > 0 ? static_cast<double>(e.last_count) / e.calls : 0;
    e.late_total_ns = rs.late_total_ns;
    e.late_median_ns = std::llround(median_of(late_by[i]));
    e.step_excess_pct = med > 0 ? 100.0 * (wall[i] - med) / med : 0;
    bool by_calls = e.last_count >= o.straggler_min_calls && e.last_share >= share_needed &&
                    e.late_median_ns >= o.straggler_min_late_ns;
    bool by_steps = wall[i] > med * (1.0 + o.straggler_threshold);
    if (!by_calls && !by_steps) continue;
    char buf[256];
    if (by_calls) {
      std::snprintf(buf, sizeof buf,
                    "last to arrive at %llu of %llu collectives (%.0f%%), a median %.3f ms after "
                    "the previous rank",
                    static_cast<unsigned long long>(e.last_count),
                    static_cast<unsigned long long>(e.calls), 100.0 * e.last_share,
                    static_cast<double>(e.late_median_ns) / 1e6);
      e.reason = buf;
    }
    if (by_steps) {
      std::snprintf(buf, sizeof buf, "%s %.1f%% above the median",
                    rs.steps > 0 ? "mean step" : "GPU span", e.step_excess_pct);
      e.reason += (e.reason.empty() ? "" : "; ") + std::string(buf);
    }
    e.time_lost_ns = by_calls ? e.late_total_ns : 0;
    if (by_steps)
      e.time_lost_ns = std::max<int64_t>(
          e.time_lost_ns, std::llround(std::max(0.0, static_cast<double>(rs.wall_ns) - med_total)));
    rs.straggler = true;
    r.stragglers.push_back(rs.rank);
    r.straggler_evidence.push_back(std::move(e));
  }
}

void add_distributions(RanksResult& r) {
  auto distribution = [&](const char* metric, auto&& value, bool only_with_steps = false) {
    std::vector<std::pair<double, int32_t>> v;
    for (const RankStats& rs : r.ranks)
      if (!only_with_steps || rs.steps > 0) v.emplace_back(value(rs), rs.rank);
    if (v.empty()) return;
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> sorted;
    double sum = 0;
    for (const auto& [x, rank] : v) {
      sorted.push_back(x);
      sum += x;
    }
    RankDistribution d;
    d.metric = metric;
    d.min = sorted.front();
    d.max = sorted.back();
    d.p50 = stats::quantile_sorted(sorted, 0.5);
    d.p90 = stats::quantile_sorted(sorted, 0.9);
    d.p99 = stats::quantile_sorted(sorted, 0.99);
    d.mean = sum / static_cast<double>(sorted.size());
    d.max_over_mean = d.mean > 0 ? d.max / d.mean : 0;
    d.min_rank = v.front().second;
    d.max_rank = v.back().second;
    r.distributions.push_back(d);
  };
  distribution(
      "step_mean_ns", [](const RankStats& s) { return s.step_mean_ns; }, true);
  distribution("wall_ns", [](const RankStats& s) { return static_cast<double>(s.wall_ns); });
  distribution("span_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.span_ns); });
  distribution("compute_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.compute_ns); });
  distribution("communication_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.communication_ns); });
  distribution("exposed_comm_ns",
               [](const RankStats& s) { return static_cast<double>(s.exposed_comm_ns); });
  distribution("idle_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.idle_ns); });
  distribution("memory_peak_bytes",
               [](const RankStats& s) { return static_cast<double>(s.memory_peak_bytes); });
  if (r.matched_calls > 0)
    distribution("late_total_ns",
                 [](const RankStats& s) { return static_cast<double>(s.late_total_ns); });
}

}  // namespace mlprof::rank_phases
