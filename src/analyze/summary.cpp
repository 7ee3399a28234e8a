#include "mlprof/analyze/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "analyze/op_rows.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {
namespace {

bool is_step_name(std::string_view name) { return step_number(name).has_value(); }

// What the trace holds: its span, events by kind and category, processes, threads, GPU streams,
// steps, devices, and the importer's line.
void add_trace_counts(const Trace& t, SummaryResult& r) {
  r.source = t.meta.source;
  r.format = t.meta.format;
  r.begin_ns = t.begin_ns();
  r.end_ns = t.end_ns();
  r.span_ns = t.span_ns();
  r.slices = t.slices.size();
  r.instants = t.instants.size();
  r.counters = t.counters.size();
  r.flows = t.flows.size();
  r.memory_events = t.memory.size();
  r.events = t.event_count();
  r.rank = t.meta.rank;
  r.dropped_events = t.meta.dropped_events;
  r.import_stats = t.meta.import_stats;
  for (const auto& [key, value] : t.meta.extra) {
    // "mlprofImport": a JSON string the importer wrote (no escapes but \" and \\ in it).
    if (key != "mlprofImport" || value.size() < 2 || value.front() != '"') continue;
    for (size_t i = 1; i + 1 < value.size(); ++i) {
      if (value[i] == '\\' && i + 2 < value.size()) ++i;
      r.import_line += value[i];
    }
  }

  std::unordered_map<StringId, uint64_t> per_cat;
  for (StringId c : t.slices.cat) ++per_cat[c];
  for (StringId c : t.instants.cat) ++per_cat[c];
  for (auto& [cat, n] : per_cat) r.categories.push_back(CategoryCount{std::string(t.str(cat)), n});
  if (!t.memory.ts.empty()) r.categories.push_back(CategoryCount{"[memory]", t.memory.size()});
  if (!t.counters.ts.empty()) r.categories.push_back(CategoryCount{"[counter]", t.counters.size()});
  if (!t.flows.id.empty()) r.categories.push_back(CategoryCount{"[flow]", t.flows.size()});
  std::sort(r.categories.begin(), r.categories.end(), [](const auto& a, const auto& b) {
    return a.count != b.count ? a.count > b.count : a.category < b.category;
  });

  r.processes = t.processes.size();
  for (const Track& tr : t.tracks) {
    if (tr.kind == TrackKind::kGpuStream)
      ++r.gpu_streams;
    else if (tr.kind == TrackKind::kThread)
      ++r.threads;
  }
  // Steps as the step model counts them (`mlprof steps`, the report's step charts): ProfilerStep#N,
  // else vLLM's or SGLang's iteration annotations (issue 27: one number for "steps" everywhere).
  r.steps = step_markers(t).slices.size();
  for (const DeviceInfo& d : t.meta.devices) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d: %s (%d SMs, %.1f GiB, sm_%d%d)", d.id, d.name.c_str(),
                  d.num_sms, static_cast<double>(d.total_global_mem) / (1024.0 * 1024 * 1024),
                  d.compute_major, d.compute_minor);
    r.devices.push_back(buf);
  }
}

// The top operations by o.sort, ProfilerStep#N of a category in one row.
void add_top_ops(const Trace& t, const SummaryOptions& o, SummaryResult& r) {
  OpStatsOptions oo;
  oo.category = o.category;
  OpRows rows = op_rows(t, oo);
  // The table's rows in op_stats' order (total, then name), with one row for all
  // ProfilerStep#N of a category: hundreds of one-call rows would push the real operations out
  // of the table; `mlprof steps` shows them one by one. Sort keys come from the rows' sums, so
  // only the `top` rows kept get their statistics (a trace of 1e6 names made 1e6 OpStats).
  struct Row {
    uint32_t row;       // a row of `rows`, or the step group when `step`
    bool step = false;  // ProfilerStep#* of one category
    std::string_view name;
    double key = 0;
  };
  struct StepGroup {
    StringId category;
    std::vector<uint32_t> rows;  // in table order
    uint64_t count = 0;
    int64_t self_ns = 0;
    long double sum = 0;
  };
  std::vector<StepGroup> groups;
  std::vector<Row> table;
  for (uint32_t k : rows.by_total(t)) {
    std::string_view name = t.str(rows.name[k]);
    if (!is_step_name(name)) {
      table.push_back(Row{k, false, name});
      continue;
    }
    size_t g = 0;
    while (g < groups.size() && groups[g].category != rows.category[k]) ++g;
    if (g == groups.size()) {
      groups.push_back(StepGroup{rows.category[k], {}});
      table.push_back(Row{static_cast<uint32_t>(g), true, "ProfilerStep#*"});
    }
    groups[g].rows.push_back(k);
    groups[g].count += rows.count[k];
    groups[g].self_ns += rows.self_ns[k];
    groups[g].sum += rows.total_ns[k];
  }
  auto step_durations = [&](const StepGroup& g) {
    std::vector<int64_t> d;
    d.reserve(g.count);
    for (uint32_t k : g.rows)
      d.insert(d.end(), rows.durations.begin() + static_cast<std::ptrdiff_t>(rows.offset[k]),
               rows.durations.begin() + static_cast<std::ptrdiff_t>(rows.offset[k + 1]));
    return d;
  };
  // The sort key sort_op_stats would read from the row's OpStats.
  for (Row& row : table) {
    uint64_t count = row.step ? groups[row.row].count : rows.count[row.row];
    long double sum = row.step ? groups[row.row].sum : rows.total_ns[row.row];
    switch (o.sort) {
      case OpSort::kTotal:
        row.key = static_cast<double>(static_cast<int64_t>(sum));
        break;
      case OpSort::kSelf:
        row.key = static_cast<double>(row.step ? groups[row.row].self_ns : rows.self_ns[row.row]);
        break;
      case OpSort::kMean:
        row.key = count ? static_cast<double>(sum / count) : 0;
        break;
      case OpSort::kCount:
        row.key = static_cast<double>(count);
        break;
      case OpSort::kDeviceSelf:
      case OpSort::kDeviceTotal:
        row.key = -1;  // summary rows carry no device time
        break;
    }
  }
  r.distinct_ops = table.size();
  std::stable_sort(table.begin(), table.end(), [](const Row& a, const Row& b) {
    if (a.key != b.key) return a.key > b.key;
    return a.name < b.name;
  });
  if (table.size() > o.top) table.resize(o.top);
  for (const Row& row : table) {
    if (!row.step) {
      r.top_ops.push_back(rows.stats(t, row.row));
      continue;
    }
    const StepGroup& g = groups[row.row];
    OpStats op;
    op.name = "ProfilerStep#*";
    op.category = std::string(t.str(g.category));
    std::vector<int64_t> d = step_durations(g);
    fill_duration_stats(op, d, r.span_ns);
    op.self_ns = g.self_ns;
    r.top_ops.push_back(std::move(op));
  }
}

}  // namespace

SummaryResult summarize(const Trace& t, const SummaryOptions& o) {
  SummaryResult r;
  add_trace_counts(t, r);
  add_top_ops(t, o, r);
  return r;
}

}  // namespace mlprof
