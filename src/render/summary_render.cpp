#include "render/summary_render.h"

#include <algorithm>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

void write_import_stats_json(JsonWriter& w, const ImportStats& s) {
  // {"events_read": N, "problems": {"truncated": {"count", "first_byte", "first"}, ...}}
  w.key("import").begin_object();
  w.field("events_read", s.events_read);
  w.key("problems").begin_object();
  for (size_t k = 0; k < s.kinds.size(); ++k) {
    const ImportStats::Entry& e = s.kinds[k];
    if (!e.count) continue;
    w.key(std::string(import_problem_name(static_cast<ImportProblem>(k)))).begin_object();
    w.field("count", e.count);
    if (e.first_offset != UINT64_MAX) w.field("first_byte", e.first_offset);
    w.field("first", e.first_what);
    w.end_object();
  }
  w.end_object();
  w.end_object();
}

namespace {

// How the events read became the events kept, so that "216,092 events read" beside "events
// 173,681" explains itself: read = kept + flow_ends + unmatched + other. A flow (Kineto's ac2g
// s/f pair) keeps one row for two events read; unmatched are flow endpoints and 'E' ends without
// a partner (skipped); other is the rest (metadata 'M' records such as process names, the 'E' of
// B/E pairs). Not accounted when the importer does not count events read (a memory snapshot) or
// the counts do not add up. One computation for the text and the JSON (the report reads that).
struct ImportAccount {
  bool accounted = false;
  uint64_t read = 0, kept = 0, flow_ends = 0, unmatched = 0, other = 0;
};

ImportAccount import_account(const SummaryResult& r) {
  ImportAccount a;
  a.read = r.import_stats.events_read;
  a.kept = r.events;
  a.flow_ends = r.flows;
  a.unmatched = r.import_stats.count(ImportProblem::kUnmatchedFlow) +
                r.import_stats.count(ImportProblem::kUnmatchedEnd);
  uint64_t explained = a.kept + a.flow_ends + a.unmatched;
  a.accounted = a.read > 0 && a.read >= explained;
  if (a.accounted) a.other = a.read - explained;
  return a;
}

}  // namespace

std::string render_summary_text(const SummaryResult& r, size_t width) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s  (%s)\n", r.source.c_str(), r.format.c_str());
  out += buf;
  std::snprintf(
      buf, sizeof buf,
      "span %s   events %llu (slices %llu, instants %llu, counters %llu, flows %llu, "
      "memory %llu)\n",
      format_duration_ns(static_cast<double>(r.span_ns)).c_str(),
      static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.slices),
      static_cast<unsigned long long>(r.instants), static_cast<unsigned long long>(r.counters),
      static_cast<unsigned long long>(r.flows), static_cast<unsigned long long>(r.memory_events));
  out += buf;
  std::snprintf(
      buf, sizeof buf, "processes %llu   threads %llu   GPU streams %llu   steps %llu",
      static_cast<unsigned long long>(r.processes), static_cast<unsigned long long>(r.threads),
      static_cast<unsigned long long>(r.gpu_streams), static_cast<unsigned long long>(r.steps));
  out += buf;
  if (r.rank >= 0) out += "   rank " + std::to_string(r.rank);
  out += "\n";
  if (ImportAccount a = import_account(r); a.accounted) {
    out += "events read " + std::to_string(a.read) + " = " + std::to_string(a.kept) + " kept + " +
           std::to_string(a.flow_ends) + " second ends of flows + " + std::to_string(a.unmatched) +
           " unmatched flow/end events (skipped) + " + std::to_string(a.other) +
           " other (metadata records, E of B/E pairs, flow ends that joined no event)\n";
  }
  if (!r.import_line.empty()) out += "import " + r.import_line + "\n";
  if (r.dropped_events)
    out += "WARNING: the recorder dropped " + std::to_string(r.dropped_events) +
           " events (buffer limit reached)\n";
  if (r.import_stats.damaged()) {
    // The details went to stderr as warnings at load time; here, the counts by kind.
    out += "import problems (recovered):";
    for (size_t k = 0; k < r.import_stats.kinds.size(); ++k) {
      uint64_t n = r.import_stats.kinds[k].count;
      if (n && import_problem_is_damage(static_cast<ImportProblem>(k)))
        out += " " + std::string(import_problem_name(static_cast<ImportProblem>(k))) + " " +
               std::to_string(n);
    }
    out += "\n";
  }
  // Identical devices (8 x A100) on one line.
  for (size_t i = 0; i < r.devices.size();) {
    std::string desc = r.devices[i].substr(r.devices[i].find(": ") + 2);
    size_t j = i + 1;
    while (j < r.devices.size() && r.devices[j].substr(r.devices[j].find(": ") + 2) == desc) ++j;
    out += j - i > 1 ? "devices " + std::to_string(j - i) + " x " + desc + "\n"
                     : "device " + r.devices[i] + "\n";
    i = j;
  }
  if (!r.categories.empty()) {
    out += "events per category:";
    size_t col = 20;
    for (const CategoryCount& c : r.categories) {
      std::string item = " " + (c.category.empty() ? std::string("(none)") : c.category) + " " +
                         std::to_string(c.count);
      if (col + item.size() > width) {
        out += "\n   ";
        col = 3;
      }
      out += item;
      col += item.size();
    }
    out += "\n";
  }
  out += "\n";
  TextTable t;
  t.add_column("operation ", TextTable::Align::kLeft);
  for (const char* h :
       {"count", "total", "self", "mean", "std", "min", "max", "p50", "p90", "p99", "%span"})
    t.add_column(h);
  t.set_gap(1);
  auto d = [](double ns) { return format_duration_compact(ns); };
  for (const OpStats& op : r.top_ops) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f", op.percent_of_span);
    t.add_row({op.name, std::to_string(op.count), d(static_cast<double>(op.total_ns)),
               d(static_cast<double>(op.self_ns)), d(op.mean_ns), d(op.std_ns),
               d(static_cast<double>(op.min_ns)), d(static_cast<double>(op.max_ns)), d(op.p50_ns),
               d(op.p90_ns), d(op.p99_ns), pct});
  }
  std::snprintf(buf, sizeof buf, "top %zu of %llu operations\n", r.top_ops.size(),
                static_cast<unsigned long long>(r.distinct_ops));
  out += buf;
  out += t.render(width);
  return out;
}

void write_op_stats_json(JsonWriter& w, const OpStats& op) {
  w.begin_object();
  w.field("name", op.name);
  w.field("category", op.category);
  w.field("count", op.count);
  w.field("total_ns", op.total_ns);
  w.field("self_ns", op.self_ns);
  w.field("mean_ns", op.mean_ns);
  w.field("std_ns", op.std_ns);
  w.field("min_ns", op.min_ns);
  w.field("max_ns", op.max_ns);
  w.field("p50_ns", op.p50_ns);
  w.field("p90_ns", op.p90_ns);
  w.field("p99_ns", op.p99_ns);
  w.field("percent_of_span", op.percent_of_span);
  if (op.cpu_calls) {  // only where the trace recorded thread time (tts/tdur)
    w.field("cpu_calls", op.cpu_calls);
    w.field("cpu_ns", op.cpu_ns);
    w.field("cpu_wall_ns", op.cpu_wall_ns);
  }
  if (op.device_self_ns >= 0) {
    w.field("device_self_ns", op.device_self_ns);
    w.field("device_total_ns", op.device_total_ns);
    // Only on a trace with matched graph replays, so other traces' JSON is unchanged.
    if (op.device_replayed_ns >= 0) w.field("device_replayed_ns", op.device_replayed_ns);
  }
  w.end_object();
}

void write_summary_json(JsonWriter& w, const SummaryResult& r) {
  w.begin_object();
  w.field("source", r.source);
  w.field("format", r.format);
  w.field("begin_ns", r.begin_ns);
  w.field("end_ns", r.end_ns);
  w.field("span_ns", r.span_ns);
  w.key("events").begin_object();
  w.field("total", r.events);
  w.field("slices", r.slices);
  w.field("instants", r.instants);
  w.field("counters", r.counters);
  w.field("flows", r.flows);
  w.field("memory", r.memory_events);
  w.end_object();
  if (ImportAccount a = import_account(r); a.accounted) {
    // read = kept + flow_ends + unmatched + other (import_account above)
    w.key("events_read_account").begin_object();
    w.field("read", a.read);
    w.field("kept", a.kept);
    w.field("flow_ends", a.flow_ends);
    w.field("unmatched", a.unmatched);
    w.field("other", a.other);
    w.end_object();
  }
  w.key("categories").begin_object();
  for (const CategoryCount& c : r.categories) w.field(c.category, c.count);
  w.end_object();
  w.field("processes", r.processes);
  w.field("threads", r.threads);
  w.field("gpu_streams", r.gpu_streams);
  w.field("steps", r.steps);
  w.field("rank", static_cast<int64_t>(r.rank));
  w.key("devices").begin_array();
  for (const std::string& d : r.devices) w.value(d);
  w.end_array();
  w.field("dropped_events", r.dropped_events);
  write_import_stats_json(w, r.import_stats);
  if (!r.import_line.empty()) w.field("import_line", r.import_line);
  w.field("distinct_ops", r.distinct_ops);
  w.key("top_ops").begin_array();
  for (const OpStats& op : r.top_ops) write_op_stats_json(w, op);
  w.end_array();
  w.end_object();
}

std::string render_ops_text(const std::vector<OpStats>& all, uint64_t total_rows, size_t max_rows) {
  std::vector<OpStats> ops(all.begin(),
                           all.begin() + std::min(all.size(), max_rows ? max_rows : all.size()));
  TextTable t;
  t.add_column("op", TextTable::Align::kLeft);
  t.add_column("category", TextTable::Align::kLeft);
  t.add_column("calls");
  t.add_column("total");
  t.add_column("self");
  t.add_column("mean");
  t.add_column("p50");
  t.add_column("p99");
  t.add_column("max");
  t.add_column("% span");
  // Thread (CPU) time columns when the trace recorded it: the CPU time of the calls that have
  // it, and its share of their wall time (low: the op was blocked or waiting).
  bool cpu = false;
  for (const OpStats& o : ops) cpu |= o.cpu_calls > 0;
  if (cpu) {
    t.add_column("cpu");
    t.add_column("cpu/wall");
  }
  bool device =
      std::any_of(all.begin(), all.end(), [](const OpStats& o) { return o.device_self_ns >= 0; });
  if (device) {
    t.add_column("dev self");
    t.add_column("dev total");
  }
  bool replayed = std::any_of(all.begin(), all.end(),
                              [](const OpStats& o) { return o.device_replayed_ns >= 0; });
  if (replayed) t.add_column("replayed");
  for (const OpStats& o : ops) {
    std::vector<std::string> row = {o.name,
                                    o.category,
                                    std::to_string(o.count),
                                    format_duration_ns(static_cast<double>(o.total_ns)),
                                    format_duration_ns(static_cast<double>(o.self_ns)),
                                    format_duration_ns(o.mean_ns),
                                    format_duration_ns(o.p50_ns),
                                    format_duration_ns(o.p99_ns),
                                    format_duration_ns(static_cast<double>(o.max_ns)),
                                    format_percent(o.percent_of_span / 100)};
    if (cpu) {
      row.push_back(o.cpu_calls ? format_duration_ns(static_cast<double>(o.cpu_ns)) : "-");
      row.push_back(
          o.cpu_calls && o.cpu_wall_ns > 0
              ? format_percent(static_cast<double>(o.cpu_ns) / static_cast<double>(o.cpu_wall_ns))
              : "-");
    }
    if (device) {
      row.push_back(format_duration_ns(static_cast<double>(o.device_self_ns)));
      row.push_back(format_duration_ns(static_cast<double>(o.device_total_ns)));
    }
    if (replayed)
      row.push_back(o.device_replayed_ns > 0
                        ? format_duration_ns(static_cast<double>(o.device_replayed_ns))
                        : "-");
    t.add_row(std::move(row));
  }
  // Op names stay readable however many columns there are: the table goes wider instead.
  t.set_min_cut_width(40);
  std::string out = t.render(device ? 150 : 120);
  if (total_rows > ops.size())
    out += "(" + std::to_string(total_rows - ops.size()) + " more rows; --top 0 shows all)\n";
  return out;
}

}  // namespace mlprof
