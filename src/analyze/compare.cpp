#include "mlprof/analyze/compare.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <unordered_map>

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

// Per (name, category) durations of one side (host or GPU) of a trace.
struct Group {
  std::string name, category;
  std::string key;  // compare_match_key(name) + '\x1f' + category
  std::vector<double> durations;
  int64_t total_ns = 0;
};

struct Side {
  std::vector<Group> groups;
  std::unordered_map<std::string, size_t> index;  // compare_match_key(name) + '\x1f' + category
};

void collect(const Trace& t, bool gpu, Side& side) {
  const SliceTable& s = t.slices;
  std::unordered_map<uint64_t, size_t> by_ids;
  StringId annotation = t.strings.find("gpu_user_annotation");
  StringId whole_trace = t.strings.find(kProfilerSpanCategory);
  // Step markers have one name per step; the step-time comparison covers them.
  std::vector<int8_t> is_step(t.strings.size(), -1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i]) != gpu) continue;
    if ((gpu && s.cat[i] == annotation) || s.cat[i] == whole_trace) continue;
    int8_t& st = is_step[s.name[i]];
    if (st < 0) st = step_number(t.str(s.name[i])) ? 1 : 0;
    if (st == 1) continue;
    uint64_t ids = (static_cast<uint64_t>(s.name[i]) << 32) | s.cat[i];
    auto [it, inserted] = by_ids.emplace(ids, 0);
    if (inserted) {
      // Names differing only in run-specific tokens share a group (the first name is shown).
      std::string_view name = t.str(s.name[i]), category = t.str(s.cat[i]);
      std::string key = compare_match_key(name) + '\x1f' + std::string(category);
      auto [k, new_group] = side.index.emplace(std::move(key), side.groups.size());
      if (new_group) {
        Group g;
        g.name = std::string(name);
        g.category = std::string(category);
        g.key = k->first;
        side.groups.push_back(std::move(g));
      }
      it->second = k->second;
    }
    Group& g = side.groups[it->second];
    g.durations.push_back(static_cast<double>(s.dur[i]));
    g.total_ns += s.dur[i];
  }
}

TraceTotals totals_of(const Trace& t) {
  TraceTotals r;
  r.source = t.meta.source;
  r.span_ns = t.span_ns();
  StepsResult st = analyze_steps(t);
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

std::vector<double> step_durations(const Trace& t) {
  std::vector<double> d;
  for (const StepInfo& s : analyze_steps(t).steps) d.push_back(static_cast<double>(s.dur_ns));
  return d;
}

double test_p(const std::vector<double>& a, const std::vector<double>& b, SignificanceTest test) {
  stats::TestResult r =
      test == SignificanceTest::kWelch ? stats::welch_t_test(a, b) : stats::mann_whitney_u(a, b);
  return r.valid ? r.p_value : 1.0;
}

void diff_side(const Side& base, const Side& next, int64_t base_span, int64_t new_span,
               const CompareOptions& o, std::vector<OpDiff>& out, CompareResult& r) {
  auto share = [](int64_t total, int64_t span) {
    return span > 0 ? 100.0 * static_cast<double>(total) / static_cast<double>(span) : 0.0;
  };
  auto fill = [&](OpDiff& d, const Group* b, const Group* n) {
    if (b) {
      d.base_count = b->durations.size();
      d.base_total_ns = b->total_ns;
      d.base_mean_ns = static_cast<double>(b->total_ns) / static_cast<double>(d.base_count);
    }
    if (n) {
      d.new_count = n->durations.size();
      d.new_total_ns = n->total_ns;
      d.new_mean_ns = static_cast<double>(n->total_ns) / static_cast<double>(d.new_count);
    }
    d.delta_total_ns = d.new_total_ns - d.base_total_ns;
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
    bool matters = share(d.base_total_ns, base_span) >= o.min_share_pct ||
                   share(d.new_total_ns, new_span) >= o.min_share_pct;
    bool big = std::fabs(d.delta_mean_pct) >= o.min_effect_pct;
    if (!matters)
      d.verdict = DiffVerdict::kMinor;
    else if (!big)
      d.verdict = DiffVerdict::kUnchanged;
    else if (!d.significant)
      d.verdict = DiffVerdict::kNoise;
    else
      d.verdict = d.delta_mean_pct > 0 ? DiffVerdict::kRegression : DiffVerdict::kImprovement;
  };
  for (const Group& b : base.groups) {
    OpDiff d;
    d.name = b.name;
    d.category = b.category;
    auto it = next.index.find(b.key);
    fill(d, &b, it == next.index.end() ? nullptr : &next.groups[it->second]);
    out.push_back(std::move(d));
  }
  for (const Group& n : next.groups) {
    if (base.index.count(n.key)) continue;
    OpDiff d;
    d.name = n.name;
    d.category = n.category;
    fill(d, nullptr, &n);
    out.push_back(std::move(d));
  }
  for (const OpDiff& d : out) {
    if (d.verdict == DiffVerdict::kRegression) {
      ++r.regressions;
      if (d.delta_mean_pct > r.worst_regression_pct) {
        r.worst_regression_pct = d.delta_mean_pct;
        r.worst_regression = d.name;
      }
    } else if (d.verdict == DiffVerdict::kImprovement) {
      ++r.improvements;
    } else if (d.verdict == DiffVerdict::kNoise) {
      ++r.noise;
    }
  }
  std::sort(out.begin(), out.end(), [](const OpDiff& a, const OpDiff& b) {
    int64_t da = std::llabs(a.delta_total_ns), db = std::llabs(b.delta_total_ns);
    return da != db ? da > db : a.name < b.name;
  });
}

void keep_top(std::vector<OpDiff>& rows, size_t top) {
  if (top > 0 && rows.size() > top) rows.resize(top);
}

}  // namespace

CompareResult compare_traces(const Trace& base, const Trace& next, const CompareOptions& o) {
  CompareResult r;
  r.base = totals_of(base);
  r.next = totals_of(next);
  if (r.base.steps > 0 && r.next.steps > 0 && r.next.step_mean_ns > 0) {
    r.speedup_basis = "step mean";
    r.overall_speedup = r.base.step_mean_ns / r.next.step_mean_ns;
    r.step_delta_pct = (r.next.step_mean_ns - r.base.step_mean_ns) / r.base.step_mean_ns * 100;
    r.step_p_value = test_p(step_durations(base), step_durations(next), o.test);
    r.step_regression = r.step_p_value < o.alpha && r.step_delta_pct >= o.min_effect_pct;
  } else {
    r.speedup_basis = "span";
    r.overall_speedup = r.next.span_ns > 0 ? static_cast<double>(r.base.span_ns) /
                                                 static_cast<double>(r.next.span_ns)
                                           : 0;
  }
  if (r.base.peak_memory_bytes >= 0 && r.next.peak_memory_bytes >= 0)
    r.peak_memory_delta = r.next.peak_memory_bytes - r.base.peak_memory_bytes;
  for (bool gpu : {false, true}) {
    Side b, n;
    collect(base, gpu, b);
    collect(next, gpu, n);
    diff_side(b, n, r.base.span_ns, r.next.span_ns, o, gpu ? r.kernels : r.ops, r);
  }
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
      Side side;
      collect(*traces[k], gpu, side);
      for (const Group& g : side.groups) {
        auto [it, inserted] = index.emplace(g.key, r.rows.size());
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
