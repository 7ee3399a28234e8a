#include "mlprof/analyze/gpu.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/stats.h"

namespace mlprof {

namespace {

// HTA's blocked_on_full_queue threshold: CUDA's default launch queue depth is 1024 entries.
constexpr int64_t kMaxQueueLength = 1024;

double pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

bool on_device(const GpuEvent& e, int32_t device) { return device < 0 || e.device == device; }

// Caches a per-StringId boolean computed from the string once.
class NameFlag {
 public:
  NameFlag(const Trace& trace, bool (*pred)(std::string_view))
      : trace_(trace), pred_(pred), cache_(trace.strings.size(), 2) {}
  bool operator()(StringId id) {
    if (id >= cache_.size()) return pred_(trace_.str(id));
    if (cache_[id] == 2) cache_[id] = pred_(trace_.str(id)) ? 1 : 0;
    return cache_[id] == 1;
  }

 private:
  const Trace& trace_;
  bool (*pred_)(std::string_view);
  std::vector<uint8_t> cache_;
};

bool is_work(const GpuEvent& e) { return e.kind != GpuWorkKind::kSync; }

std::vector<StreamIdle> idle_breakdown(const GpuEvents& ev, int64_t delay_ns) {
  // Events per (device, stream) in time order; syncs are waits, not work (HTA too).
  std::vector<uint32_t> order;
  order.reserve(ev.events.size());
  for (uint32_t i = 0; i < ev.events.size(); ++i) {
    if (is_work(ev.events[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const GpuEvent& x = ev.events[a];
    const GpuEvent& y = ev.events[b];
    if (x.device != y.device) return x.device < y.device;
    if (x.stream != y.stream) return x.stream < y.stream;
    return x.ts < y.ts;
  });
  std::vector<StreamIdle> out;
  std::vector<double> gaps[3];
  size_t i = 0;
  while (i < order.size()) {
    const GpuEvent& first = ev.events[order[i]];
    StreamIdle s;
    s.device = first.device;
    s.stream = first.stream;
    for (auto& g : gaps) g.clear();
    int64_t prev_end = first.end;
    size_t j = i + 1;
    for (; j < order.size(); ++j) {
      const GpuEvent& e = ev.events[order[j]];
      if (e.device != s.device || e.stream != s.stream) break;
      int64_t gap = e.ts - prev_end;
      int cat;
      if (e.launch >= 0 && e.launch_ts > prev_end) {
        cat = 0;  // host wait: the CPU had not launched it yet
      } else if (gap < delay_ns) {
        cat = 1;  // kernel wait: back-to-back launch overhead or a dependency
      } else {
        cat = 2;
      }
      gaps[cat].push_back(static_cast<double>(gap) / 1000.0);
      IdleCategory& c = cat == 0 ? s.host_wait : (cat == 1 ? s.kernel_wait : s.other);
      c.time_ns += gap;
      prev_end = e.end;
    }
    int64_t total = s.idle_ns();
    IdleCategory* cats[3] = {&s.host_wait, &s.kernel_wait, &s.other};
    for (int c = 0; c < 3; ++c) {
      cats[c]->ratio = total != 0 ? static_cast<double>(cats[c]->time_ns) / total : 0.0;
      cats[c]->intervals_us = describe(gaps[c]);
    }
    out.push_back(std::move(s));
    i = j;
  }
  return out;
}

std::vector<StreamQueue> queue_lengths(const Trace& trace, const GpuEvents& ev, size_t max_points) {
  NameFlag accepted(trace, ev.hta_compatible ? &is_hta_queue_call_name : &is_launch_call_name);
  struct Point {
    int64_t ts;
    int32_t delta;
  };
  std::map<std::pair<int32_t, int64_t>, std::vector<Point>> per_stream;
  for (const GpuEvent& e : ev.events) {
    if (!is_work(e) || e.launch < 0 || !accepted(trace.slices.name[e.launch])) continue;
    auto& pts = per_stream[{e.device, e.stream}];
    pts.push_back({e.launch_ts, +1});
    pts.push_back({e.ts, -1});
  }
  std::vector<StreamQueue> out;
  std::vector<double> values;
  for (auto& [key, pts] : per_stream) {
    // At equal times the GPU start counts first (closest to HTA's order on its traces).
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.delta < b.delta;
    });
    StreamQueue q;
    q.device = key.first;
    q.stream = key.second;
    values.clear();
    int64_t len = 0;
    double weighted = 0;
    size_t stride = max_points > 0 ? (pts.size() + max_points - 1) / max_points : pts.size();
    if (stride == 0) stride = 1;
    int64_t bucket_max = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      len += pts[i].delta;
      values.push_back(static_cast<double>(len));
      q.max_length = std::max(q.max_length, len);
      if (i + 1 < pts.size()) {
        int64_t dt = pts[i + 1].ts - pts[i].ts;
        weighted += static_cast<double>(len) * static_cast<double>(dt);
        if (len >= kMaxQueueLength) q.time_at_max_queue_ns += dt;
      }
      bucket_max = i % stride == 0 ? len : std::max(bucket_max, len);
      if (i % stride == stride - 1 || i + 1 == pts.size()) {
        q.series.push_back({pts[i - i % stride].ts - trace.begin_ns(), bucket_max});
      }
    }
    int64_t span = pts.back().ts - pts.front().ts;
    q.mean_time_weighted = span > 0 ? weighted / static_cast<double>(span) : 0.0;
    q.hta = describe(values);
    out.push_back(std::move(q));
  }
  return out;
}

std::vector<MemoryBandwidth> memory_bandwidth(const Trace& trace, const GpuEvents& ev,
                                              int32_t device) {
  const StringId key_bytes = trace.strings.find("bytes");
  const StringId key_bw = trace.strings.find("memory bandwidth (GB/s)");
  const SliceTable& s = trace.slices;
  struct Point {
    int64_t ts;
    int32_t end;  // starts before ends at equal times
    double gbps;
  };
  std::map<std::string, std::pair<MemoryBandwidth, std::vector<Point>>> kinds;
  for (const GpuEvent& e : ev.events) {
    if (e.type != KernelType::kMemory || !on_device(e, device)) continue;
    std::string_view name = trace.str(s.name[e.slice]);
    auto& [bw, pts] = kinds[std::string(memory_kernel_kind(name))];
    int64_t bytes = 0;
    if (key_bytes != StringPool::kNotFound) {
      if (const Arg* a = trace.find_arg(s.args_begin[e.slice], s.args_count[e.slice], key_bytes)) {
        bytes = a->as_int().value_or(0);
      }
    }
    double gbps = -1;
    if (key_bw != StringPool::kNotFound) {
      if (const Arg* a = trace.find_arg(s.args_begin[e.slice], s.args_count[e.slice], key_bw)) {
        gbps = a->as_double().value_or(-1);
      }
    }
    int64_t dur = e.dur();
    if (gbps < 0) gbps = dur > 0 ? static_cast<double>(bytes) / static_cast<double>(dur) : 0.0;
    ++bw.count;
    bw.bytes += bytes;
    bw.time_ns += dur;
    if (is_pageable_memcpy(name)) {
      ++bw.pageable_count;
      bw.pageable_bytes += bytes;
      bw.pageable_time_ns += dur;
    }
    // HTA: a zero-length copy lasts one time unit so that its bandwidth shows.
    int64_t unit = ev.hta_compatible ? 1000 : 1;
    pts.push_back({e.ts, 0, gbps});
    pts.push_back({e.ts + std::max(dur, unit), 1, -gbps});
  }
  std::vector<MemoryBandwidth> out;
  std::vector<double> values;
  for (auto& [kind, entry] : kinds) {
    auto& [bw, pts] = entry;
    bw.kind = kind;
    bw.achieved_gbps =
        bw.time_ns > 0 ? static_cast<double>(bw.bytes) / static_cast<double>(bw.time_ns) : 0.0;
    std::stable_sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end < b.end;
    });
    // HTA's summary: the running sum of bandwidths at every change point, zeros excluded.
    values.clear();
    double running = 0;
    for (const Point& p : pts) {
      running += p.gbps;
      if (running < 0) running = 0;
      if (running > 0) values.push_back(running);
    }
    bw.hta_gbps = describe(values);
    out.push_back(std::move(bw));
  }
  return out;
}

LaunchStats launch_stats(const Trace& trace, const GpuEvents& ev, const GpuOptions& o) {
  NameFlag accepted(trace,
                    ev.hta_compatible ? &is_hta_launch_stats_call_name : &is_launch_call_name);
  LaunchStats st;
  std::vector<double> cpu, gpu, delay;
  std::vector<LaunchRecord> all_short;
  struct Row {
    int64_t corr, cpu, gpu, delay;
    uint32_t slice;
  };
  std::vector<Row> rows;
  for (const GpuEvent& e : ev.events) {
    if (!is_work(e) || e.launch < 0 || !accepted(trace.slices.name[e.launch])) continue;
    Row r;
    r.corr = e.correlation;
    r.cpu = e.launch_end - e.launch_ts;
    r.gpu = e.dur();
    // Work that starts while its launch call still runs (MTIA's submit call waits for it) has
    // no launch delay: 0, as HTA's published numbers have it.
    r.delay = std::max<int64_t>(0, e.ts - e.launch_end);
    r.slice = e.slice;
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.corr < b.corr; });
  cpu.reserve(rows.size());
  gpu.reserve(rows.size());
  delay.reserve(rows.size());
  auto record = [&](const Row& r) {
    LaunchRecord lr;
    lr.kernel = std::string(trace.str(trace.slices.name[r.slice]));
    lr.correlation = r.corr;
    lr.cpu_ns = r.cpu;
    lr.gpu_ns = r.gpu;
    lr.delay_ns = r.delay;
    return lr;
  };
  std::vector<const Row*> short_rows;
  for (const Row& r : rows) {
    ++st.rows;
    st.sum_cpu_ns += r.cpu;
    st.sum_gpu_ns += r.gpu;
    st.sum_delay_ns += r.delay;
    cpu.push_back(r.cpu / 1000.0);
    gpu.push_back(r.gpu / 1000.0);
    delay.push_back(r.delay / 1000.0);
    if (r.cpu <= o.runtime_cutoff_ns && r.gpu < r.cpu) {
      ++st.short_kernels;
      st.short_kernels_cpu_ns += r.cpu;
      st.short_kernels_gpu_ns += r.gpu;
      short_rows.push_back(&r);
    }
    if (r.cpu > o.runtime_cutoff_ns) ++st.runtime_outliers;
    if (r.delay > o.launch_delay_cutoff_ns) ++st.delay_outliers;
    if (st.first.size() < 5) st.first.push_back(record(r));
  }
  // Flag the short kernels whose launch costs the most more than the kernel itself.
  size_t n = std::min(short_rows.size(), o.max_flagged_launches);
  std::partial_sort(short_rows.begin(), short_rows.begin() + n, short_rows.end(),
                    [](const Row* a, const Row* b) {
                      return a->cpu - a->gpu != b->cpu - b->gpu ? a->cpu - a->gpu > b->cpu - b->gpu
                                                                : a->corr < b->corr;
                    });
  for (size_t i = 0; i < n; ++i) st.flagged.push_back(record(*short_rows[i]));
  st.cpu_us = describe(std::move(cpu));
  st.gpu_us = describe(std::move(gpu));
  st.delay_us = describe(std::move(delay));
  return st;
}

// CPU activity: top-level ops and runtime calls on CPU threads (annotations and profiler spans
// cover whole steps and would make every GPU interval "overlapped").
std::vector<Interval> cpu_activity(const Trace& trace) {
  NameFlag active_cat(trace, [](std::string_view c) {
    return c.empty() || c == "cpu_op" || c == "cuda_runtime" || c == "cuda_driver" ||
           c == "Operator" || c == "Runtime" || c == "python_function";
  });
  std::vector<Interval> v;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (trace.tracks[s.track[i]].kind != TrackKind::kThread || !active_cat(s.cat[i])) continue;
    v.emplace_back(s.ts[i], s.ts[i] + s.dur[i]);
  }
  merge_intervals(v);
  return v;
}

}  // namespace

Describe describe(std::vector<double> v) {
  Describe d;
  d.count = static_cast<double>(v.size());
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - d.mean) * (x - d.mean);
    d.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  d.min = v.front();
  d.max = v.back();
  d.p25 = stats::quantile_sorted(v, 0.25);
  d.p50 = stats::quantile_sorted(v, 0.50);
  d.p75 = stats::quantile_sorted(v, 0.75);
  return d;
}

TemporalBreakdown temporal_breakdown(const Trace&, const GpuEvents& ev, int32_t device) {
  TemporalBreakdown t;
  t.device = device;
  std::vector<Interval> all, comp, comm, memcpy, memset;
  for (const GpuEvent& e : ev.events) {
    if (!on_device(e, device)) continue;
    Interval iv{e.ts, e.end};
    all.push_back(iv);
    if (e.type == KernelType::kComputation) comp.push_back(iv);
    if (e.type == KernelType::kCommunication) comm.push_back(iv);
    if (e.kind == GpuWorkKind::kMemcpy) memcpy.push_back(iv);
    if (e.kind == GpuWorkKind::kMemset) memset.push_back(iv);
  }
  if (all.empty()) return t;
  for (auto* v : {&all, &comp, &comm, &memcpy, &memset}) merge_intervals(*v);
  t.span_ns = all.back().second - all.front().first;
  t.idle_ns = t.span_ns - total_length(all);
  t.compute_ns = total_length(comp);
  t.non_compute_ns = t.span_ns - t.compute_ns - t.idle_ns;
  t.communication_ns = total_length(comm);
  t.memcpy_ns = total_length(memcpy);
  t.memset_ns = total_length(memset);
  t.idle_pct = pct(t.idle_ns, t.span_ns);
  t.compute_pct = pct(t.compute_ns, t.span_ns);
  t.non_compute_pct = pct(t.non_compute_ns, t.span_ns);
  t.communication_pct = pct(t.communication_ns, t.span_ns);
  t.memcpy_pct = pct(t.memcpy_ns, t.span_ns);
  t.memset_pct = pct(t.memset_ns, t.span_ns);
  return t;
}

double comm_comp_overlap_pct(const GpuEvents& ev, int32_t device) {
  std::vector<Interval> comp, comm;
  for (const GpuEvent& e : ev.events) {
    if (!on_device(e, device)) continue;
    if (e.type == KernelType::kComputation) comp.emplace_back(e.ts, e.end);
    if (e.type == KernelType::kCommunication) comm.emplace_back(e.ts, e.end);
  }
  merge_intervals(comp);
  merge_intervals(comm);
  int64_t comm_ns = total_length(comm);
  if (comm_ns <= 0) return NAN;  // HTA: no communication -> NaN
  return 100.0 * static_cast<double>(intersection_length(comm, comp)) /
         static_cast<double>(comm_ns);
}

GpuSummary gpu_summary(const Trace& trace, const StepsResult& steps) {
  GpuSummary g;
  const SliceTable& s = trace.slices;
  // The window: the kept steps' GPU-extended span, or the CPU ops' span extended the same way.
  if (!steps.steps.empty()) {
    size_t kept = steps.has_gpu ? std::max<size_t>(steps.plugin_steps, 1) : steps.steps.size();
    kept = std::min(kept, steps.steps.size());
    const StepInfo& first = steps.steps.front();
    const StepInfo& last = steps.steps[kept - 1];
    g.window_begin_ns = steps.has_gpu ? first.gpu_begin_ns : first.begin_ns;
    g.window_end_ns =
        steps.has_gpu ? last.gpu_begin_ns + last.gpu_dur_ns : last.begin_ns + last.dur_ns;
    g.steps = kept;
    g.steps_left_out = steps.steps.size() - kept;
  } else {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < s.size(); ++i) {
      if (trace.is_gpu_track(s.track[i])) continue;
      std::string_view c = trace.str(s.cat[i]);
      if (c != "cpu_op" && c != "Operator" && c != "operator" && c != "python" && c != "Python")
        continue;
      lo = std::min(lo, s.ts[i]);
      hi = std::max(hi, s.end(i));
    }
    if (lo > hi) return g;
    DeviceStepWindows w = device_step_windows(trace, {{lo, hi}});
    g.window_begin_ns = w.windows[0].first;
    g.window_end_ns = w.windows[0].second;
  }
  const int64_t wb = g.window_begin_ns, we = g.window_end_ns;
  if (we <= wb) return g;
  StringId key_device = trace.strings.find("device");
  StringId key_bps = trace.strings.find("blocks per SM");
  StringId key_occ = trace.strings.find("est. achieved occupancy %");
  struct Acc {
    std::vector<Interval> busy;
    std::vector<std::pair<int64_t, double>> sm;  // (time, +-blocks per SM) endpoints
    double occ_weighted = 0;
    int64_t occ_time = 0;
    GpuUtilization u;
  };
  std::map<int32_t, Acc> acc;
  std::vector<int8_t> is_kernel(trace.strings.size(), -1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (!trace.is_gpu_track(s.track[i])) continue;
    int8_t& k = is_kernel[s.cat[i]];
    if (k < 0) {
      std::string_view c = trace.str(s.cat[i]);
      k = (c == "kernel" || c == "Kernel") ? 1 : 0;
    }
    if (k == 0) continue;
    int64_t b = s.ts[i], e = s.end(i);
    const Arg* dev = key_device == StringPool::kNotFound
                         ? nullptr
                         : trace.find_arg(s.args_begin[i], s.args_count[i], key_device);
    int32_t device = trace.tracks[s.track[i]].device;
    if (dev && dev->as_int()) device = static_cast<int32_t>(*dev->as_int());
    Acc& a = acc[device];
    a.u.device = device;
    int64_t cb = std::max(b, wb), ce = std::min(e, we);
    if (ce > cb) ++a.u.kernels;
    if (e > b) a.busy.push_back({b, e});
    const Arg* bps = key_bps == StringPool::kNotFound
                         ? nullptr
                         : trace.find_arg(s.args_begin[i], s.args_count[i], key_bps);
    if (bps && bps->as_double() && *bps->as_double() > 0) {
      ++a.u.kernels_with_blocks_per_sm;
      if (e > b) {
        a.sm.emplace_back(b, *bps->as_double());
        a.sm.emplace_back(e, -*bps->as_double());
      }
    }
    const Arg* occ = key_occ == StringPool::kNotFound
                         ? nullptr
                         : trace.find_arg(s.args_begin[i], s.args_count[i], key_occ);
    if (occ && occ->as_double() && *occ->as_double() >= 0) {
      ++a.u.kernels_with_occupancy;
      if (ce > cb) {
        a.occ_weighted += *occ->as_double() * static_cast<double>(ce - cb);
        a.occ_time += ce - cb;
      }
    }
  }
  const double window = static_cast<double>(we - wb);
  for (auto& [device, a] : acc) {
    merge_intervals(a.busy);
    for (const Interval& iv : a.busy) {
      int64_t b = std::max(iv.first, wb), e = std::min(iv.second, we);
      if (e > b) a.u.kernel_busy_ns += e - b;
    }
    a.u.utilization = static_cast<double>(a.u.kernel_busy_ns) / window;
    if (!a.sm.empty()) {
      // Starts before ends at one instant (the plugin's merge_ranges_with_value).
      using Point = std::pair<int64_t, double>;
      std::sort(a.sm.begin(), a.sm.end(), [](const Point& x, const Point& y) {
        return x.first != y.first ? x.first < y.first : (x.second > 0) > (y.second > 0);
      });
      double level = 0, weighted = 0;
      int64_t prev = a.sm.front().first;
      for (const auto& [t, v] : a.sm) {
        if (t > prev && level > 0) {
          int64_t b = std::max(prev, wb), e = std::min(t, we);
          if (e > b) weighted += std::min(level, 1.0) * static_cast<double>(e - b);
        }
        prev = t;
        level += v;
      }
      a.u.sm_efficiency = weighted / window;
    }
    if (a.occ_time > 0) a.u.achieved_occupancy = a.occ_weighted / static_cast<double>(a.occ_time);
    g.devices.push_back(a.u);
  }
  return g;
}

GpuResult analyze_gpu(const Trace& trace, const GpuOptions& o, const StepsResult* steps) {
  GpuResult r;
  if (steps) {
    r.summary = gpu_summary(trace, *steps);
  } else {
    r.summary = gpu_summary(trace, analyze_steps(trace));
  }
  r.rank = trace.meta.rank >= 0 ? trace.meta.rank : 0;
  r.hta_compatible = o.hta_compatible;
  GpuEventsOptions eo;
  eo.hta_compatible = o.hta_compatible;
  std::shared_ptr<const GpuEvents> ev_shared = shared_gpu_events(trace, eo);
  const GpuEvents& ev = *ev_shared;
  r.hta_dropped_last_step = ev.hta_filtered;
  r.kept_steps = ev.kept_steps;
  r.gpu_events = ev.events.size();
  r.temporal = temporal_breakdown(trace, ev, -1);
  r.comm_comp_overlap_pct = comm_comp_overlap_pct(ev, -1);
  r.idle = idle_breakdown(ev, o.consecutive_kernel_delay_ns);
  r.queues = queue_lengths(trace, ev, o.queue_series_max_points);
  r.bandwidth = memory_bandwidth(trace, ev, -1);
  r.launches = launch_stats(trace, ev, o);
  for (const MemoryBandwidth& b : r.bandwidth) {
    r.pageable_memcpy_count += static_cast<int64_t>(b.pageable_count);
    r.pageable_memcpy_ns += b.pageable_time_ns;
    r.pageable_memcpy_bytes += b.pageable_bytes;
  }

  std::vector<int32_t> devices;
  for (const GpuEvent& e : ev.events) devices.push_back(e.device);
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  std::vector<Interval> cpu = devices.empty() ? std::vector<Interval>{} : cpu_activity(trace);
  for (int32_t d : devices) {
    DeviceGpuStats ds;
    ds.device = d;
    ds.temporal = temporal_breakdown(trace, ev, d);
    ds.comm_comp_overlap_pct = comm_comp_overlap_pct(ev, d);
    for (const StreamIdle& s : r.idle) {
      if (s.device == d) ds.idle.push_back(s);
    }
    for (const StreamQueue& q : r.queues) {
      if (q.device == d) ds.queues.push_back(q);
    }
    ds.bandwidth = devices.size() == 1 ? r.bandwidth : memory_bandwidth(trace, ev, d);
    std::vector<Interval> busy;
    for (const GpuEvent& e : ev.events) {
      if (e.device == d && is_work(e)) busy.emplace_back(e.ts, e.end);
    }
    merge_intervals(busy);
    ds.gpu_busy_ns = total_length(busy);
    ds.cpu_overlap_ns = intersection_length(busy, cpu);
    ds.cpu_gpu_overlap = ds.gpu_busy_ns > 0 ? static_cast<double>(ds.cpu_overlap_ns) /
                                                  static_cast<double>(ds.gpu_busy_ns)
                                            : 0.0;
    r.devices.push_back(std::move(ds));
  }
  return r;
}

}  // namespace mlprof
