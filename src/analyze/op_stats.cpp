#include "mlprof/analyze/op_stats.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <unordered_map>

#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/stats.h"

namespace mlprof {

std::vector<OpStats> op_stats_with_durations(const Trace& t, const OpStatsOptions& o,
                                             std::vector<std::vector<int64_t>>& durations) {
  const SliceTable& s = t.slices;
  StringId only_cat = StringPool::kNotFound;
  if (!o.category.empty()) {
    only_cat = t.strings.find(o.category);
    if (only_cat == StringPool::kNotFound) return {};
  }
  // Group by (name, category) with a flat map from the packed pair to a row.
  std::unordered_map<uint64_t, uint32_t> row_of;
  std::vector<std::pair<StringId, StringId>> keys;
  durations.clear();
  std::vector<int64_t> self_sum, dev_self, dev_total;
  struct Cpu {
    uint64_t calls = 0;
    int64_t ns = 0, wall_ns = 0;
  };
  std::vector<Cpu> cpu;
  DeviceTime dt;
  bool device = o.device_time && has_gpu(t);
  if (device) dt = device_time_by_slice(t);
  int64_t cpu_end = INT64_MAX;
  std::vector<uint8_t> hta_gpu_kept;
  if (o.hta_compatible) {
    GpuEventsOptions eo;
    eo.hta_compatible = true;
    GpuEvents ev = collect_gpu_events(t, eo);
    cpu_end = ev.cpu_window_end;
    hta_gpu_kept.assign(s.size(), 0);
    for (const GpuEvent& e : ev.events) hta_gpu_kept[e.slice] = 1;
  }
  // Kineto's own "PyTorch Profiler (0)" span (category Trace) wraps the whole recording: not an
  // op (it read 273.7% of the span, which leaves it out), as in the flame graph and the timeline.
  const StringId cat_trace = t.strings.find(kProfilerSpanCategory);
  for (size_t i = 0; i < s.size(); ++i) {
    if (only_cat != StringPool::kNotFound && s.cat[i] != only_cat) continue;
    if (s.cat[i] == cat_trace && s.depth[i] == 0 && only_cat != cat_trace) continue;
    if (!o.include_gpu && t.is_gpu_track(s.track[i])) continue;
    if (o.hta_compatible && (t.is_gpu_track(s.track[i]) ? !hta_gpu_kept[i] : s.ts[i] >= cpu_end))
      continue;
    uint64_t key = (static_cast<uint64_t>(s.name[i]) << 32) | s.cat[i];
    auto [it, inserted] = row_of.try_emplace(key, static_cast<uint32_t>(keys.size()));
    if (inserted) {
      keys.emplace_back(s.name[i], s.cat[i]);
      durations.emplace_back();
      self_sum.push_back(0);
      cpu.emplace_back();
      dev_self.push_back(0);
      dev_total.push_back(0);
    }
    durations[it->second].push_back(s.dur[i]);
    self_sum[it->second] += s.self[i];
    if (device) {
      dev_self[it->second] += dt.self_ns[i];
      dev_total[it->second] += dt.total_ns[i];
    }
    if (s.thread_dur[i] >= 0) {
      Cpu& c = cpu[it->second];
      ++c.calls;
      c.ns += s.thread_dur[i];
      c.wall_ns += s.dur[i];
    }
  }
  std::vector<OpStats> out(keys.size());
  for (size_t r = 0; r < keys.size(); ++r) {
    OpStats& op = out[r];
    op.name = std::string(t.str(keys[r].first));
    op.category = std::string(t.str(keys[r].second));
    fill_duration_stats(op, durations[r], t.span_ns());
    op.self_ns = self_sum[r];
    op.cpu_calls = cpu[r].calls;
    op.cpu_ns = cpu[r].ns;
    op.cpu_wall_ns = cpu[r].wall_ns;
    if (device) {
      op.device_self_ns = dev_self[r];
      op.device_total_ns = dev_total[r];
    }
  }
  // Sort rows (and their durations) by total time.
  std::vector<size_t> idx(out.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (out[a].total_ns != out[b].total_ns) return out[a].total_ns > out[b].total_ns;
    return out[a].name < out[b].name;
  });
  std::vector<OpStats> sorted;
  std::vector<std::vector<int64_t>> sorted_d;
  sorted.reserve(out.size());
  for (size_t i : idx) {
    sorted.push_back(std::move(out[i]));
    sorted_d.push_back(std::move(durations[i]));
  }
  durations.swap(sorted_d);
  return sorted;
}

namespace {
// Percentiles by selection, not a full sort (the summary of a 1M-slice trace spent more time
// sorting durations than computing anything else). `from`: v[from..] holds every rank >= the
// previous call's, so increasing q narrow the range each time.
double percentile_select(std::vector<int64_t>& v, double q, size_t& from) {
  auto [lo, hi, frac] = stats::quantile_position(v.size(), q / 100.0);
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from),
                   v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  int64_t a = v[lo];
  int64_t b =
      hi == lo ? a : *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  from = lo;
  return stats::interpolate(static_cast<double>(a), static_cast<double>(b), frac);
}
}  // namespace

void fill_duration_stats(OpStats& op, std::vector<int64_t>& d, int64_t span_ns) {
  if (d.empty()) return;
  op.count = d.size();
  long double sum = 0, sq = 0;
  int64_t lo = d.front(), hi = d.front();
  for (int64_t x : d) {
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  op.total_ns = static_cast<int64_t>(sum);
  op.mean_ns = static_cast<double>(sum / d.size());
  for (int64_t x : d) {
    long double dev = x - static_cast<long double>(op.mean_ns);
    sq += dev * dev;
  }
  op.std_ns = std::sqrt(static_cast<double>(sq / d.size()));
  op.min_ns = lo;
  op.max_ns = hi;
  size_t from = 0;
  op.p50_ns = percentile_select(d, 50, from);
  op.p90_ns = percentile_select(d, 90, from);
  op.p99_ns = percentile_select(d, 99, from);
  op.percent_of_span =
      span_ns > 0 ? static_cast<double>(op.total_ns) / static_cast<double>(span_ns) * 100.0 : 0;
}

std::vector<OpStats> op_stats(const Trace& t, const OpStatsOptions& o) {
  std::vector<std::vector<int64_t>> d;
  return op_stats_with_durations(t, o, d);
}

void sort_op_stats(std::vector<OpStats>& ops, OpSort by) {
  auto key = [by](const OpStats& o) -> double {
    switch (by) {
      case OpSort::kTotal:
        return static_cast<double>(o.total_ns);
      case OpSort::kSelf:
        return static_cast<double>(o.self_ns);
      case OpSort::kMean:
        return o.mean_ns;
      case OpSort::kCount:
        return static_cast<double>(o.count);
      case OpSort::kDeviceSelf:
        return static_cast<double>(o.device_self_ns);
      case OpSort::kDeviceTotal:
        return static_cast<double>(o.device_total_ns);
    }
    return 0;
  };
  std::stable_sort(ops.begin(), ops.end(), [&](const OpStats& a, const OpStats& b) {
    double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return a.name < b.name;
  });
}

}  // namespace mlprof
