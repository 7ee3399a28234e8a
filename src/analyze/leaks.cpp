#include "mlprof/analyze/leaks.h"

#include <algorithm>
#include <unordered_map>

#include "analyze/memory_order.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/stats.h"

namespace mlprof {

LeakResult analyze_leaks(const Trace& trace, const LeakOptions& options) {
  return analyze_leaks(trace, analyze_steps(trace), options);
}

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

  size_t k = 0;  // next memory event (time order)
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
      if (series[d].seen) r.devices[d].step_end_allocated.push_back(series[d].current);
  }

  for (DeviceLeak& d : r.devices) {
    const auto& y_int = d.step_end_allocated;
    if (y_int.empty()) continue;
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
    d.leak = d.test_valid && d.p_value < options.alpha && d.slope_bytes_per_step > 0 &&
             d.slope_bytes_per_step >= options.min_bytes_per_step;
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
