#include <iostream>

#include "cli/command.h"
#include "mlprof/analyze/op_stats.h"
#include "mlprof/render/summary_render.h"
#include "mlprof/text_table.h"

namespace mlprof::cli {
namespace {

struct OpsArgs {
  std::string path;
  bool json = false;
  size_t top = 50;
  std::string sort = "total";
  std::string category;
  bool host_only = false;
};

std::string render_ops_text(const std::vector<OpStats>& ops, size_t total_rows) {
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
  for (const OpStats& o : ops)
    t.add_row({o.name, o.category, std::to_string(o.count),
               format_duration_ns(static_cast<double>(o.total_ns)),
               format_duration_ns(static_cast<double>(o.self_ns)), format_duration_ns(o.mean_ns),
               format_duration_ns(o.p50_ns), format_duration_ns(o.p99_ns),
               format_duration_ns(static_cast<double>(o.max_ns)),
               format_percent(o.percent_of_span / 100)});
  std::string out = t.render(120);
  if (total_rows > ops.size())
    out += "(" + std::to_string(total_rows - ops.size()) + " more rows; --top 0 shows all)\n";
  return out;
}

MLPROF_REGISTER_COMMAND(
    "ops", "Per-operation table: calls, total, self, mean, percentiles, share of the span",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<OpsArgs>();
      sub.add_option("path", a->path, "trace file (.json, .json.gz, .mlprof)")->required();
      sub.add_flag("--json", a->json, "machine-readable output");
      sub.add_option("--top", a->top, "rows shown (0 = all)");
      sub.add_option("--sort", a->sort, "sort by total|self|mean|count")
          ->check(CLI::IsMember({"total", "self", "mean", "count"}));
      sub.add_option("--category", a->category, "only this category (cpu_op, kernel, ...)");
      sub.add_flag("--host-only", a->host_only, "leave out GPU kernels, memcpys and memsets");
      return [a]() {
        auto trace = load_or_report(a->path);
        if (!trace) return kExitBadInput;
        OpStatsOptions o;
        o.category = a->category;
        o.include_gpu = !a->host_only;
        std::vector<OpStats> ops = op_stats(*trace, o);
        sort_op_stats(ops, a->sort == "self"    ? OpSort::kSelf
                           : a->sort == "mean"  ? OpSort::kMean
                           : a->sort == "count" ? OpSort::kCount
                                                : OpSort::kTotal);
        size_t total_rows = ops.size();
        if (a->top > 0 && ops.size() > a->top) ops.resize(a->top);
        if (a->json) {
          JsonWriter w(true);
          w.begin_object();
          w.field("rows", static_cast<uint64_t>(total_rows));
          w.key("ops").begin_array();
          for (const OpStats& op : ops) write_op_stats_json(w, op);
          w.end_array();
          w.end_object();
          std::cout << w.str() << "\n";
        } else {
          std::cout << render_ops_text(ops, total_rows);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace mlprof::cli
