#include "mlprof/analyze/leaks.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <unordered_map>

#include "analyze/memory_order.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/stats.h"

namespace mlprof {

namespace {

// Least-squares line through (x, y)[lo, hi): residual sum of squares.
double line_sse(const std::vector<double>& y, size_t lo, size_t hi) {
  double n = static_cast<double>(hi - lo), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = lo; i < hi; ++i) {
    double x = static_cast<double>(i);
    sx += x;
    sy += y[i];
    sxx += x * x;
    sxy += x * y[i];
  }
  double mx = sx / n, my = sy / n;
  double vxx = sxx - n * mx * mx, vxy = sxy - n * mx * my;
  double b = vxx > 0 ? vxy / vxx : 0;
  double sse = 0;
  for (size_t i = lo; i < hi; ++i) {
    double r = y[i] - (my + b * (static_cast<double>(i) - mx));
    sse += r * r;
  }
  return sse;
}

struct ChangePoint {
  size_t k = 0;  // first sample of the second segment
  double p = 1;  // F test, Bonferroni-corrected
};

ChangePoint find_change_point(const std::vector<double>& y) {
  ChangePoint cp;
  const size_t n = y.size(), m = kLeakMinSegment;
  if (n < 2 * m + 1) return cp;  // the F test needs n > 5 (4 line parameters + k)
  double sse1 = line_sse(y, 0, n);
  double best = INFINITY;
  size_t tried = 0;
  for (size_t k = m; k + m <= n; ++k, ++tried) {
    double sse2 = line_sse(y, 0, k) + line_sse(y, k, n);
    // Ties (exact data) go to the later k: the first sample that is off the first line.
    if (sse2 <= best * (1 + 1e-12) + 1e-9) {
      best = sse2;
      cp.k = k;
    }
  }
  double scale = 0;
  for (double v : y) scale = std::max(scale, std::fabs(v));
  double eps = 1e-18 * scale * scale * static_cast<double>(n) + 1e-12;
  if (sse1 <= eps) return cp;  // one exact line: no change
  double d1 = 3, d2 = static_cast<double>(n) - 5;
  double p;
  if (best <= eps) {
    p = 0;
  } else {
    double f = ((sse1 - best) / d1) / (best / d2);
    p = f <= 0 ? 1 : stats::incomplete_beta(d2 / 2, d1 / 2, d2 / (d2 + d1 * f));
  }
  cp.p = std::min(1.0, p * static_cast<double>(tried));
  return cp;
}

}  // namespace

LeakResult analyze_leaks(const Trace& trace, const LeakOptions& options) {
  return analyze_leaks(trace, analyze_steps(trace), options);
}

namespace {

// One device's allocated total at each step's end: its growth, Theil-Sen slope and Mann-Kendall
// test, over the steps since a significant change point when there is one; d.leak the verdict.
void judge_device(DeviceLeak& d, const std::vector<int64_t>& step_numbers,
                  const LeakOptions& options) {
  const auto& y_int = d.step_end_allocated;
  if (y_int.empty()) return;
  std::vector<double> x(y_int.size()), y(y_int.size());
  for (size_t i = 0; i < y.size(); ++i) {
    x[i] = static_cast<double>(i);
    y[i] = static_cast<double>(y_int[i]);
  }
  d.growth_bytes = y_int.back() - y_int.front();
  if (y.size() >= 2) d.slope_bytes_per_step = stats::theil_sen_slope(x, y);
  stats::TestResult mk = stats::mann_kendall(y);
  d.test_valid = mk.valid && y.size() >= kLeakMinSteps;
  d.kendall_s = mk.statistic;
  d.kendall_z = mk.z;
  d.p_value = mk.valid ? mk.p_value : 1.0;
  d.overall_slope_bytes_per_step = d.slope_bytes_per_step;
  d.overall_p_value = d.p_value;
  const double min_rate = std::max(options.min_bytes_per_step, 1e-9);
  ChangePoint cp = find_change_point(y);
  if (cp.p < options.alpha) {
    const size_t k = cp.k;
    std::span<const double> xs(x), ys(y);
    double before = stats::theil_sen_slope(xs.first(k), ys.first(k));
    double after = stats::theil_sen_slope(xs.subspan(k), ys.subspan(k));
    bool grows_after = false;
    if (y.size() - k >= kLeakMinSteps) {
      stats::TestResult post = stats::mann_kendall(ys.subspan(k));
      grows_after = post.valid && post.p_value < options.alpha && after >= min_rate;
      if (grows_after || before >= min_rate) {
        d.kendall_s = post.statistic;
        d.kendall_z = post.z;
        d.p_value = post.valid ? post.p_value : 1.0;
        d.test_valid = post.valid;
      }
    } else {
      grows_after = d.test_valid && d.p_value < options.alpha && after >= min_rate;
    }
    if (grows_after || (before >= min_rate && after < min_rate)) {
      d.change_index = static_cast<int64_t>(k);
      d.change_p_value = cp.p;
      d.slope_before_bytes_per_step = before;
      d.slope_bytes_per_step = after;
      d.growth_start_step = k < step_numbers.size() ? step_numbers[k] : -1;
      d.plateau = !grows_after;
    }
  }
  d.leak = !d.plateau && d.test_valid && d.p_value < options.alpha && d.slope_bytes_per_step > 0 &&
           d.slope_bytes_per_step >= options.min_bytes_per_step;
}

}  // namespace

LeakResult analyze_leaks(const Trace& trace, const StepsResult& steps, const LeakOptions& options) {
  LeakResult r;
  const MemoryTable& m = trace.memory;
  r.steps = steps.steps.size();
  r.has_memory = m.size() > 0;
  r.has_stacks = r.has_memory && trace.stacks.frames_count.size() > 1;
  if (r.has_stacks && options.unfreed_by_stack) {
    // A capture of a whole program has no steps but knows who allocated each block: what
    // leaked is what was still allocated at exit, by stack (the heap analysis' leak table).
    HeapOptions ho;
    ho.top = options.top_stacks;
    HeapResult heap = analyze_heap(trace, ho);
    r.unfreed_bytes = heap.leaked_bytes;
    r.unfreed_blocks = heap.leaked_blocks;
    r.unfreed_stack_count = heap.leak_stacks;
    r.unfreed_stacks = std::move(heap.leaks);
  }
  if (!r.has_memory || steps.steps.empty()) return r;

  std::vector<uint32_t> order = analyze_detail::memory_time_order(trace);
  std::vector<int64_t> totals = analyze_detail::allocated_totals(trace, order);
  std::vector<uint8_t> freed = analyze_detail::pair_allocations(trace, order);

  // Boundary samples: per device, the allocated total after the last event at or before each
  // step's end (a step with no earlier event on that device gives no sample).
  std::unordered_map<int32_t, size_t> dev_index;
  struct Series {
    int64_t current = 0;
    bool seen = false;
  };
  std::vector<Series> series;
  for (uint32_t i : order) {
    int32_t key = analyze_detail::device_key(m.device_type[i], m.device_id[i]);
    if (dev_index.emplace(key, r.devices.size()).second) {
      DeviceLeak d;
      d.device = memory_device_label(m.device_type[i], m.device_id[i]);
      r.devices.push_back(std::move(d));
      series.emplace_back();
    }
  }

  std::unordered_map<int64_t, size_t> op_index;
  struct OpAcc {
    SurvivingOp row;
    size_t last_step = SIZE_MAX;
  };
  std::vector<OpAcc> ops;

  std::vector<std::vector<int64_t>> dev_steps(r.devices.size());  // step number per sample
  size_t k = 0;                                                   // next memory event (time order)
  for (size_t s = 0; s < steps.steps.size(); ++s) {
    const StepInfo& st = steps.steps[s];
    int64_t end = st.begin_ns + st.dur_ns;
    for (; k < order.size() && m.ts[order[k]] <= end; ++k) {
      uint32_t i = order[k];
      Series& ser = series[dev_index[analyze_detail::device_key(m.device_type[i], m.device_id[i])]];
      ser.current = totals[i];
      ser.seen = true;
      if (m.bytes[i] > 0 && !freed[i] && m.addr[i] != 0 && m.ts[i] >= st.begin_ns) {
        int32_t slice = m.slice[i];
        int64_t key =
            slice < 0 ? -1 : static_cast<int64_t>(trace.slices.name[static_cast<size_t>(slice)]);
        auto [it, inserted] = op_index.emplace(key, ops.size());
        if (inserted) {
          OpAcc acc;
          acc.row.op = slice < 0
                           ? "(no op)"
                           : std::string(trace.str(trace.slices.name[static_cast<size_t>(slice)]));
          std::vector<std::string_view> chain;
          for (int32_t q = slice; q >= 0; q = trace.slices.parent[static_cast<size_t>(q)]) {
            std::string_view n = trace.str(trace.slices.name[static_cast<size_t>(q)]);
            // Python frames (with_stack) would bury the ops and annotations: leave them out.
            if (!step_number(n) &&
                trace.str(trace.slices.cat[static_cast<size_t>(q)]) != "python_function")
              chain.push_back(n);
          }
          for (size_t c = chain.size(); c-- > 0;) {
            if (!acc.row.context.empty()) acc.row.context += " > ";
            acc.row.context += chain[c];
          }
          ops.push_back(std::move(acc));
        }
        OpAcc& acc = ops[it->second];
        ++acc.row.count;
        acc.row.bytes += m.bytes[i];
        if (acc.last_step != s) {
          ++acc.row.steps;
          acc.last_step = s;
        }
      }
    }
    for (size_t d = 0; d < r.devices.size(); ++d)
      if (series[d].seen) {
        r.devices[d].step_end_allocated.push_back(series[d].current);
        dev_steps[d].push_back(st.number);
      }
  }

  for (size_t di = 0; di < r.devices.size(); ++di) {
    DeviceLeak& d = r.devices[di];
    judge_device(d, dev_steps[di], options);
    r.leak = r.leak || d.leak;
  }

  std::vector<SurvivingOp> rows;
  rows.reserve(ops.size());
  for (OpAcc& a : ops) rows.push_back(std::move(a.row));
  std::sort(rows.begin(), rows.end(), [](const SurvivingOp& a, const SurvivingOp& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
  });
  if (rows.size() > options.top_ops) rows.resize(options.top_ops);
  r.surviving_ops = std::move(rows);
  return r;
}

}  // namespace mlprof
