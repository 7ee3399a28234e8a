#include "mlprof/analyze/timeline.h"

#include <algorithm>
#include <map>

#include "mlprof/analyze/kernel_class.h"

namespace mlprof {
namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Sorted, merged copy of the intervals.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

int64_t length(const Intervals& merged_intervals) {
  int64_t sum = 0;
  for (const auto& iv : merged_intervals) sum += iv.second - iv.first;
  return sum;
}

int64_t intersection_ns(const Intervals& a, const Intervals& b) {
  int64_t sum = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum += hi - lo;
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return sum;
}

// Per series: statistics over every sample, and for drawing at most max_counter_points points
// (the min and max of each time bucket, so spikes survive thinning).
void add_counters(const Trace& trace, const TimelineOptions& options, TimelineResult& r) {
  const CounterTable& c = trace.counters;
  std::vector<std::vector<uint32_t>> by_series(trace.counter_series.size());
  for (uint32_t i = 0; i < c.size(); ++i) by_series[c.series[i]].push_back(i);
  for (size_t sid = 0; sid < by_series.size(); ++sid) {
    auto& idx = by_series[sid];
    if (idx.empty()) continue;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](uint32_t a, uint32_t b) { return c.ts[a] < c.ts[b]; });
    TimelineCounter tc;
    const CounterSeries& cs = trace.counter_series[sid];
    const Process& p = trace.processes[cs.process];
    std::string proc = p.name    ? std::string(trace.str(p.name))
                       : p.label ? std::string(trace.str(p.label))
                                 : "pid " + std::to_string(p.pid);
    tc.name = proc + ": " + std::string(trace.str(cs.name));
    tc.samples = idx.size();
    tc.min = tc.max = c.value[idx[0]];
    double sum = 0;
    for (uint32_t i : idx) {
      tc.min = std::min(tc.min, c.value[i]);
      tc.max = std::max(tc.max, c.value[i]);
      sum += c.value[i];
    }
    tc.mean = sum / static_cast<double>(idx.size());
    size_t limit = std::max<size_t>(2, options.max_counter_points);
    size_t buckets = idx.size() <= limit ? idx.size() : limit / 2;
    size_t per = (idx.size() + buckets - 1) / buckets;
    for (size_t b = 0; b < idx.size(); b += per) {
      size_t e = std::min(idx.size(), b + per);
      size_t lo = b, hi = b;
      for (size_t k = b; k < e; ++k) {
        if (c.value[idx[k]] < c.value[idx[lo]]) lo = k;
        if (c.value[idx[k]] > c.value[idx[hi]]) hi = k;
      }
      size_t first = std::min(lo, hi), second = std::max(lo, hi);
      tc.ts_ns.push_back(c.ts[idx[first]] - r.begin_ns);
      tc.values.push_back(c.value[idx[first]]);
      if (second != first) {
        tc.ts_ns.push_back(c.ts[idx[second]] - r.begin_ns);
        tc.values.push_back(c.value[idx[second]]);
      }
    }
    r.counters.push_back(std::move(tc));
  }
}

}  // namespace

int64_t interval_union_ns(Intervals& intervals) { return length(merged(intervals)); }

bool is_gpu_work_slice(const Trace& trace, size_t slice) {
  std::string_view cat = trace.str(trace.slices.cat[slice]);
  if (cat == "cuda_sync" || cat == "Sync") return false;
  GpuWorkKind kind = gpu_work_kind(cat, trace.str(trace.slices.name[slice]));
  return kind != GpuWorkKind::kAnnotation && kind != GpuWorkKind::kSync;
}

namespace {

// Busy share of each bucket of [begin, end) for merged (sorted, disjoint) intervals.
TimelineGpuUtilization bucket_busy(int32_t device, const Intervals& m, int64_t begin, int64_t end,
                                   size_t buckets) {
  TimelineGpuUtilization u;
  u.device = device;
  int64_t span = std::max<int64_t>(1, end - begin);
  int64_t n = static_cast<int64_t>(std::max<size_t>(1, buckets));
  u.bucket_ns = std::max<int64_t>(1, (span + n - 1) / n);
  size_t count = static_cast<size_t>((span + u.bucket_ns - 1) / u.bucket_ns);
  std::vector<int64_t> busy(count, 0);
  for (auto [a, b] : m) {
    a = std::max(a, begin);
    b = std::min(b, begin + span);
    for (int64_t k = (a - begin) / u.bucket_ns; a < b; ++k) {
      int64_t edge = begin + (k + 1) * u.bucket_ns;
      int64_t to = std::min(b, edge);
      busy[static_cast<size_t>(k)] += to - a;
      a = to;
    }
  }
  u.values.resize(count);
  for (size_t k = 0; k < count; ++k) {
    int64_t width = std::min<int64_t>(
        u.bucket_ns, begin + span - (begin + static_cast<int64_t>(k) * u.bucket_ns));
    u.values[k] = width > 0 ? static_cast<double>(busy[k]) / static_cast<double>(width) : 0.0;
  }
  return u;
}

}  // namespace

TimelineResult analyze_timeline(const Trace& trace, const TimelineOptions& options) {
  TimelineResult r;
  r.begin_ns = trace.begin_ns();
  r.end_ns = trace.end_ns();
  const SliceTable& s = trace.slices;
  const StringId cat_trace = trace.strings.find(kProfilerSpanCategory);
  Intervals cpu, gpu, lane;
  std::map<int32_t, Intervals> gpu_by_device;
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    const Track& tr = trace.tracks[t];
    if (tr.kind == TrackKind::kAsync) continue;  // async ranges overlap freely: not a lane
    uint32_t begin = trace.track_slice_begin[t], end = trace.track_slice_begin[t + 1];
    if (begin == end) continue;
    TimelineLane l;
    l.track = t;
    l.name = trace.track_label(t);
    l.gpu = trace.is_gpu_track(t);
    l.pid = tr.pid;
    l.tid = tr.tid;
    l.slices = end - begin;
    lane.clear();
    for (uint32_t i = begin; i < end; ++i) {
      l.max_depth = std::max<uint32_t>(l.max_depth, s.depth[i] + 1u);
      if (!l.gpu) {
        // The profiler's own "PyTorch Profiler (0)" span (category Trace) covers the whole
        // recording: not CPU work (HTA leaves it out of the trace's begin too).
        if (s.depth[i] == 0 && s.cat[i] != cat_trace) lane.emplace_back(s.ts[i], s.end(i));
        continue;
      }
      // GPU busy = kernels, copies, sets (at any depth): not annotations or sync waits, the
      // definition the GPU analyses use.
      if (is_gpu_work_slice(trace, i)) lane.emplace_back(s.ts[i], s.end(i));
    }
    l.busy_ns = length(merged(lane));
    if (l.gpu) {
      Intervals& d = gpu_by_device[tr.device];
      d.insert(d.end(), lane.begin(), lane.end());
    }
    (l.gpu ? gpu : cpu).insert((l.gpu ? gpu : cpu).end(), lane.begin(), lane.end());
    r.slices += l.slices;
    r.lanes.push_back(std::move(l));
  }
  std::stable_sort(r.lanes.begin(), r.lanes.end(),
                   [](const TimelineLane& a, const TimelineLane& b) {
                     if (a.gpu != b.gpu) return !a.gpu;
                     if (a.pid != b.pid) return a.pid < b.pid;
                     return a.tid < b.tid;
                   });
  Intervals cpu_m = merged(std::move(cpu)), gpu_m = merged(std::move(gpu));
  r.cpu_busy_ns = length(cpu_m);
  r.gpu_busy_ns = length(gpu_m);
  r.overlap_ns = intersection_ns(cpu_m, gpu_m);
  if (!gpu_m.empty()) {
    r.gpu_span_ns = gpu_m.back().second - gpu_m.front().first;
    r.gpu_idle_ns = r.gpu_span_ns - r.gpu_busy_ns;
    r.gpu_busy_overlapped_pct =
        r.gpu_busy_ns > 0 ? 100.0 * static_cast<double>(r.overlap_ns) / r.gpu_busy_ns : 0.0;
  }
  for (size_t k = 0; k < trace.flows.size(); ++k)
    if (trace.flows.src_slice[k] >= 0 && trace.flows.dst_slice[k] >= 0) ++r.flows;
  add_counters(trace, options, r);
  for (auto& [device, iv] : gpu_by_device) {
    if (iv.empty()) continue;
    r.gpu_utilization.push_back(bucket_busy(device, merged(std::move(iv)), r.begin_ns, r.end_ns,
                                            options.gpu_utilization_buckets));
  }
  return r;
}

}  // namespace mlprof
