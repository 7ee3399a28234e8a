#include "render/text_table.h"
#include "render/timeline_render.h"
#include "render/web_page.h"
#include "trace/units.h"

namespace mlprof {

void write_timeline_json(JsonWriter& w, const TimelineResult& r) {
  w.begin_object();
  w.field("begin_ns", r.begin_ns);
  w.field("end_ns", r.end_ns);
  w.field("span_ns", r.end_ns - r.begin_ns);
  w.field("slices", r.slices);
  w.field("flows", r.flows);
  w.field("cpu_busy_ns", r.cpu_busy_ns);
  w.field("gpu_busy_ns", r.gpu_busy_ns);
  w.field("overlap_ns", r.overlap_ns);
  w.field("gpu_span_ns", r.gpu_span_ns);
  w.field("gpu_idle_ns", r.gpu_idle_ns);
  w.field("gpu_busy_overlapped_pct", r.gpu_busy_overlapped_pct);
  w.key("lanes").begin_array();
  for (const TimelineLane& l : r.lanes) {
    w.begin_object();
    w.field("name", l.name);
    w.field("kind", l.gpu ? "gpu_stream" : "cpu_thread");
    w.field("pid", l.pid);
    w.field("tid", l.tid);
    w.field("slices", l.slices);
    w.field("rows", l.max_depth);
    w.field("busy_ns", l.busy_ns);
    w.end_object();
  }
  w.end_array();
  w.key("counters").begin_array();
  for (const TimelineCounter& c : r.counters) {
    w.begin_object();
    w.field("name", c.name);
    w.field("samples", c.samples);
    w.field("min", c.min);
    w.field("max", c.max);
    w.field("mean", c.mean);
    w.key("ts_ns").begin_array();
    for (int64_t t : c.ts_ns) w.value(t);
    w.end_array();
    w.key("values").begin_array();
    for (double v : c.values) w.value(v);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("gpu_utilization").begin_array();
  for (const TimelineGpuUtilization& u : r.gpu_utilization) {
    w.begin_object();
    w.field("device", u.device);
    w.field("bucket_ns", u.bucket_ns);
    w.key("values").begin_array();
    for (double v : u.values) w.value(v);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

std::string render_timeline_text(const TimelineResult& r, size_t width) {
  TextTable t;
  t.add_column("lane", TextTable::Align::kLeft);
  t.add_column("kind", TextTable::Align::kLeft);
  t.add_column("slices");
  t.add_column("rows");
  t.add_column("busy");
  t.add_column("busy %");
  const double span = std::max<int64_t>(1, r.end_ns - r.begin_ns);
  for (const TimelineLane& l : r.lanes) {
    t.add_row({l.name, l.gpu ? "GPU" : "CPU", std::to_string(l.slices), std::to_string(l.max_depth),
               format_duration_ns(static_cast<double>(l.busy_ns)),
               format_percent(static_cast<double>(l.busy_ns) / span)});
  }
  std::string out = t.render(width);
  out += "\nspan " + format_duration_ns(span) + ", CPU busy " +
         format_duration_ns(static_cast<double>(r.cpu_busy_ns));
  if (r.gpu_busy_ns > 0) {
    out += ", GPU busy " + format_duration_ns(static_cast<double>(r.gpu_busy_ns)) + ", GPU idle " +
           format_duration_ns(static_cast<double>(r.gpu_idle_ns)) +
           " of its span, CPU/GPU overlap " +
           format_duration_ns(static_cast<double>(r.overlap_ns)) + " (" +
           format_percent(r.gpu_busy_overlapped_pct / 100.0) + " of GPU busy time)";
  } else {
    out += ", no GPU work";
  }
  out += "\n" + std::to_string(r.flows) + " flows, " + std::to_string(r.counters.size()) +
         " counter series\n";
  return out;
}

Result<std::string> render_timeline_html(const Trace& trace, const TimelineResult& r,
                                         std::string_view title) {
  Result<std::string> events = encode_timeline_events(trace, r);
  MLPROF_RETURN_IF_ERROR(events);
  JsonWriter w;
  w.begin_object();
  w.field("kind", "timeline");
  w.field("title", title);
  w.key("analyses").begin_object().key("timeline");
  write_timeline_json(w, r);
  w.end_object().end_object();
  return render_web_page(WebPage{"timeline", std::string(title), w.take(), base64_encode(*events)});
}

}  // namespace mlprof
