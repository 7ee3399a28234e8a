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

void diff_table(std::string& out, const std::vector<OpDiff>& all, const char* title, size_t width,
                size_t top) {
  if (all.empty()) return;
  size_t shown = top > 0 ? std::min(top, all.size()) : all.size();
  std::vector<OpDiff> rows(all.begin(), all.begin() + static_cast<ptrdiff_t>(shown));
  out += std::string("\n") + title + "\n";
  TextTable t;
  t.add_column("name", TextTable::Align::kLeft);
  t.add_column("base total");
  t.add_column("new total");
  t.add_column("delta");
  t.add_column("base mean");
  t.add_column("new mean");
  t.add_column("mean %");
  t.add_column("speedup");
  t.add_column("p");
  t.add_column("verdict", TextTable::Align::kLeft);
  for (const OpDiff& d : rows) {
    bool both = d.base_count > 0 && d.new_count > 0;
    t.add_row({d.name, format_duration_ns(static_cast<double>(d.base_total_ns)),
               format_duration_ns(static_cast<double>(d.new_total_ns)),
               signed_duration(static_cast<double>(d.delta_total_ns)),
               d.base_count ? format_duration_ns(d.base_mean_ns) : "-",
               d.new_count ? format_duration_ns(d.new_mean_ns) : "-",
               both ? fmt("%+.1f%%", d.delta_mean_pct) : "-", both ? fmt("%.2fx", d.speedup) : "-",
               both ? fmt("%.2g", d.p_value) : "-", std::string(diff_verdict_name(d.verdict))});
  }
  // Names need room beside nine numeric columns.
  out += t.render(std::max<size_t>(width, 150));
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
    out +=
        "; worst: " + short_name(r.worst_regression) + " " + fmt("%+.1f%%", r.worst_regression_pct);
  out += "\n";
  diff_table(out, r.ops, "Host ops (by |total delta|):", width, top);
  diff_table(out, r.python, "Python functions (by |total delta|):", width, top);
  diff_table(out, r.kernels, "GPU kernels (by |total delta|):", width, top);
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
  w.field("worst_regression", r.worst_regression);
  w.field("worst_regression_pct", r.worst_regression_pct);
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
