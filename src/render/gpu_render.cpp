#include "render/gpu_render.h"

#include <cmath>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {

std::string dur(int64_t ns) { return format_duration_ns(static_cast<double>(ns)); }
std::string pct(double p) { return format_fixed(p, 2) + "%"; }

void write_describe(JsonWriter& w, std::string_view key, const Describe& d) {
  w.key(key).begin_object();
  w.field("count", d.count);
  w.field("mean", d.mean);
  w.field("std", d.std);
  w.field("min", d.min);
  w.field("p25", d.p25);
  w.field("p50", d.p50);
  w.field("p75", d.p75);
  w.field("max", d.max);
  w.end_object();
}

void write_temporal(JsonWriter& w, const TemporalBreakdown& t) {
  w.begin_object();
  if (t.device >= 0) w.field("device", t.device);
  w.field("span_ns", t.span_ns);
  w.field("idle_ns", t.idle_ns);
  w.field("compute_ns", t.compute_ns);
  w.field("non_compute_ns", t.non_compute_ns);
  w.field("communication_ns", t.communication_ns);
  w.field("memcpy_ns", t.memcpy_ns);
  w.field("memset_ns", t.memset_ns);
  w.field("idle_pct", t.idle_pct);
  w.field("compute_pct", t.compute_pct);
  w.field("non_compute_pct", t.non_compute_pct);
  w.field("communication_pct", t.communication_pct);
  w.field("memcpy_pct", t.memcpy_pct);
  w.field("memset_pct", t.memset_pct);
  w.end_object();
}

void write_idle(JsonWriter& w, const std::vector<StreamIdle>& idle) {
  w.begin_array();
  for (const StreamIdle& s : idle) {
    w.begin_object();
    w.field("device", s.device);
    w.field("stream", s.stream);
    w.field("idle_ns", s.idle_ns());
    const std::pair<const char*, const IdleCategory*> cats[] = {
        {"host_wait", &s.host_wait}, {"kernel_wait", &s.kernel_wait}, {"other", &s.other}};
    for (const auto& [name, c] : cats) {
      w.key(name).begin_object();
      w.field("time_ns", c->time_ns);
      w.field("ratio", c->ratio);
      write_describe(w, "intervals_us", c->intervals_us);
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
}

void write_queues(JsonWriter& w, const std::vector<StreamQueue>& queues) {
  w.begin_array();
  for (const StreamQueue& q : queues) {
    w.begin_object();
    w.field("device", q.device);
    w.field("stream", q.stream);
    write_describe(w, "hta_summary", q.hta);
    w.field("mean_time_weighted", q.mean_time_weighted);
    w.field("max_length", q.max_length);
    w.field("time_at_max_queue_ns", q.time_at_max_queue_ns);
    w.key("series").begin_array();
    for (const QueuePoint& p : q.series) {
      w.begin_array().value(p.ts_ns).value(p.length).end_array();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

void write_bandwidth(JsonWriter& w, const std::vector<MemoryBandwidth>& bw) {
  w.begin_array();
  for (const MemoryBandwidth& b : bw) {
    w.begin_object();
    w.field("kind", b.kind);
    w.field("count", b.count);
    w.field("bytes", b.bytes);
    w.field("time_ns", b.time_ns);
    w.field("achieved_gbps", b.achieved_gbps);
    w.field("pageable_count", b.pageable_count);
    w.field("pageable_bytes", b.pageable_bytes);
    w.field("pageable_time_ns", b.pageable_time_ns);
    write_describe(w, "hta_gbps", b.hta_gbps);
    w.end_object();
  }
  w.end_array();
}

void write_launch(JsonWriter& w, const LaunchRecord& l) {
  w.begin_object();
  w.field("kernel", l.kernel);
  w.field("correlation", l.correlation);
  w.field("cpu_ns", l.cpu_ns);
  w.field("gpu_ns", l.gpu_ns);
  w.field("delay_ns", l.delay_ns);
  w.end_object();
}

std::string temporal_table(const GpuResult& r, size_t width) {
  TextTable t;
  t.add_column("device", TextTable::Align::kLeft);
  t.add_column("span");
  t.add_column("compute");
  t.add_column("comm");
  t.add_column("memcpy");
  t.add_column("memset");
  t.add_column("idle");
  t.add_column("non-compute");
  auto row = [&](const std::string& name, const TemporalBreakdown& b) {
    t.add_row({name, dur(b.span_ns), pct(b.compute_pct), pct(b.communication_pct),
               pct(b.memcpy_pct), pct(b.memset_pct), pct(b.idle_pct), pct(b.non_compute_pct)});
  };
  for (const DeviceGpuStats& d : r.devices) row("GPU " + std::to_string(d.device), d.temporal);
  if (r.devices.size() > 1) row("all", r.temporal);
  return t.render(width);
}

}  // namespace

std::string render_gpu_summary_text(const GpuSummary& g, size_t width) {
  if (g.devices.empty()) return "";
  std::string out = "\nGPU summary (TensorBoard plugin Overview: kernels over " +
                    (g.steps ? std::to_string(g.steps) +
                                   " steps, each extended to the end of "
                                   "the GPU work it launched"
                             : std::string("the CPU ops' span (no steps)")) +
                    ", " + dur(g.window_end_ns - g.window_begin_ns);
  if (g.steps_left_out)
    out += "; last " + std::to_string(g.steps_left_out) + " step(s) left out as the plugin does";
  out += ")\n";
  TextTable t;
  t.add_column("device", TextTable::Align::kLeft);
  t.add_column("GPU utilization");
  t.add_column("est. SM efficiency");
  t.add_column("est. achieved occupancy");
  t.add_column("kernels");
  for (const GpuUtilization& u : g.devices) {
    t.add_row({"GPU " + std::to_string(u.device), pct(u.utilization * 100),
               std::isnan(u.sm_efficiency) ? "n/a" : pct(u.sm_efficiency * 100),
               std::isnan(u.achieved_occupancy) ? "n/a" : pct(u.achieved_occupancy),
               std::to_string(u.kernels)});
  }
  return out + t.render(width);
}

void write_gpu_summary_json(JsonWriter& w, const GpuSummary& g) {
  w.begin_object();
  w.field("window_begin_ns", g.window_begin_ns);
  w.field("window_end_ns", g.window_end_ns);
  w.field("steps", static_cast<uint64_t>(g.steps));
  w.field("steps_left_out", static_cast<uint64_t>(g.steps_left_out));
  w.key("definition")
      .value(
          "TensorBoard profiler plugin (gpu_metrics_parser.py): utilization = union of kernel "
          "time in the window / window; SM efficiency = min(sum of concurrent kernels' blocks "
          "per SM, 1) integrated over the window / window; occupancy = est. achieved occupancy "
          "% weighted by kernel time in the window");
  w.key("devices").begin_array();
  for (const GpuUtilization& u : g.devices) {
    w.begin_object();
    w.field("device", u.device);
    w.field("kernels", u.kernels);
    w.field("kernel_busy_ns", u.kernel_busy_ns);
    w.field("gpu_utilization", u.utilization);
    w.field("est_sm_efficiency", u.sm_efficiency);
    w.field("est_achieved_occupancy_pct", u.achieved_occupancy);
    w.field("kernels_with_blocks_per_sm", u.kernels_with_blocks_per_sm);
    w.field("kernels_with_occupancy", u.kernels_with_occupancy);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

std::string render_gpu_text(const GpuResult& r, size_t width) {
  std::string out;
  out += "GPU time (rank " + std::to_string(r.rank) + ", " + std::to_string(r.gpu_events) +
         " GPU events";
  if (r.hta_compatible) {
    out += ", HTA-compatible";
    if (r.hta_dropped_last_step) out += ": last profiler step dropped";
  }
  out += ")\n";
  if (r.devices.empty()) return out + "No GPU events in this trace.\n";
  out += render_gpu_summary_text(r.summary, width);
  out += "\nTemporal breakdown (% of span = last GPU end - first GPU start)\n";
  out += temporal_table(r, width);
  out += "Communication/computation overlap: " +
         (std::isnan(r.comm_comp_overlap_pct) ? std::string("n/a (no communication)")
                                              : pct(r.comm_comp_overlap_pct)) +
         "\n";
  for (const DeviceGpuStats& d : r.devices) {
    out += "GPU " + std::to_string(d.device) + " busy " + dur(d.gpu_busy_ns) +
           ", CPU active during " + format_percent(d.cpu_gpu_overlap) + " of it\n";
  }

  out +=
      "\nIdle time by cause per stream (host wait: launched after the previous kernel ended;"
      "\nkernel wait: shorter gap; other)\n";
  TextTable it;
  it.add_column("stream", TextTable::Align::kLeft);
  it.add_column("idle");
  it.add_column("host wait");
  it.add_column("kernel wait");
  it.add_column("other");
  for (const StreamIdle& s : r.idle) {
    it.add_row({"GPU " + std::to_string(s.device) + " stream " + std::to_string(s.stream),
                dur(s.idle_ns()), format_percent(s.host_wait.ratio),
                format_percent(s.kernel_wait.ratio), format_percent(s.other.ratio)});
  }
  out += it.render(width);

  out += "\nQueue length per stream (launched, not yet started)\n";
  TextTable qt;
  qt.add_column("stream", TextTable::Align::kLeft);
  qt.add_column("mean (time)");
  qt.add_column("mean (HTA)");
  qt.add_column("max");
  qt.add_column("at max 1024");
  for (const StreamQueue& q : r.queues) {
    qt.add_row({"GPU " + std::to_string(q.device) + " stream " + std::to_string(q.stream),
                format_fixed(q.mean_time_weighted, 2), format_fixed(q.hta.mean, 2),
                std::to_string(q.max_length), dur(q.time_at_max_queue_ns)});
  }
  out += qt.render(width);

  const LaunchStats& l = r.launches;
  out += "\nKernel launches: " + std::to_string(l.rows) + " matched; CPU launch mean " +
         format_fixed(l.cpu_us.mean, 1) + " us, GPU duration mean " +
         format_fixed(l.gpu_us.mean, 1) + " us, launch delay mean " +
         format_fixed(l.delay_us.mean, 1) + " us\n";
  out += "  " + std::to_string(l.short_kernels) +
         " short kernels run shorter than their launch (launch <= 50 us): " +
         dur(l.short_kernels_gpu_ns) + " of GPU work for " + dur(l.short_kernels_cpu_ns) +
         " of launch calls\n";
  out += "  " + std::to_string(l.runtime_outliers) + " launches over 50 us, " +
         std::to_string(l.delay_outliers) + " launch delays over 100 us\n";
  if (!l.flagged.empty()) {
    TextTable ft;
    ft.add_column("short kernel, long launch", TextTable::Align::kLeft);
    ft.add_column("launch");
    ft.add_column("kernel");
    ft.add_column("delay");
    for (size_t i = 0; i < l.flagged.size() && i < 10; ++i) {
      const LaunchRecord& f = l.flagged[i];
      ft.add_row({f.kernel, dur(f.cpu_ns), dur(f.gpu_ns), dur(f.delay_ns)});
    }
    out += ft.render(width);
  }

  if (!r.bandwidth.empty()) {
    out += "\nMemory copies and sets\n";
    TextTable bt;
    bt.add_column("kind", TextTable::Align::kLeft);
    bt.add_column("count");
    bt.add_column("bytes");
    bt.add_column("time");
    bt.add_column("GB/s");
    bt.add_column("pageable");
    for (const MemoryBandwidth& b : r.bandwidth) {
      bt.add_row({b.kind, std::to_string(b.count), format_bytes(static_cast<double>(b.bytes)),
                  dur(b.time_ns), format_fixed(b.achieved_gbps, 2),
                  b.pageable_count
                      ? std::to_string(b.pageable_count) + " (" + dur(b.pageable_time_ns) + ")"
                      : ""});
    }
    out += bt.render(width);
    if (r.pageable_memcpy_count > 0) {
      out += std::to_string(r.pageable_memcpy_count) +
             " copies from pageable host memory: pin the source (pin_memory=True) to make them "
             "asynchronous and faster\n";
    }
  }
  return out;
}

void write_gpu_json(JsonWriter& w, const GpuResult& r) {
  w.begin_object();
  w.field("rank", r.rank);
  w.field("hta_compatible", r.hta_compatible);
  w.field("hta_dropped_last_step", r.hta_dropped_last_step);
  w.key("kept_steps").begin_array();
  for (int64_t s : r.kept_steps) w.value(s);
  w.end_array();
  w.field("gpu_events", r.gpu_events);
  w.key("summary");
  write_gpu_summary_json(w, r.summary);
  w.key("temporal_breakdown");
  write_temporal(w, r.temporal);
  w.field("comm_comp_overlap_pct", r.comm_comp_overlap_pct);
  w.key("idle_time_breakdown");
  write_idle(w, r.idle);
  w.key("queue_length");
  write_queues(w, r.queues);
  w.key("memory_bandwidth");
  write_bandwidth(w, r.bandwidth);
  w.field("pageable_memcpy_count", r.pageable_memcpy_count);
  w.field("pageable_memcpy_ns", r.pageable_memcpy_ns);
  w.field("pageable_memcpy_bytes", r.pageable_memcpy_bytes);
  const LaunchStats& l = r.launches;
  w.key("launch_stats").begin_object();
  w.field("rows", l.rows);
  w.field("sum_cpu_ns", l.sum_cpu_ns);
  w.field("sum_gpu_ns", l.sum_gpu_ns);
  w.field("sum_launch_delay_ns", l.sum_delay_ns);
  write_describe(w, "cpu_duration_us", l.cpu_us);
  write_describe(w, "gpu_duration_us", l.gpu_us);
  write_describe(w, "launch_delay_us", l.delay_us);
  w.field("short_kernels", l.short_kernels);
  w.field("short_kernels_cpu_ns", l.short_kernels_cpu_ns);
  w.field("short_kernels_gpu_ns", l.short_kernels_gpu_ns);
  w.field("runtime_outliers", l.runtime_outliers);
  w.field("launch_delay_outliers", l.delay_outliers);
  w.key("flagged").begin_array();
  for (const LaunchRecord& f : l.flagged) write_launch(w, f);
  w.end_array();
  w.key("first").begin_array();
  for (const LaunchRecord& f : l.first) write_launch(w, f);
  w.end_array();
  w.end_object();
  w.key("devices").begin_array();
  for (const DeviceGpuStats& d : r.devices) {
    w.begin_object();
    w.field("device", d.device);
    w.key("temporal_breakdown");
    write_temporal(w, d.temporal);
    w.field("comm_comp_overlap_pct", d.comm_comp_overlap_pct);
    w.field("gpu_busy_ns", d.gpu_busy_ns);
    w.field("cpu_overlap_ns", d.cpu_overlap_ns);
    w.field("cpu_gpu_overlap", d.cpu_gpu_overlap);
    w.key("memory_bandwidth");
    write_bandwidth(w, d.bandwidth);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
