#include "mlprof/analyze/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "mlprof/analyze/steps.h"

namespace mlprof {
namespace {

bool is_step_name(std::string_view name) { return step_number(name).has_value(); }

}  // namespace

SummaryResult summarize(const Trace& t, const SummaryOptions& o) {
  SummaryResult r;
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
  // Steps: distinct ProfilerStep#N names (a step can appear on several threads).
  std::unordered_map<StringId, bool> step_names;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    StringId n = t.slices.name[i];
    auto it = step_names.find(n);
    if (it == step_names.end()) it = step_names.emplace(n, is_step_name(t.str(n))).first;
    (void)it;
  }
  for (auto& [id, is_step] : step_names) r.steps += is_step ? 1 : 0;
  for (const DeviceInfo& d : t.meta.devices) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d: %s (%d SMs, %.1f GiB, sm_%d%d)", d.id, d.name.c_str(),
                  d.num_sms, static_cast<double>(d.total_global_mem) / (1024.0 * 1024 * 1024),
                  d.compute_major, d.compute_minor);
    r.devices.push_back(buf);
  }
  OpStatsOptions oo;
  oo.category = o.category;
  std::vector<std::vector<int64_t>> durations;
  std::vector<OpStats> ops = op_stats_with_durations(t, oo, durations);
  // One row for all ProfilerStep#N (per category): hundreds of one-call rows would push the
  // real operations out of the table; `mlprof steps` shows them one by one.
  std::vector<OpStats> merged;
  std::unordered_map<std::string, size_t> step_row;                 // category -> row in merged
  std::unordered_map<size_t, std::vector<int64_t>> step_durations;  // row -> durations
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!is_step_name(ops[i].name)) {
      merged.push_back(std::move(ops[i]));
      continue;
    }
    auto [it, inserted] = step_row.try_emplace(ops[i].category, merged.size());
    if (inserted) {
      OpStats row;
      row.name = "ProfilerStep#*";
      row.category = ops[i].category;
      merged.push_back(std::move(row));
    }
    merged[it->second].self_ns += ops[i].self_ns;
    auto& d = step_durations[it->second];
    d.insert(d.end(), durations[i].begin(), durations[i].end());
  }
  for (auto& [row, d] : step_durations) {
    int64_t self_ns = merged[row].self_ns;
    fill_duration_stats(merged[row], d, r.span_ns);
    merged[row].self_ns = self_ns;
  }
  ops = std::move(merged);
  r.distinct_ops = ops.size();
  sort_op_stats(ops, o.sort);
  if (ops.size() > o.top) ops.resize(o.top);
  r.top_ops = std::move(ops);
  return r;
}

}  // namespace mlprof
