#include "mlprof/render/ranks_render.h"

#include <cmath>
#include <cstdio>

#include "mlprof/text_table.h"

namespace mlprof {

namespace {

std::string dur(double ns) { return format_duration_ns(ns); }

}  // namespace

std::string render_ranks_text(const RanksResult& r, size_t width) {
  std::string out;
  out += std::to_string(r.ranks.size()) + " ranks";
  if (r.step_mean_ns > 0) out += ", mean step " + dur(r.step_mean_ns);
  out += ", load imbalance (max/mean step or span) " + format_fixed(r.load_imbalance, 3) +
         ", compute imbalance " + format_fixed(r.compute_imbalance, 3) + "\n";
  if (!r.stragglers.empty()) {
    out += "Stragglers:";
    for (int32_t s : r.stragglers) out += " " + std::to_string(s);
    out += "\n";
  }
  out += "\n";
  TextTable t;
  t.add_column("rank", TextTable::Align::kLeft);
  t.add_column("steps");
  t.add_column("step mean");
  t.add_column("GPU span");
  t.add_column("compute");
  t.add_column("comm");
  t.add_column("idle");
  t.add_column("overlap");
  t.add_column("exposed comm");
  for (const RankStats& s : r.ranks) {
    t.add_row({std::to_string(s.rank) + (s.straggler ? " *" : ""), std::to_string(s.steps),
               s.steps ? dur(s.step_mean_ns) : "-", dur(static_cast<double>(s.temporal.span_ns)),
               format_fixed(s.temporal.compute_pct, 1) + "%",
               format_fixed(s.temporal.communication_pct, 1) + "%",
               format_fixed(s.temporal.idle_pct, 1) + "%",
               format_fixed(s.comm_comp_overlap_pct, 1) + "%",
               format_fixed(s.comm_overhead_pct, 1) + "%"});
  }
  out += t.render(width);
  if (!r.collectives.empty()) {
    out += "\nCollectives (all ranks)\n";
    TextTable c;
    c.add_column("collective", TextTable::Align::kLeft);
    c.add_column("dtype", TextTable::Align::kLeft);
    c.add_column("count");
    c.add_column("bytes");
    c.add_column("time");
    c.add_column("algbw GB/s");
    c.add_column("busbw GB/s");
    for (const CollectiveStats& s : r.collectives) {
      c.add_row({s.name, s.dtype, std::to_string(s.count),
                 s.bytes ? format_bytes(static_cast<double>(s.bytes)) : "-",
                 dur(static_cast<double>(s.time_ns)), s.bytes ? format_fixed(s.algbw_gbps, 2) : "-",
                 s.bytes ? format_fixed(s.busbw_gbps, 2) : "-"});
    }
    out += c.render(width);
  }
  for (const std::string& e : r.errors) out += "skipped: " + e + "\n";
  return out;
}

void write_ranks_json(JsonWriter& w, const RanksResult& r) {
  w.begin_object();
  w.field("step_mean_ns", r.step_mean_ns);
  w.field("load_imbalance", r.load_imbalance);
  w.field("compute_imbalance", r.compute_imbalance);
  w.key("stragglers").begin_array();
  for (int32_t s : r.stragglers) w.value(s);
  w.end_array();
  w.key("ranks").begin_array();
  for (const RankStats& s : r.ranks) {
    w.begin_object();
    w.field("rank", s.rank);
    w.field("source", s.source);
    w.field("steps", s.steps);
    w.field("step_mean_ns", s.step_mean_ns);
    w.field("step_max_ns", s.step_max_ns);
    w.field("wall_ns", s.wall_ns);
    w.field("span_ns", s.temporal.span_ns);
    w.field("idle_ns", s.temporal.idle_ns);
    w.field("compute_ns", s.temporal.compute_ns);
    w.field("non_compute_ns", s.temporal.non_compute_ns);
    w.field("communication_ns", s.temporal.communication_ns);
    w.field("idle_pct", s.temporal.idle_pct);
    w.field("compute_pct", s.temporal.compute_pct);
    w.field("non_compute_pct", s.temporal.non_compute_pct);
    w.field("communication_pct", s.temporal.communication_pct);
    w.field("comm_comp_overlap_pct", s.comm_comp_overlap_pct);
    w.field("exposed_comm_ns", s.exposed_comm_ns);
    w.field("comm_overhead_pct", s.comm_overhead_pct);
    w.field("straggler", s.straggler);
    w.end_object();
  }
  w.end_array();
  w.key("collectives").begin_array();
  for (const CollectiveStats& c : r.collectives) {
    w.begin_object();
    w.field("name", c.name);
    w.field("dtype", c.dtype);
    w.field("count", c.count);
    w.field("bytes", c.bytes);
    w.field("time_ns", c.time_ns);
    w.field("group_size", c.group_size);
    w.field("algbw_gbps", c.algbw_gbps);
    w.field("busbw_gbps", c.busbw_gbps);
    w.end_object();
  }
  w.end_array();
  w.key("errors").begin_array();
  for (const std::string& e : r.errors) w.value(e);
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
