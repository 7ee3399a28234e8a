#include "mlprof/analyze/op_stats.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <unordered_map>

#include "analyze/op_rows.h"
#include "analyze/trace_memo.h"
#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/graphs.h"
#include "mlprof/analyze/stats.h"

namespace mlprof {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

// Graph replays as if run eagerly: each matched replayed kernel's GPU time moves from the graph
// launch's op to the captured op's row (the row of that name and category, else a row of its own
// with no calls: the capture pass may be another trace; an Inductor op is named like its kernel,
// whose GPU row it must not join).
void charge_replays(const Trace& t, const OpStatsOptions& o, const GraphsResult& g,
                    const std::vector<uint32_t>& first_row, const std::vector<uint32_t>& next_row,
                    const std::vector<uint32_t>& row_of_slice, OpRows& r) {
  const SliceTable& s = t.slices;
  r.device_replayed_ns.assign(r.size(), 0);
  r.first_foreign = r.size();
  auto add_row = [&](const std::string& name, const std::string& cat) {
    r.name.push_back(StringPool::kNotFound);
    r.category.push_back(StringPool::kNotFound);
    r.foreign_name.push_back(name);
    r.foreign_category.push_back(cat);
    r.count.push_back(0);
    r.self_ns.push_back(0);
    r.cpu_calls.push_back(0);
    r.cpu_ns.push_back(0);
    r.cpu_wall_ns.push_back(0);
    r.device_self_ns.push_back(0);
    r.device_total_ns.push_back(0);
    r.device_replayed_ns.push_back(0);
    return static_cast<uint32_t>(r.name.size() - 1);
  };
  // Keyed by (op, category) name indexes: a foreign row per pair.
  std::unordered_map<uint64_t, uint32_t> row_of;
  for (const ReplayedKernel& k : g.replayed) {
    const std::string& name = g.names[k.op];
    const std::string& cat = g.names[k.op_category];
    if (!o.category.empty() && cat != o.category) continue;
    uint64_t key = (static_cast<uint64_t>(k.op) << 32) | k.op_category;
    auto [it, added] = row_of.emplace(key, kNone);
    if (added) {
      StringId n = t.strings.find(name), c = t.strings.find(cat);
      uint32_t row = n == StringPool::kNotFound ? kNone : first_row[n];
      while (row != kNone && r.category[row] != c) row = next_row[row];
      it->second = row != kNone ? row : add_row(name, cat);
    }
    int64_t ns = s.dur[k.slice];
    uint32_t to = it->second;
    r.device_self_ns[to] += ns;
    r.device_total_ns[to] += ns;
    r.device_replayed_ns[to] += ns;
    if (k.launch_op >= 0) {
      uint32_t from = row_of_slice[static_cast<size_t>(k.launch_op)];
      if (from != kNone) {
        r.device_self_ns[from] -= ns;
        r.device_total_ns[from] -= ns;
      }
    }
  }
}

}  // namespace

OpRows op_rows(const Trace& t, const OpStatsOptions& o) {
  OpRows r;
  r.span_ns = t.span_ns();
  r.offset.push_back(0);
  const SliceTable& s = t.slices;
  StringId only_cat = StringPool::kNotFound;
  if (!o.category.empty()) {
    only_cat = t.strings.find(o.category);
    if (only_cat == StringPool::kNotFound) return r;
  }
  DeviceTime own;
  r.device = o.device_time && has_gpu(t);
  if (r.device && !o.device_times) own = device_time_by_slice(t);
  const DeviceTime& dt = o.device_times ? *o.device_times : own;
  int64_t cpu_end = INT64_MAX;
  std::vector<uint8_t> hta_gpu_kept;
  if (o.hta_compatible) {
    GpuEventsOptions eo;
    eo.hta_compatible = true;
    std::shared_ptr<const GpuEvents> ev_shared = shared_gpu_events(t, eo);
    const GpuEvents& ev = *ev_shared;
    cpu_end = ev.cpu_window_end;
    hta_gpu_kept.assign(s.size(), 0);
    for (const GpuEvent& e : ev.events) hta_gpu_kept[e.slice] = 1;
  }
  // Row of (name, category): the first row of each name, then a chain through the rows of the
  // same name in other categories (few), instead of a hash node per row.
  std::vector<uint32_t> first_row(t.strings.size(), kNone), next_row;
  std::vector<uint32_t> row_of_slice(s.size(), kNone);
  // Kineto's own "PyTorch Profiler (0)" span (category Trace) wraps the whole recording: not an
  // op (it read 273.7% of the span, which leaves it out), as in the flame graph and the timeline.
  const StringId cat_trace = t.strings.find(kProfilerSpanCategory);
  const StringId cat_gpu_annotation = t.strings.find("gpu_user_annotation");
  for (size_t i = 0; i < s.size(); ++i) {
    if (only_cat != StringPool::kNotFound && s.cat[i] != only_cat) continue;
    if (s.cat[i] == cat_trace && s.depth[i] == 0 && only_cat != cat_trace) continue;
    if (!o.include_gpu && t.is_gpu_track(s.track[i])) continue;
    // HTA's GPU rows are those with args.stream; gpu_user_annotation ranges carry none, so to
    // HTA they are rows like the CPU ones (kept before the last step), found by category.
    if (o.hta_compatible &&
        (t.is_gpu_track(s.track[i]) && s.cat[i] != cat_gpu_annotation ? !hta_gpu_kept[i]
                                                                      : s.ts[i] >= cpu_end))
      continue;
    uint32_t* link = &first_row[s.name[i]];
    while (*link != kNone && r.category[*link] != s.cat[i]) link = &next_row[*link];
    uint32_t row = *link;
    if (row == kNone) {
      row = *link = static_cast<uint32_t>(r.name.size());
      r.name.push_back(s.name[i]);
      r.category.push_back(s.cat[i]);
      next_row.push_back(kNone);
      r.count.push_back(0);
      r.self_ns.push_back(0);
      r.cpu_calls.push_back(0);
      r.cpu_ns.push_back(0);
      r.cpu_wall_ns.push_back(0);
      if (r.device) {
        r.device_self_ns.push_back(0);
        r.device_total_ns.push_back(0);
      }
    }
    row_of_slice[i] = row;
    ++r.count[row];
    r.self_ns[row] += s.self[i];
    if (r.device) {
      r.device_self_ns[row] += dt.self_ns[i];
      r.device_total_ns[row] += dt.total_ns[i];
    }
    if (s.thread_dur[i] >= 0) {
      ++r.cpu_calls[row];
      r.cpu_ns[row] += s.thread_dur[i];
      r.cpu_wall_ns[row] += s.dur[i];
    }
  }
  if (r.device && o.replays && !o.replays->replayed.empty() && !o.hta_compatible)
    charge_replays(t, o, *o.replays, first_row, next_row, row_of_slice, r);
  first_row = {};
  next_row = {};
  // Durations grouped by row, each row's in trace order (a stable counting sort).
  size_t rows = r.name.size();
  r.offset.resize(rows + 1);
  for (size_t k = 0; k < rows; ++k) r.offset[k + 1] = r.offset[k] + r.count[k];
  r.durations.resize(r.offset[rows]);
  {
    std::vector<size_t> at(r.offset.begin(), r.offset.end() - 1);
    for (size_t i = 0; i < s.size(); ++i)
      if (row_of_slice[i] != kNone) r.durations[at[row_of_slice[i]]++] = s.dur[i];
  }
  row_of_slice = {};
  // Totals as fill_duration_stats computes them (a long double sum), so sorting and the row
  // agree.
  r.total_ns.resize(rows);
  for (size_t k = 0; k < rows; ++k) {
    long double sum = 0;
    for (size_t j = r.offset[k]; j < r.offset[k + 1]; ++j) sum += r.durations[j];
    r.total_ns[k] = static_cast<int64_t>(sum);
  }
  return r;
}

std::vector<uint32_t> OpRows::by_total(const Trace& t) const {
  std::vector<uint32_t> idx(size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<uint32_t>(i);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    if (total_ns[a] != total_ns[b]) return total_ns[a] > total_ns[b];
    return name_of(t, a) < name_of(t, b);
  });
  return idx;
}

OpStats OpRows::stats(const Trace& t, size_t r) {
  OpStats op;
  op.name = std::string(name_of(t, r));
  op.category = std::string(category_of(t, r));
  fill_duration_stats(op, calls(r), span_ns);
  op.self_ns = self_ns[r];
  op.cpu_calls = cpu_calls[r];
  op.cpu_ns = cpu_ns[r];
  op.cpu_wall_ns = cpu_wall_ns[r];
  if (device) {
    op.device_self_ns = device_self_ns[r];
    op.device_total_ns = device_total_ns[r];
    if (!device_replayed_ns.empty()) op.device_replayed_ns = device_replayed_ns[r];
  }
  return op;
}

namespace {
// Percentiles by selection, not a full sort (the summary of a 1M-slice trace spent more time
// sorting durations than computing anything else). `from`: v[from..] holds every rank >= the
// previous call's, so increasing q narrow the range each time.
double percentile_select(std::span<int64_t> v, double q, size_t& from) {
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

void fill_duration_stats(OpStats& op, std::span<int64_t> d, int64_t span_ns) {
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

void fill_duration_stats(OpStats& op, std::vector<int64_t>& d, int64_t span_ns) {
  fill_duration_stats(op, std::span<int64_t>(d), span_ns);
}

std::vector<OpStats> op_stats_with_durations(const Trace& t, const OpStatsOptions& o,
                                             std::vector<std::vector<int64_t>>& durations) {
  OpRows rows = op_rows(t, o);
  std::vector<OpStats> out;
  durations.clear();
  for (uint32_t r : rows.by_total(t)) {
    durations.emplace_back(rows.calls(r).begin(), rows.calls(r).end());
    out.push_back(rows.stats(t, r));
  }
  return out;
}

std::vector<OpStats> op_stats(const Trace& t, const OpStatsOptions& o) {
  OpRows rows = op_rows(t, o);
  std::vector<OpStats> out;
  out.reserve(rows.size());
  for (uint32_t r : rows.by_total(t)) out.push_back(rows.stats(t, r));
  return out;
}

double OpRows::sort_key(size_t r, OpSort by) const {
  switch (by) {
    case OpSort::kTotal:
      return static_cast<double>(total_ns[r]);
    case OpSort::kSelf:
      return static_cast<double>(self_ns[r]);
    case OpSort::kMean:  // as fill_duration_stats: the long double sum over the count
      return static_cast<double>(static_cast<long double>(total_ns[r]) / count[r]);
    case OpSort::kCount:
      return static_cast<double>(count[r]);
    case OpSort::kDeviceSelf:
      return device ? static_cast<double>(device_self_ns[r]) : -1.0;
    case OpSort::kDeviceTotal:
      return device ? static_cast<double>(device_total_ns[r]) : -1.0;
  }
  return 0;
}

std::vector<OpStats> op_stats_top(const Trace& t, const OpStatsOptions& o, OpSort by, size_t top,
                                  uint64_t* n_rows) {
  OpRows rows = op_rows(t, o);
  std::vector<uint32_t> order = rows.by_total(t);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    double ka = rows.sort_key(a, by), kb = rows.sort_key(b, by);
    if (ka != kb) return ka > kb;
    return rows.name_of(t, a) < rows.name_of(t, b);
  });
  if (n_rows) *n_rows = order.size();
  if (top > 0 && order.size() > top) order.resize(top);
  std::vector<OpStats> out;
  out.reserve(order.size());
  for (uint32_t r : order) out.push_back(rows.stats(t, r));
  return out;
}

namespace {
double op_sort_key(const OpStats& o, OpSort by) {
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
}

}  // namespace

void sort_op_stats(std::vector<OpStats>& ops, OpSort by) {
  auto key = [by](const OpStats& o) { return op_sort_key(o, by); };
  std::stable_sort(ops.begin(), ops.end(), [&](const OpStats& a, const OpStats& b) {
    double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return a.name < b.name;
  });
}

}  // namespace mlprof
