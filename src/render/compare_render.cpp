#include "render/compare_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/text_table.h"
#include "trace/units.h"

namespace mlprof {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Templated kernel names run to hundreds of characters: keep both ends.
std::string short_name(const std::string& s) {
  return s.size() <= 80 ? s : s.substr(0, 50) + "..." + s.substr(s.size() - 27);
}

std::string signed_duration(double ns) { return (ns > 0 ? "+" : "") + format_duration_ns(ns); }

std::string calls_text(double v) {
  return fmt(v >= 100 || v == std::floor(v) ? "%.0f" : "%.3g", v);
}

std::string verdict_text(const OpDiff& d) {
  std::string v(diff_verdict_name(d.verdict));
  if (!d.cause.empty()) v += " (" + d.cause + ")";
  return d.wait && d.verdict != DiffVerdict::kMinor && d.verdict != DiffVerdict::kUnchanged
             ? v + ", a wait"
             : v;
}

// Where the step change comes from: the causes on the critical path, then the waits.
void attribution_text(std::string& out, const CompareResult& r, size_t width) {
  if (!r.attribution_missing.empty()) {
    out += "\nNo attribution of the step change: " + r.attribution_missing + "\n";
    return;
  }
  out += "\nWhere the change comes from: time on the critical path per step (" +
         std::to_string(r.base_path_steps) + " -> " + std::to_string(r.new_path_steps) +
         " steps measured), " + format_duration_ns(r.base_path_ns) + " -> " +
         format_duration_ns(r.new_path_ns) + " (" +
         signed_duration(r.new_path_ns - r.base_path_ns) + ")\n";
  if (r.causes.empty()) return;
  TextTable t;
  t.add_column("cause", TextTable::Align::kLeft);
  t.add_column("kind", TextTable::Align::kLeft);
  t.add_column("on path/step");
  t.add_column("delta");
  t.add_column("of step change");
  for (const CompareCause& c : r.causes)
    t.add_row({c.name, c.wait ? c.kind + " (a wait)" : c.kind,
               format_duration_ns(c.base_ns) + " -> " + format_duration_ns(c.new_ns),
               signed_duration(c.delta_ns), c.share_pct != 0 ? fmt("%+.1f%%", c.share_pct) : "-"});
  out += t.render(std::max<size_t>(width, 150));
}

void symptoms_text(std::string& out, const CompareResult& r) {
  if (r.symptoms.empty()) return;
  out += "\nWaits (symptoms: their time is the GPU work they wait for):\n";
  for (const CompareSymptom& s : r.symptoms) {
    out += "  " + short_name(s.name) + " " + signed_duration(s.delta_per_step_ns) + " per step";
    if (s.waits_for.empty()) {
      out += ": no GPU row moved the same way\n";
      continue;
    }
    out += ", waits for: ";
    for (size_t i = 0; i < s.waits_for.size(); ++i)
      out += (i ? ", " : "") + short_name(s.waits_for[i]);
    out += "\n";
  }
}

// The headline: the largest causes, not the waits.
std::string headline_causes(const CompareResult& r) {
  std::string out;
  size_t n = 0;
  double step_delta = r.next.step_mean_ns - r.base.step_mean_ns;
  for (const CompareCause& c : r.causes) {
    if (c.wait || n == 3 || c.delta_ns == 0) continue;
    if (r.speedup_basis == "step mean" && (c.delta_ns > 0) != (step_delta > 0)) continue;
    out += (n++ ? ", " : "") + short_name(c.name) + " " + signed_duration(c.delta_ns);
  }
  return out;
}

// One row per op: what it costs a step and why that moved (more calls, or slower calls).
void diff_table(std::string& out, const std::vector<OpDiff>& all, const char* title, size_t width,
                size_t top) {
  if (all.empty()) return;
  size_t shown = top > 0 ? std::min(top, all.size()) : all.size();
  std::vector<OpDiff> rows(all.begin(), all.begin() + static_cast<ptrdiff_t>(shown));
  out += std::string("\n") + title + "\n";
  TextTable t;
  t.add_column("name", TextTable::Align::kLeft);
  t.add_column("calls/step");
  t.add_column("mean/call");
  t.add_column("time/step");
  t.add_column("delta");
  t.add_column("from calls");
  t.add_column("from mean");
  t.add_column("p calls");
  t.add_column("p mean");
  t.add_column("verdict", TextTable::Align::kLeft);
  auto side = [](bool has, const std::string& v) { return has ? v : std::string("-"); };
  for (const OpDiff& d : rows) {
    bool b = d.base_count > 0, n = d.new_count > 0, both = b && n;
    t.add_row(
        {d.name,
         side(b, calls_text(d.base_calls_per_step)) + " -> " +
             side(n, calls_text(d.new_calls_per_step)),
         side(b, format_duration_ns(d.base_mean_ns)) + " -> " +
             side(n, format_duration_ns(d.new_mean_ns)),
         side(b, format_duration_ns(d.base_per_step_ns)) + " -> " +
             side(n, format_duration_ns(d.new_per_step_ns)),
         signed_duration(d.delta_per_step_ns), both ? signed_duration(d.calls_effect_ns) : "-",
         both ? signed_duration(d.mean_effect_ns) : "-", both ? fmt("%.2g", d.calls_p_value) : "-",
         both ? fmt("%.2g", d.p_value) : "-", verdict_text(d)});
  }
  // Names need room beside nine numeric columns.
  out += t.render(std::max<size_t>(width, 170));
  if (shown < all.size())
    out += "(" + std::to_string(all.size() - shown) + " more rows: --top 0 or --json)\n";
}

void write_totals(JsonWriter& w, const TraceTotals& t) {
  w.begin_object();
  w.field("source", t.source);
  w.field("span_ns", t.span_ns);
  w.field("steps", t.steps);
  w.field("step_mean_ns", t.step_mean_ns);
  w.field("step_median_ns", t.step_median_ns);
  w.field("peak_memory_bytes", t.peak_memory_bytes);
  w.field("gpu_kernel_ns", t.gpu_kernel_ns);
  w.end_object();
}

void write_diffs(JsonWriter& w, const std::vector<OpDiff>& rows) {
  w.begin_array();
  for (const OpDiff& d : rows) {
    w.begin_object();
    w.field("name", d.name);
    w.field("category", d.category);
    w.field("base_count", d.base_count);
    w.field("new_count", d.new_count);
    w.field("base_total_ns", d.base_total_ns);
    w.field("new_total_ns", d.new_total_ns);
    w.field("base_mean_ns", d.base_mean_ns);
    w.field("new_mean_ns", d.new_mean_ns);
    w.field("delta_total_ns", d.delta_total_ns);
    w.field("delta_mean_pct", d.delta_mean_pct);
    w.field("speedup", d.speedup);
    w.field("p_value", d.p_value);
    w.field("significant", d.significant);
    w.field("base_calls_per_step", d.base_calls_per_step);
    w.field("new_calls_per_step", d.new_calls_per_step);
    w.field("base_per_step_ns", d.base_per_step_ns);
    w.field("new_per_step_ns", d.new_per_step_ns);
    w.field("delta_per_step_ns", d.delta_per_step_ns);
    w.field("delta_per_step_pct", d.delta_per_step_pct);
    w.field("calls_effect_ns", d.calls_effect_ns);
    w.field("mean_effect_ns", d.mean_effect_ns);
    w.field("calls_change_pct", d.calls_change_pct);
    w.field("calls_p_value", d.calls_p_value);
    w.field("calls_significant", d.calls_significant);
    w.field("cause", d.cause);
    w.field("wait", d.wait);
    w.field("verdict", diff_verdict_name(d.verdict));
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string render_compare_text(const CompareResult& r, size_t width, size_t top) {
  std::string out;
  out += "base: " + r.base.source + "\nnew:  " + r.next.source + "\n";
  out += "overall speedup " + fmt("%.3fx", r.overall_speedup) + " (" + r.speedup_basis + ")";
  if (r.base.steps && r.next.steps)
    out += "; step mean " + format_duration_ns(r.base.step_mean_ns) + " -> " +
           format_duration_ns(r.next.step_mean_ns) + " (" + fmt("%+.1f%%", r.step_delta_pct) +
           ", p = " + fmt("%.2g", r.step_p_value) + ")";
  out += "\n";
  if (r.base.peak_memory_bytes >= 0 && r.next.peak_memory_bytes >= 0)
    out += "peak memory " + format_bytes(static_cast<double>(r.base.peak_memory_bytes)) + " -> " +
           format_bytes(static_cast<double>(r.next.peak_memory_bytes)) + " (" +
           (r.peak_memory_delta >= 0 ? "+" : "") +
           format_bytes(static_cast<double>(r.peak_memory_delta)) + ")\n";
  out += std::to_string(r.regressions) + " significant regressions, " +
         std::to_string(r.improvements) + " significant improvements, " + std::to_string(r.noise) +
         " changes within noise";
  if (!r.worst_regression.empty())
    out += "; worst: " + short_name(r.worst_regression) + " " +
           fmt("%+.1f%%", r.worst_regression_pct) + " per step";
  out += "\n";
  if (std::string causes = headline_causes(r); !causes.empty())
    out += "causes (critical path per step): " + causes + "\n";
  attribution_text(out, r, width);
  symptoms_text(out, r);
  std::string per = r.per_step_basis == "step"
                        ? "per step, " + std::to_string(r.base.steps) + " -> " +
                              std::to_string(r.next.steps) + " steps"
                        : "per trace: a trace has no steps";
  out += "\nRows: " + per +
         "; delta = from calls (more or fewer calls at the base mean) + from mean (the new "
         "calls' change per call)\n";
  diff_table(out, r.ops, "Host ops (by |delta per step|):", width, top);
  diff_table(out, r.python, "Python functions (by |delta per step|):", width, top);
  diff_table(out, r.kernels, "GPU kernels (by |delta per step|):", width, top);
  return out;
}

void write_compare_json(JsonWriter& w, const CompareResult& r) {
  w.begin_object();
  w.key("base");
  write_totals(w, r.base);
  w.key("new");
  write_totals(w, r.next);
  w.field("overall_speedup", r.overall_speedup);
  w.field("speedup_basis", r.speedup_basis);
  w.field("step_delta_pct", r.step_delta_pct);
  w.field("step_p_value", r.step_p_value);
  w.field("step_regression", r.step_regression);
  w.field("peak_memory_delta", r.peak_memory_delta);
  w.field("regressions", r.regressions);
  w.field("improvements", r.improvements);
  w.field("noise", r.noise);
  w.field("per_step_basis", r.per_step_basis);
  w.field("worst_regression", r.worst_regression);
  w.field("worst_regression_pct", r.worst_regression_pct);
  w.key("attribution").begin_object();
  if (!r.attribution_missing.empty()) {
    w.field("unavailable", r.attribution_missing);
  } else {
    w.field("base_path_steps", r.base_path_steps);
    w.field("new_path_steps", r.new_path_steps);
    w.field("base_path_ns", r.base_path_ns);
    w.field("new_path_ns", r.new_path_ns);
  }
  w.key("causes").begin_array();
  for (const CompareCause& c : r.causes) {
    w.begin_object();
    w.field("name", c.name);
    w.field("category", c.category);
    w.field("kind", c.kind);
    w.field("base_ns", c.base_ns);
    w.field("new_ns", c.new_ns);
    w.field("delta_ns", c.delta_ns);
    w.field("share_pct", c.share_pct);
    w.field("wait", c.wait);
    w.end_object();
  }
  w.end_array();
  w.key("symptoms").begin_array();
  for (const CompareSymptom& y : r.symptoms) {
    w.begin_object();
    w.field("name", y.name);
    w.field("category", y.category);
    w.field("delta_per_step_ns", y.delta_per_step_ns);
    w.key("waits_for").begin_array();
    for (const std::string& k : y.waits_for) w.value(k);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.key("ops");
  write_diffs(w, r.ops);
  w.key("python_functions");
  write_diffs(w, r.python);
  w.key("kernels");
  write_diffs(w, r.kernels);
  w.end_object();
}

std::string render_multi_compare_text(const MultiCompareResult& r, size_t width, size_t top) {
  std::string out;
  for (size_t k = 0; k < r.sources.size(); ++k)
    out += "[" + std::to_string(k) + "] " + r.sources[k] + "\n";
  TextTable t;
  t.add_column("name", TextTable::Align::kLeft);
  for (size_t k = 0; k < r.sources.size(); ++k) t.add_column("[" + std::to_string(k) + "] total");
  for (size_t k = 1; k < r.sources.size(); ++k) t.add_column("[" + std::to_string(k) + "]/[0]");
  size_t shown = top > 0 ? std::min(top, r.rows.size()) : r.rows.size();
  for (size_t i = 0; i < shown; ++i) {
    const MultiRow& row = r.rows[i];
    std::vector<std::string> cells{row.name};
    for (size_t k = 0; k < row.total_ns.size(); ++k)
      cells.push_back(row.count[k] ? format_duration_ns(static_cast<double>(row.total_ns[k]))
                                   : "-");
    for (size_t k = 1; k < row.total_ns.size(); ++k)
      cells.push_back(row.count[k] && row.count[0]
                          ? fmt("%.2fx", static_cast<double>(row.total_ns[k]) /
                                             static_cast<double>(row.total_ns[0]))
                          : "-");
    t.add_row(std::move(cells));
  }
  out += t.render(width);
  if (shown < r.rows.size())
    out += "(" + std::to_string(r.rows.size() - shown) + " more rows: --top 0 or --json)\n";
  for (const CompareResult& p : r.pairs) out += "\n" + render_compare_text(p, width, top);
  return out;
}

void write_multi_compare_json(JsonWriter& w, const MultiCompareResult& r) {
  w.begin_object();
  w.key("sources").begin_array();
  for (const std::string& s : r.sources) w.value(s);
  w.end_array();
  w.key("rows").begin_array();
  for (const MultiRow& row : r.rows) {
    w.begin_object();
    w.field("name", row.name);
    w.field("category", row.category);
    w.key("count").begin_array();
    for (uint64_t c : row.count) w.value(c);
    w.end_array();
    w.key("total_ns").begin_array();
    for (int64_t c : row.total_ns) w.value(c);
    w.end_array();
    w.key("mean_ns").begin_array();
    for (double c : row.mean_ns) w.value(c);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("pairs").begin_array();
  for (const CompareResult& p : r.pairs) write_compare_json(w, p);
  w.end_array();
  w.end_object();
}

}  // namespace mlprof
