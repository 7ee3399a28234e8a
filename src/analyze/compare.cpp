#include "mlprof/analyze/compare.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <unordered_map>

#include "analyze/iteration_markers.h"
#include "analyze/name_rules.h"
#include "mlprof/analyze/critical_path.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/stats.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {

std::string_view diff_verdict_name(DiffVerdict v) {
  switch (v) {
    case DiffVerdict::kUnchanged:
      return "unchanged";
    case DiffVerdict::kRegression:
      return "regression";
    case DiffVerdict::kImprovement:
      return "improvement";
    case DiffVerdict::kNoise:
      return "noise";
    case DiffVerdict::kAdded:
      return "added";
    case DiffVerdict::kRemoved:
      return "removed";
    case DiffVerdict::kMinor:
      return "minor";
  }
  return "unchanged";
}

namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the run of characters from `i` satisfying `pred`.
template <class Pred>
size_t run_length(std::string_view s, size_t i, Pred pred) {
  size_t j = i;
  while (j < s.size() && pred(s[j])) ++j;
  return j - i;
}

constexpr size_t kMinAddressDigits = 6;  // addresses of a 64-bit process are above 0x400000

}  // namespace

std::string compare_match_key(std::string_view name) {
  static constexpr std::string_view kIpykernel = "ipykernel_", kIpythonInput = "<ipython-input-";
  std::string key;
  key.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (name[i] == '0' && i + 1 < name.size() && (name[i + 1] == 'x' || name[i + 1] == 'X') &&
        (i == 0 || !is_hex(name[i - 1]))) {
      size_t n = run_length(name, i + 2, is_hex);
      if (n >= kMinAddressDigits) {
        key += "0x*";
        i += 2 + n;
        continue;
      }
    }
    if (name.substr(i, kIpykernel.size()) == kIpykernel) {
      size_t n = run_length(name, i + kIpykernel.size(), is_digit);
      if (n > 0) {
        key += "ipykernel_*";
        i += kIpykernel.size() + n;
        continue;
      }
    }
    if (name.substr(i, kIpythonInput.size()) == kIpythonInput) {
      size_t j = i + kIpythonInput.size();
      size_t n = run_length(name, j, is_digit);
      if (n > 0 && j + n < name.size() && name[j + n] == '-') {
        key += "<ipython-input-*-";
        i = j + n + 1;
        continue;
      }
    }
    key += name[i++];
  }
  return key;
}

namespace {

std::string row_key(std::string_view name, std::string_view category) {
  return compare_match_key(name) + '\x1f' + std::string(category);
}

using Group = CompareGroup;

// Per (name, category) durations of one side (host or GPU) of a trace.
struct Side {
  const std::vector<Group>& groups;
  std::unordered_map<std::string, size_t> index;  // row_key(name, category)
  explicit Side(const std::vector<Group>& g) : groups(g) {
    for (size_t i = 0; i < groups.size(); ++i)
      index.emplace(row_key(groups[i].name, groups[i].category), i);
  }
};

void collect(const Trace& t, bool gpu, const std::string& step_annotation,
             std::vector<Group>& groups) {
  std::unordered_map<std::string, size_t> index;
  const SliceTable& s = t.slices;
  std::unordered_map<uint64_t, size_t> by_ids;
  StringId annotation = t.strings.find("gpu_user_annotation");
  StringId whole_trace = t.strings.find(kProfilerSpanCategory);
  // Iteration markers (the step model's: ProfilerStep#N, vLLM/SGLang iterations,
  // --step-annotation) often have one name per iteration; the step-time comparison covers them.
  IterationMarkerNames markers(t, step_annotation);
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i]) != gpu) continue;
    if ((gpu && s.cat[i] == annotation) || s.cat[i] == whole_trace) continue;
    if (markers.is_marker(s.name[i])) continue;
    uint64_t ids = (static_cast<uint64_t>(s.name[i]) << 32) | s.cat[i];
    auto [it, inserted] = by_ids.emplace(ids, 0);
    if (inserted) {
      // Names differing only in run-specific tokens share a group (the first name is shown).
      std::string_view name = t.str(s.name[i]), category = t.str(s.cat[i]);
      auto [k, new_group] = index.emplace(row_key(name, category), groups.size());
      if (new_group) {
        Group g;
        g.name = std::string(name);
        g.category = std::string(category);
        groups.push_back(std::move(g));
      }
      it->second = k->second;
    }
    Group& g = groups[it->second];
    g.durations.push_back(static_cast<double>(s.dur[i]));
    g.total_ns += s.dur[i];
    ++g.count;
  }
}

TraceTotals totals_of(const Trace& t, const StepsOptions& so) {
  TraceTotals r;
  r.source = t.meta.source;
  r.span_ns = t.span_ns();
  StepsResult st = analyze_steps(t, so);
  r.steps = st.steps.size();
  r.step_mean_ns = st.mean_ns;
  r.step_median_ns = st.median_ns;
  if (t.memory.size() > 0) {
    std::vector<int64_t> totals = memory_allocated_totals(t);
    r.peak_memory_bytes = *std::max_element(totals.begin(), totals.end());
  }
  for (size_t i = 0; i < t.slices.size(); ++i)
    if (t.is_gpu_track(t.slices.track[i])) r.gpu_kernel_ns += t.slices.dur[i];
  return r;
}

std::vector<double> step_durations(const Trace& t, const StepsOptions& so) {
  std::vector<double> d;
  for (const StepInfo& s : analyze_steps(t, so).steps) d.push_back(static_cast<double>(s.dur_ns));
  return d;
}

double test_p(const std::vector<double>& a, const std::vector<double>& b, SignificanceTest test) {
  stats::TestResult r =
      test == SignificanceTest::kWelch ? stats::welch_t_test(a, b) : stats::mann_whitney_u(a, b);
  return r.valid ? r.p_value : 1.0;
}

// A wait: its time is the device work it waits for. Host sync calls (CUDA, HIP), Kineto's
// cuda_sync events, and aten::item / aten::_local_scalar_dense (a device-to-host read).
bool is_wait(std::string_view name, std::string_view category) {
  if (category == "cuda_sync") return true;
  return analyze_detail::is_host_sync_call_name(name) ||
         analyze_detail::is_device_read_op_name(name);
}

// Per step (both traces have steps) or per trace: what a row costs each step, and why it moved.
struct Exposure {
  double base = 1, next = 1;
};

void judge(OpDiff& d, const Group* b, const Group* n, const Exposure& e, int64_t base_span,
           int64_t new_span, const CompareOptions& o) {
  auto share = [](int64_t total, int64_t span) {
    return span > 0 ? 100.0 * static_cast<double>(total) / static_cast<double>(span) : 0.0;
  };
  if (b) {
    d.base_count = b->count;
    d.base_total_ns = b->total_ns;
    d.base_mean_ns = static_cast<double>(b->total_ns) / static_cast<double>(d.base_count);
  }
  if (n) {
    d.new_count = n->count;
    d.new_total_ns = n->total_ns;
    d.new_mean_ns = static_cast<double>(n->total_ns) / static_cast<double>(d.new_count);
  }
  d.delta_total_ns = d.new_total_ns - d.base_total_ns;
  d.base_calls_per_step = static_cast<double>(d.base_count) / e.base;
  d.new_calls_per_step = static_cast<double>(d.new_count) / e.next;
  d.base_per_step_ns = static_cast<double>(d.base_total_ns) / e.base;
  d.new_per_step_ns = static_cast<double>(d.new_total_ns) / e.next;
  d.delta_per_step_ns = d.new_per_step_ns - d.base_per_step_ns;
  if (!b) {
    d.verdict = DiffVerdict::kAdded;
    return;
  }
  if (!n) {
    d.verdict = DiffVerdict::kRemoved;
    return;
  }
  d.delta_mean_pct =
      d.base_mean_ns > 0 ? (d.new_mean_ns - d.base_mean_ns) / d.base_mean_ns * 100 : 0;
  d.speedup = d.new_mean_ns > 0 ? d.base_mean_ns / d.new_mean_ns : 0;
  d.p_value = test_p(b->durations, n->durations, o.test);
  d.significant = d.p_value < o.alpha;
  d.delta_per_step_pct =
      d.base_per_step_ns > 0 ? d.delta_per_step_ns / d.base_per_step_ns * 100 : 0;
  d.calls_effect_ns = (d.new_calls_per_step - d.base_calls_per_step) * d.base_mean_ns;
  d.mean_effect_ns = d.new_calls_per_step * (d.new_mean_ns - d.base_mean_ns);
  d.calls_change_pct = (d.new_calls_per_step - d.base_calls_per_step) / d.base_calls_per_step * 100;
  stats::TestResult calls = stats::poisson_rate_test(d.base_count, e.base, d.new_count, e.next);
  d.calls_p_value = calls.valid ? calls.p_value : 1.0;
  d.calls_significant = d.calls_p_value < o.alpha;
  bool matters = share(d.base_total_ns, base_span) >= o.min_share_pct ||
                 share(d.new_total_ns, new_span) >= o.min_share_pct;
  if (!matters) {
    d.verdict = DiffVerdict::kMinor;
    return;
  }
  if (std::fabs(d.delta_per_step_pct) < o.min_effect_pct) {
    d.verdict = DiffVerdict::kUnchanged;
    return;
  }
  // A cause counts when it is significant, big enough on its own, and moves the time the way
  // the row's time moved.
  bool up = d.delta_per_step_ns > 0;
  bool by_calls = d.calls_significant && std::fabs(d.calls_change_pct) >= o.min_effect_pct &&
                  (d.calls_effect_ns > 0) == up;
  bool by_mean = d.significant && std::fabs(d.delta_mean_pct) >= o.min_effect_pct &&
                 (d.mean_effect_ns > 0) == up;
  if (!by_calls && !by_mean) {
    d.verdict = DiffVerdict::kNoise;
    return;
  }
  d.cause = by_calls && by_mean ? "calls+mean" : by_calls ? "calls" : "mean";
  d.verdict = up ? DiffVerdict::kRegression : DiffVerdict::kImprovement;
}

void diff_side(const Side& base, const Side& next, const Exposure& e, int64_t base_span,
               int64_t new_span, const CompareOptions& o, bool waits, std::vector<OpDiff>& out,
               CompareResult& r) {
  for (const Group& b : base.groups) {
    OpDiff d;
    d.name = b.name;
    d.category = b.category;
    auto it = next.index.find(row_key(b.name, b.category));
    judge(d, &b, it == next.index.end() ? nullptr : &next.groups[it->second], e, base_span,
          new_span, o);
    out.push_back(std::move(d));
  }
  for (const Group& n : next.groups) {
    if (base.index.count(row_key(n.name, n.category))) continue;
    OpDiff d;
    d.name = n.name;
    d.category = n.category;
    judge(d, nullptr, &n, e, base_span, new_span, o);
    out.push_back(std::move(d));
  }
  // Waits only mean something where there is a device to wait for.
  if (waits)
    for (OpDiff& d : out) d.wait = is_wait(d.name, d.category);
  for (const OpDiff& d : out) {
    if (d.verdict == DiffVerdict::kRegression) {
      ++r.regressions;
      if (d.delta_per_step_pct > r.worst_regression_pct) {
        r.worst_regression_pct = d.delta_per_step_pct;
        r.worst_regression = d.name;
      }
    } else if (d.verdict == DiffVerdict::kImprovement) {
      ++r.improvements;
    } else if (d.verdict == DiffVerdict::kNoise) {
      ++r.noise;
    }
  }
  std::sort(out.begin(), out.end(), [](const OpDiff& a, const OpDiff& b) {
    double da = std::fabs(a.delta_per_step_ns), db = std::fabs(b.delta_per_step_ns);
    return da != db ? da > db : a.name < b.name;
  });
}

// Mean time per step on the critical path of each row, over at most kComparePathSteps steps
// spread evenly over the trace (the whole trace as one window when it has no steps).
void path_times(const Trace& t, CompareSummary& sum, const std::string& step_annotation) {
  sum.path_measured = true;
  std::string& missing = sum.path_missing;
  std::vector<ComparePathRow>& rows = sum.path_rows;
  std::unordered_map<std::string, size_t> index;
  std::vector<CriticalPathOptions> windows;
  StepMarkers markers = step_markers(t, step_annotation);
  const std::vector<size_t>& steps = markers.slices;
  if (steps.empty()) {
    CriticalPathOptions o;
    o.annotation = "";
    windows.push_back(o);
  } else {
    size_t n = std::min(steps.size(), kComparePathSteps);
    for (size_t k = 0; k < n; ++k) {
      CriticalPathOptions o;
      o.step = markers.numbers[k * steps.size() / n];
      o.step_annotation = step_annotation;
      windows.push_back(o);
    }
  }
  for (CriticalPathOptions& o : windows) {
    o.top = 0;
    if (auto why = critical_path_unavailable(t, o)) {
      missing = *why;
      return;
    }
    CriticalPathResult cp = analyze_critical_path(t, o);
    if (!cp.message.empty()) {
      missing = cp.message;
      return;
    }
    ++sum.path_windows;
    sum.path_ns += static_cast<double>(cp.path_ns);
    for (const CriticalPathStep& e : cp.path) {
      std::string name = e.event, kind;
      if (e.bound_by == "gpu_kernel_launch_overhead") {
        name = "(launch delay)";
        kind = "launch delay";
      } else if (e.bound_by == "gpu_kernel_kernel_overhead") {
        name = "(kernel-kernel gap)";
        kind = "kernel gap";
      } else if (e.bound_by == "gpu_communication_bound") {
        kind = "communication";
      } else if (e.bound_by == "gpu_compute_bound") {
        kind = "gpu";
      } else {
        kind = "host";
        if (name.empty()) name = "(host gap)";
      }
      auto [it, fresh] = index.emplace(row_key(name, e.category), rows.size());
      if (fresh) rows.push_back({name, e.category, kind, 0});
      rows[it->second].ns += static_cast<double>(e.ns);
    }
  }
  if (sum.path_windows == 0) {
    missing = "no window to analyze";
    return;
  }
  double w = static_cast<double>(sum.path_windows);
  sum.path_ns /= w;
  for (ComparePathRow& row : rows) row.ns /= w;
}

// The step change split over the rows of both traces' critical paths.
void attribute(const CompareSummary& b, const CompareSummary& n, CompareResult& r) {
  if (!b.path_missing.empty()) {
    r.attribution_missing = "base: " + b.path_missing;
    return;
  }
  if (!n.path_missing.empty()) {
    r.attribution_missing = "new: " + n.path_missing;
    return;
  }
  r.base_path_steps = b.path_windows;
  r.new_path_steps = n.path_windows;
  r.base_path_ns = b.path_ns;
  r.new_path_ns = n.path_ns;
  double step_delta = r.speedup_basis == "step mean"
                          ? r.next.step_mean_ns - r.base.step_mean_ns
                          : static_cast<double>(r.next.span_ns - r.base.span_ns);
  auto cause_of = [&](const ComparePathRow& row) {
    CompareCause c;
    c.name = row.name;
    c.category = row.category;
    c.kind = row.kind;
    c.wait = is_wait(row.name, row.category);
    return c;
  };
  std::vector<CompareCause> all;
  std::unordered_map<std::string, size_t> index;
  for (const ComparePathRow& row : b.path_rows) {
    index.emplace(row_key(row.name, row.category), all.size());
    all.push_back(cause_of(row));
    all.back().base_ns = row.ns;
  }
  for (const ComparePathRow& row : n.path_rows) {
    auto [it, fresh] = index.emplace(row_key(row.name, row.category), all.size());
    if (fresh) all.push_back(cause_of(row));
    all[it->second].new_ns = row.ns;
  }
  for (CompareCause& c : all) {
    c.delta_ns = c.new_ns - c.base_ns;
    c.share_pct = step_delta != 0 ? c.delta_ns / step_delta * 100 : 0;
  }
  std::sort(all.begin(), all.end(), [](const CompareCause& x, const CompareCause& y) {
    double dx = std::fabs(x.delta_ns), dy = std::fabs(y.delta_ns);
    return dx != dy ? dx > dy : x.name < y.name;
  });
  if (all.size() > kCompareCauses) all.resize(kCompareCauses);
  r.causes = std::move(all);
}

// Wait rows that moved, each with the GPU rows that moved the same way (what it waited for).
void link_symptoms(CompareResult& r) {
  auto moved = [](const OpDiff& d) {
    return d.verdict == DiffVerdict::kRegression || d.verdict == DiffVerdict::kImprovement ||
           d.verdict == DiffVerdict::kNoise;
  };
  for (const std::vector<OpDiff>* rows : {&r.ops, &r.kernels}) {
    for (const OpDiff& d : *rows) {
      if (!d.wait || !moved(d)) continue;
      CompareSymptom s;
      s.name = d.name;
      s.category = d.category;
      s.delta_per_step_ns = d.delta_per_step_ns;
      for (const OpDiff& k : r.kernels) {  // sorted by |delta per step|
        if (s.waits_for.size() == 3) break;
        if (k.wait ||
            (k.verdict != DiffVerdict::kRegression && k.verdict != DiffVerdict::kImprovement &&
             k.verdict != DiffVerdict::kAdded && k.verdict != DiffVerdict::kRemoved))
          continue;
        if ((k.delta_per_step_ns > 0) == (d.delta_per_step_ns > 0)) s.waits_for.push_back(k.name);
      }
      r.symptoms.push_back(std::move(s));
    }
  }
  std::sort(r.symptoms.begin(), r.symptoms.end(),
            [](const CompareSymptom& x, const CompareSymptom& y) {
              return std::fabs(x.delta_per_step_ns) > std::fabs(y.delta_per_step_ns);
            });
}

void keep_top(std::vector<OpDiff>& rows, size_t top) {
  if (top > 0 && rows.size() > top) rows.resize(top);
}

}  // namespace

CompareSummary compare_summary(const Trace& t, bool attribute, const std::string& step_annotation) {
  CompareSummary s;
  StepsOptions so;
  so.step_annotation = step_annotation;
  s.totals = totals_of(t, so);
  s.step_durations = step_durations(t, so);
  collect(t, false, step_annotation, s.host);
  collect(t, true, step_annotation, s.gpu);
  if (attribute) path_times(t, s, step_annotation);
  return s;
}

CompareResult compare_traces(const Trace& base, const Trace& next, const CompareOptions& o) {
  return compare_summaries(compare_summary(base, o.attribute, o.step_annotation),
                           compare_summary(next, o.attribute, o.step_annotation), o);
}

CompareResult compare_summaries(const CompareSummary& base, const CompareSummary& next,
                                const CompareOptions& o) {
  CompareResult r;
  r.base = base.totals;
  r.next = next.totals;
  if (r.base.steps > 0 && r.next.steps > 0 && r.next.step_mean_ns > 0) {
    r.speedup_basis = "step mean";
    r.overall_speedup = r.base.step_mean_ns / r.next.step_mean_ns;
    r.step_delta_pct = (r.next.step_mean_ns - r.base.step_mean_ns) / r.base.step_mean_ns * 100;
    r.step_p_value = test_p(base.step_durations, next.step_durations, o.test);
    r.step_regression = r.step_p_value < o.alpha && r.step_delta_pct >= o.min_effect_pct;
  } else {
    r.speedup_basis = "span";
    r.overall_speedup = r.next.span_ns > 0 ? static_cast<double>(r.base.span_ns) /
                                                 static_cast<double>(r.next.span_ns)
                                           : 0;
  }
  if (r.base.peak_memory_bytes >= 0 && r.next.peak_memory_bytes >= 0)
    r.peak_memory_delta = r.next.peak_memory_bytes - r.base.peak_memory_bytes;
  Exposure e;
  r.per_step_basis = "trace";
  if (r.base.steps > 0 && r.next.steps > 0) {
    r.per_step_basis = "step";
    e.base = static_cast<double>(r.base.steps);
    e.next = static_cast<double>(r.next.steps);
  }
  bool device = r.base.gpu_kernel_ns > 0 || r.next.gpu_kernel_ns > 0;
  for (bool gpu : {false, true}) {
    Side b(gpu ? base.gpu : base.host), n(gpu ? next.gpu : next.host);
    diff_side(b, n, e, r.base.span_ns, r.next.span_ns, o, device, gpu ? r.kernels : r.ops, r);
  }
  if (o.attribute && base.path_measured && next.path_measured) attribute(base, next, r);
  link_symptoms(r);
  if (!o.python_with_ops) {
    auto python = std::stable_partition(r.ops.begin(), r.ops.end(), [](const OpDiff& d) {
      return d.category != "python_function";
    });
    r.python.assign(std::make_move_iterator(python), std::make_move_iterator(r.ops.end()));
    r.ops.erase(python, r.ops.end());
  }
  keep_top(r.ops, o.top);
  keep_top(r.python, o.top);
  keep_top(r.kernels, o.top);
  if (r.step_regression && r.step_delta_pct > r.worst_regression_pct) {
    r.worst_regression_pct = r.step_delta_pct;
    r.worst_regression = "(step time)";
  }
  return r;
}

MultiCompareResult compare_many(const std::vector<const Trace*>& traces, const CompareOptions& o) {
  MultiCompareResult r;
  const size_t n = traces.size();
  for (const Trace* t : traces) r.sources.push_back(t->meta.source);
  for (size_t k = 1; k < n; ++k) r.pairs.push_back(compare_traces(*traces[0], *traces[k], o));
  std::unordered_map<std::string, size_t> index;
  for (size_t k = 0; k < n; ++k) {
    for (bool gpu : {false, true}) {
      std::vector<Group> groups;
      collect(*traces[k], gpu, o.step_annotation, groups);
      for (const Group& g : groups) {
        auto [it, inserted] = index.emplace(row_key(g.name, g.category), r.rows.size());
        if (inserted) {
          MultiRow row;
          row.name = g.name;
          row.category = g.category;
          row.count.assign(n, 0);
          row.total_ns.assign(n, 0);
          row.mean_ns.assign(n, 0);
          r.rows.push_back(std::move(row));
        }
        MultiRow& row = r.rows[it->second];
        row.count[k] = g.durations.size();
        row.total_ns[k] = g.total_ns;
        row.mean_ns[k] = static_cast<double>(g.total_ns) / static_cast<double>(g.durations.size());
      }
    }
  }
  std::sort(r.rows.begin(), r.rows.end(), [](const MultiRow& a, const MultiRow& b) {
    return a.total_ns[0] != b.total_ns[0] ? a.total_ns[0] > b.total_ns[0] : a.name < b.name;
  });
  if (o.top > 0 && r.rows.size() > o.top) r.rows.resize(o.top);
  return r;
}

}  // namespace mlprof
