#include "render/critical_path_render.h"

#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {
namespace {

std::string ns(int64_t v) { return format_duration_ns(static_cast<double>(v)); }

struct Part {
  const char* name;
  int64_t CriticalPathResult::*field;
};
constexpr Part kParts[] = {
    {"cpu_bound", &CriticalPathResult::cpu_bound_ns},
    {"gpu_compute_bound", &CriticalPathResult::gpu_compute_ns},
    {"gpu_communication_bound", &CriticalPathResult::gpu_comm_ns},
    {"gpu_kernel_launch_overhead", &CriticalPathResult::launch_overhead_ns},
    {"gpu_kernel_kernel_overhead", &CriticalPathResult::kernel_kernel_overhead_ns},
};

}  // namespace

std::string render_critical_path_text(const CriticalPathResult& r, size_t width) {
  if (!r.message.empty()) return "critical path: " + r.message + "\n";
  std::string out;
  std::string window = "the whole trace";
  if (!r.annotation.empty())
    window = "'" + (r.window_name.empty() ? r.annotation : r.window_name) + "'" +
             (r.window_name == r.annotation && r.instance == 0
                  ? ""
                  : " (instance " + std::to_string(r.instance) + " of '" + r.annotation + "')");
  // One fact a line: the window, the path, what is missing (one 230-column line read badly).
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "critical path of %s\n"
      "  window  +%s .. +%s from the trace start\n"
      "  path    %s over %llu edges through %llu events (dependency graph: %llu nodes, "
      "%llu edges)\n%s\n",
      window.c_str(), ns(r.window_begin_ns - r.trace_begin_ns).c_str(),
      ns(r.window_end_ns - r.trace_begin_ns).c_str(), ns(r.path_ns).c_str(),
      static_cast<unsigned long long>(r.path_edges), static_cast<unsigned long long>(r.path_events),
      static_cast<unsigned long long>(r.nodes), static_cast<unsigned long long>(r.edges),
      r.has_sync_events ? ""
                        : "  note    no cuda_sync events in the trace: the GPU->CPU waits "
                          "are missing from the graph\n");
  out += buf;
  if (r.path_ns > r.window_end_ns - r.window_begin_ns)  // as the report's tab says it
    out.insert(out.size() - 1,
               "  note    the path is longer than the window: it follows the GPU work launched in "
               "the window to its end\n");
  TextTable t;
  t.add_column("bound by", TextTable::Align::kLeft);
  t.add_column("time");
  t.add_column("share");
  for (const Part& p : kParts) {
    int64_t v = r.*p.field;
    t.add_row({p.name, ns(v), format_percent(r.path_ns ? static_cast<double>(v) / r.path_ns : 0)});
  }
  out += t.render(width) + "\n";
  TextTable e;
  e.add_column("on the path", TextTable::Align::kLeft);
  e.add_column("bound by", TextTable::Align::kLeft);
  e.add_column("edges");
  e.add_column("time");
  for (const CriticalPathEvent& ev : r.top_events)
    e.add_row({ev.name, ev.bound_by, std::to_string(ev.edges), ns(ev.ns)});
  out += e.render(width);
  if (!r.recommendations.empty()) {
    out += "\nwhat to change\n";
    for (const std::string& line : r.recommendations) out += "  - " + line + "\n";
  }
  return out;
}

void write_critical_path_json(JsonWriter& w, const CriticalPathResult& r) {
  w.begin_object().field("kind", "critical_path");
  if (!r.message.empty()) w.field("message", r.message);
  w.field("annotation", r.annotation).field("instance", static_cast<uint64_t>(r.instance));
  w.field("window_name", r.window_name);
  w.field("window_begin_ns", r.window_begin_ns).field("window_end_ns", r.window_end_ns);
  // The same window (and each path edge's start) relative to the trace's start, exact: epoch
  // nanoseconds lose their last digits as JavaScript doubles.
  w.field("window_begin_offset_ns", r.message.empty() ? r.window_begin_ns - r.trace_begin_ns : 0);
  w.field("window_end_offset_ns", r.message.empty() ? r.window_end_ns - r.trace_begin_ns : 0);
  w.field("nodes", r.nodes).field("edges", r.edges);
  w.key("edges_by_type").begin_object();
  for (int k = 0; k < 5; ++k)
    w.field(cp_edge_type_name(static_cast<CpEdgeType>(k)), r.edges_by_type[k]);
  w.end_object();
  w.field("path_nodes", r.path_nodes).field("path_edges", r.path_edges);
  w.field("path_events", r.path_events).field("path_ns", r.path_ns);
  w.field("has_sync_events", r.has_sync_events);
  w.key("bound_by_ns").begin_object();
  for (const Part& p : kParts) w.field(p.name, r.*p.field);
  w.end_object();
  w.key("top_events").begin_array();
  for (const CriticalPathEvent& ev : r.top_events)
    w.begin_object()
        .field("name", ev.name)
        .field("bound_by", ev.bound_by)
        .field("edges", ev.edges)
        .field("ns", ev.ns)
        .end_object();
  w.end_array();
  w.key("path").begin_array();
  for (const CriticalPathStep& st : r.path) {
    w.begin_object()
        .field("type", st.type)
        .field("event", st.event)
        .field("category", st.category)
        .field("bound_by", st.bound_by)
        .field("ts_ns", st.ts_ns)
        .field("offset_ns", st.ts_ns - r.trace_begin_ns)
        .field("ns", st.ns);
    if (r.path_weighted_total) w.field("index", st.index);  // its place among all the edges
    w.end_object();
  }
  w.end_array();
  w.key("syncs").begin_array();
  for (const CriticalPathSync& y : r.syncs)
    w.begin_object()
        .field("from", y.from)
        .field("to", y.to)
        .field("from_correlation", y.from_correlation)
        .field("to_correlation", y.to_correlation)
        .field("gpu_to_gpu", y.gpu_to_gpu)
        .field("on_path", y.on_path)
        .end_object();
  w.end_array();
  // Only when the lists were cut (the report's budget), so the JSON reads as before otherwise.
  if (r.path_weighted_total) {
    int64_t listed_ns = 0;
    for (const CriticalPathStep& st : r.path) listed_ns += st.ns;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%",
                  r.path_ns ? 100.0 * static_cast<double>(listed_ns) / r.path_ns : 0.0);
    w.field("path_listed_total", static_cast<uint64_t>(r.path_weighted_total));
    w.field("path_cut", "the " + std::to_string(r.path.size()) + " longest of " +
                            std::to_string(r.path_weighted_total) +
                            " path edges with time are listed, in path order (" + pct +
                            " of the path's time); every edge: mlprof critical-path TRACE --json, "
                            "or the Critical path tab of mlprof serve");
  }
  if (r.syncs_total) {
    w.field("syncs_total", static_cast<uint64_t>(r.syncs_total));
    w.field("syncs_cut", "the first " + std::to_string(r.syncs.size()) + " of " +
                             std::to_string(r.syncs_total) +
                             " synchronization edges are listed (those on the path first); "
                             "every one: mlprof critical-path TRACE --json");
  }
  // The steps a caller may analyze instead (`--step N`, serve's ?step=N), after everything
  // else so the fields above read as before.
  w.key("step");
  if (r.step >= 0)
    w.value(r.step);
  else
    w.null();
  w.key("steps").begin_array();
  for (const CriticalPathStepWindow& st : r.steps)
    w.begin_object()
        .field("number", st.number)
        .field("name", st.name)
        .field("begin_ns", st.begin_ns)
        .field("offset_ns", st.begin_ns - r.trace_begin_ns)
        .field("dur_ns", st.dur_ns)
        .end_object();
  w.end_array();
  w.field("steps_total", static_cast<uint64_t>(r.steps_total));
  if (r.steps.size() < r.steps_total)
    w.field("steps_cut", "the first " + std::to_string(r.steps.size()) + " of " +
                             std::to_string(r.steps_total) +
                             " steps are listed; any step can be analyzed by its number");
  w.key("recommendations").begin_array();
  for (const std::string& line : r.recommendations) w.value(line);
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
