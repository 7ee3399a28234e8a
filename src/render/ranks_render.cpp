#include "render/ranks_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {

std::string dur(double ns) { return format_duration_ns(ns); }

// How a distribution's metric reads in the text table, and its values' format.
struct MetricLabel {
  const char* metric;
  const char* label;
  bool bytes;
};
constexpr MetricLabel kMetricLabels[] = {
    {"step_mean_ns", "step mean", false},
    {"wall_ns", "wall (steps or span)", false},
    {"span_ns", "GPU span", false},
    {"compute_ns", "compute", false},
    {"communication_ns", "communication", false},
    {"exposed_comm_ns", "exposed comm", false},
    {"idle_ns", "GPU idle", false},
    {"memory_peak_bytes", "memory peak", true},
    {"late_total_ns", "late at collectives", false},
};

std::string ns_or_dash(int64_t ns) { return ns ? dur(static_cast<double>(ns)) : "-"; }

// The set in one line, its clocks, warnings and stragglers.
std::string ranks_header_text(const RanksResult& r) {
  std::string out;
  // "7 traces of 6 ranks" when several traces claim one rank.
  if (r.distinct_ranks != r.ranks.size()) out += std::to_string(r.ranks.size()) + " traces of ";
  out += std::to_string(r.distinct_ranks) + (r.distinct_ranks == 1 ? " rank" : " ranks");
  if (r.world_size > 0) out += " (world size " + std::to_string(r.world_size) + ")";
  if (r.step_mean_ns > 0) out += ", mean step " + dur(r.step_mean_ns);
  out += ", load imbalance (max/mean step or span) " + format_fixed(r.load_imbalance, 3);
  // No GPU compute on any rank (CPU-only traces): no compute imbalance to state ("0.000").
  if (r.compute_imbalance > 0) out += ", compute imbalance " + format_fixed(r.compute_imbalance, 3);
  out += "\n";
  out += "Clocks: " + r.clock.method;
  if (r.clock.method != "none")
    out += " (reference rank " + std::to_string(r.clock.reference_rank) + ", residual " +
           dur(static_cast<double>(r.clock.residual_ns)) + ")";
  if (!r.clock.note.empty()) out += ": " + r.clock.note;
  out += "\n";
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  if (!r.stragglers.empty()) {
    out += "Stragglers:\n";
    for (const StragglerEvidence& e : r.straggler_evidence)
      out += "  rank " + std::to_string(e.rank) + ": " + e.reason + "\n";
  }

  return out;
}

// Each metric's spread over the ranks.
std::string distributions_text(const RanksResult& r, size_t width) {
  std::string out;
  if (r.ranks.size() > 1 && !r.distributions.empty()) {
    out += "\nOver ranks\n";
    TextTable d;
    d.add_column("metric", TextTable::Align::kLeft);
    for (const char* c : {"min", "p50", "p90", "p99", "max", "max/mean", "max rank"})
      d.add_column(c);
    for (const RankDistribution& x : r.distributions) {
      const MetricLabel* label = nullptr;
      for (const MetricLabel& l : kMetricLabels)
        if (x.metric == l.metric) label = &l;
      // Zero on every rank is nothing recorded (a trace without memory events read as "memory
      // peak 0 B, max rank 1"): dashes. Equal on every rank, no rank is the max.
      bool none = x.min == 0 && x.max == 0;
      auto f = [&](double v) {
        return none ? std::string("-") : label && label->bytes ? format_bytes(v) : dur(v);
      };
      d.add_row({label ? label->label : x.metric, f(x.min), f(x.p50), f(x.p90), f(x.p99), f(x.max),
                 none ? "-" : format_fixed(x.max_over_mean, 3),
                 x.min == x.max ? "-" : std::to_string(x.max_rank)});
    }
    out += d.render(width);
  }

  return out;
}

std::string rank_rows_text(const RanksResult& r, size_t width, size_t top) {
  std::string out;
  // One row per rank up to `top` ranks; beyond, the worst `top` (stragglers, then the slowest).
  std::vector<const RankStats*> shown;
  for (const RankStats& s : r.ranks) shown.push_back(&s);
  bool cut = shown.size() > top;
  if (cut) {
    std::stable_sort(shown.begin(), shown.end(), [](const RankStats* a, const RankStats* b) {
      if (a->straggler != b->straggler) return a->straggler;
      if (a->wall_ns != b->wall_ns) return a->wall_ns > b->wall_ns;
      return a->late_total_ns > b->late_total_ns;
    });
    shown.resize(top);
    out += "\nWorst " + std::to_string(top) + " of " + std::to_string(r.ranks.size()) +
           (r.distinct_ranks != r.ranks.size() ? " traces" : " ranks") +
           " (stragglers, then the slowest; --json or --csv list every rank)\n";
  } else {
    out += "\n";
  }
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
  bool calls = r.matched_calls > 0;
  if (calls) {
    t.add_column("last at");
    t.add_column("late total");
  }
  for (const RankStats* sp : shown) {
    const RankStats& s = *sp;
    // Without GPU events (a CPU-only rank) the GPU columns are dashes, not "0 ns 0.0% ... -%".
    bool gpu = s.temporal.span_ns > 0;
    auto pct = [&](double v) {
      return !gpu || std::isnan(v) ? std::string("-") : format_fixed(v, 1) + "%";
    };
    std::vector<std::string> row = {std::to_string(s.rank) + (s.straggler ? " *" : ""),
                                    std::to_string(s.steps),
                                    s.steps ? dur(s.step_mean_ns) : "-",
                                    gpu ? dur(static_cast<double>(s.temporal.span_ns)) : "-",
                                    pct(s.temporal.compute_pct),
                                    pct(s.temporal.communication_pct),
                                    pct(s.temporal.idle_pct),
                                    pct(s.comm_comp_overlap_pct),
                                    pct(s.comm_overhead_pct)};
    if (calls) {
      row.push_back(std::to_string(s.last_count) + "/" + std::to_string(s.collective_calls));
      row.push_back(ns_or_dash(s.late_total_ns));
    }
    t.add_row(row);
  }
  out += t.render(width);

  return out;
}

// The calls that waited longest for their last rank.
std::string late_calls_text(const RanksResult& r, size_t width, size_t top) {
  std::string out;
  if (!r.late_calls.empty()) {
    size_t k = std::min<size_t>(r.late_calls.size(), std::min<size_t>(top, 5));
    out += "\nLatest arrivals at collectives (" + std::to_string(k) + " of " +
           std::to_string(r.matched_calls) + " calls matched across ranks)\n";
    TextTable c;
    c.add_column("group", TextTable::Align::kLeft);
    c.add_column("seq");
    c.add_column("collective", TextTable::Align::kLeft);
    c.add_column("bytes");
    c.add_column("ranks");
    c.add_column("last rank");
    c.add_column("late by");
    c.add_column("spread");
    for (size_t i = 0; i < k; ++i) {
      const LateCall& x = r.late_calls[i];
      c.add_row({x.group.size() > 24 ? x.group.substr(0, 21) + "..." : x.group,
                 std::to_string(x.seq), x.name,
                 x.bytes ? format_bytes(static_cast<double>(x.bytes)) : "-",
                 std::to_string(x.ranks), std::to_string(x.last_rank),
                 dur(static_cast<double>(x.late_by_ns)), dur(static_cast<double>(x.spread_ns))});
    }
    out += c.render(width);
  }
  return out;
}

// Per collective over all ranks, and bandwidth by message size.
std::string collectives_text(const RanksResult& r, size_t width) {
  std::string out;
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
  if (!r.size_buckets.empty()) {
    out += "\nBandwidth by message size (a call's transfer time: its shortest kernel over ranks)\n";
    TextTable c;
    c.add_column("collective", TextTable::Align::kLeft);
    c.add_column("size from");
    c.add_column("calls");
    c.add_column("mean size");
    c.add_column("mean time");
    c.add_column("algbw GB/s");
    c.add_column("busbw GB/s");
    for (const SizeBucket& b : r.size_buckets) {
      double calls_d = static_cast<double>(b.calls);
      c.add_row({b.name, format_bytes(static_cast<double>(b.min_bytes)), std::to_string(b.calls),
                 format_bytes(static_cast<double>(b.bytes) / calls_d),
                 dur(static_cast<double>(b.time_ns) / calls_d), format_fixed(b.algbw_gbps, 2),
                 format_fixed(b.busbw_gbps, 2)});
    }
    out += c.render(width);
  }
  return out;
}

}  // namespace

std::string render_ranks_text(const RanksResult& r, size_t width, size_t rows) {
  const size_t top = rows > 0 ? rows : 10;
  std::string out = ranks_header_text(r);
  out += distributions_text(r, width);
  out += rank_rows_text(r, width, top);
  out += late_calls_text(r, width, top);
  out += collectives_text(r, width);
  for (const std::string& e : r.errors) out += "skipped: " + e + "\n";
  return out;
}

namespace {

void write_named(JsonWriter& w, const char* key, const std::vector<NamedTime>& v) {
  w.key(key).begin_array();
  for (const NamedTime& n : v) {
    w.begin_object();
    w.field("name", n.name);
    w.field("count", n.count);
    w.field("time_ns", n.time_ns);
    w.end_object();
  }
  w.end_array();
}

// One rank's row of "ranks": its steps, HTA temporal breakdown, communication and top items.
void write_rank_stats_json(JsonWriter& w, const RankStats& s) {
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
  w.field("memory_peak_bytes", s.memory_peak_bytes);
  w.field("world_size", s.world_size);
  w.field("clock_offset_ns", s.clock_offset_ns);
  w.field("collective_calls", s.collective_calls);
  w.field("last_count", s.last_count);
  w.field("late_total_ns", s.late_total_ns);
  w.field("straggler", s.straggler);
  write_named(w, "top_kernels", s.top_kernels);
  write_named(w, "top_ops", s.top_ops);
  w.end_object();
}

}  // namespace

void write_ranks_json(JsonWriter& w, const RanksResult& r) {
  w.begin_object();
  w.field("world_size", r.world_size);
  w.field("distinct_ranks", r.distinct_ranks);
  w.field("step_mean_ns", r.step_mean_ns);
  w.field("load_imbalance", r.load_imbalance);
  w.field("compute_imbalance", r.compute_imbalance);
  w.key("stragglers").begin_array();
  for (int32_t s : r.stragglers) w.value(s);
  w.end_array();
  w.key("straggler_evidence").begin_array();
  for (const StragglerEvidence& e : r.straggler_evidence) {
    w.begin_object();
    w.field("rank", e.rank);
    w.field("reason", e.reason);
    w.field("last_count", e.last_count);
    w.field("calls", e.calls);
    w.field("last_share", e.last_share);
    w.field("late_median_ns", e.late_median_ns);
    w.field("late_total_ns", e.late_total_ns);
    w.field("step_excess_pct", e.step_excess_pct);
    w.field("time_lost_ns", e.time_lost_ns);
    w.end_object();
  }
  w.end_array();
  w.key("warnings").begin_array();
  for (const std::string& s : r.warnings) w.value(s);
  w.end_array();
  w.key("clock_alignment").begin_object();
  w.field("method", r.clock.method);
  w.field("reference_rank", r.clock.reference_rank);
  w.field("residual_ns", r.clock.residual_ns);
  w.field("note", r.clock.note);
  w.end_object();
  w.key("distributions").begin_array();
  for (const RankDistribution& d : r.distributions) {
    w.begin_object();
    w.field("metric", d.metric);
    w.field("min", d.min);
    w.field("p50", d.p50);
    w.field("p90", d.p90);
    w.field("p99", d.p99);
    w.field("max", d.max);
    w.field("mean", d.mean);
    w.field("max_over_mean", d.max_over_mean);
    w.field("min_rank", d.min_rank);
    w.field("max_rank", d.max_rank);
    w.end_object();
  }
  w.end_array();
  w.field("matched_calls", r.matched_calls);
  w.key("late_calls").begin_array();
  for (const LateCall& c : r.late_calls) {
    w.begin_object();
    w.field("group", c.group);
    w.field("seq", c.seq);
    w.field("name", c.name);
    w.field("bytes", c.bytes);
    w.field("ranks", c.ranks);
    w.field("last_rank", c.last_rank);
    w.field("late_by_ns", c.late_by_ns);
    w.field("spread_ns", c.spread_ns);
    w.field("aligned_start_ns", c.aligned_start_ns);
    w.end_object();
  }
  w.end_array();
  w.key("ranks").begin_array();
  for (const RankStats& s : r.ranks) write_rank_stats_json(w, s);
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
  w.key("size_buckets").begin_array();
  for (const SizeBucket& b : r.size_buckets) {
    w.begin_object();
    w.field("name", b.name);
    w.field("min_bytes", b.min_bytes);
    w.field("calls", b.calls);
    w.field("bytes", b.bytes);
    w.field("time_ns", b.time_ns);
    w.field("group_size", b.group_size);
    w.field("algbw_gbps", b.algbw_gbps);
    w.field("busbw_gbps", b.busbw_gbps);
    w.end_object();
  }
  w.end_array();
  w.key("errors").begin_array();
  for (const std::string& e : r.errors) w.value(e);
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
