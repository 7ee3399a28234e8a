#include "mlprof/analyze/roofline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/step_lookup.h"
#include "analyze/trace_memo.h"
#include "mlprof/analysis_set.h"
#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/gpu_events.h"

namespace mlprof {

namespace {

// Roofline of one call (or a sum of them).
struct Point {
  double roofline_ns = 0;
  bool compute_bound = false;
  bool above_compute = false, above_bw = false;
  double peak_tflops = 0;
};

double peak_for(const DevicePeaks& p, const PerfEstimate& e, double achieved_tflops,
                std::string* note) {
  bool matrix = perf_estimate_uses_matrix_units(e);
  double peak = peak_tflops(p, e.dtype, matrix);
  // fp32 matrix work: PyTorch runs fp32 convolutions on TF32 tensor cores by default
  // (torch.backends.cudnn.allow_tf32) and matmuls when allowed; a rate above the fp32 peak
  // that TF32 explains is TF32.
  if (matrix && e.dtype == "fp32" && p.tf32 > peak &&
      (e.family == PerfFamily::kConv || achieved_tflops > peak)) {
    peak = p.tf32;
    if (note) *note = "tf32";
  }
  return peak;
}

Point point(const DevicePeaks& p, const PerfEstimate& e, int64_t kernel_ns) {
  Point r;
  double t = static_cast<double>(kernel_ns);
  double achieved = t > 0 ? e.flops / t / 1e3 : 0;  // TFLOP/s (1 FLOP/ns = 1e-3 TFLOP/s)
  r.peak_tflops = peak_for(p, e, achieved, nullptr);
  double compute_ns = r.peak_tflops > 0 ? e.flops / (r.peak_tflops * 1e3) : 0;
  double memory_ns = p.mem_gbs > 0 ? e.bytes / p.mem_gbs : 0;  // GB/s = bytes/ns
  r.compute_bound = compute_ns >= memory_ns;
  r.roofline_ns = std::max(compute_ns, memory_ns);
  r.above_compute = compute_ns > t;
  r.above_bw = !r.above_compute && memory_ns > t;
  return r;
}

struct Group {
  RooflineRow row;
  double compute_ns = 0, memory_ns = 0;  // roofline time of compute- and memory-bound calls
  int64_t point_ns = 0;                  // kernel time of the calls that are roofline points
  bool mixed_dtype = false, mixed_family = false, mixed_peak = false;
};

void add(Group& g, const PerfEstimate& e, int64_t kernel_ns, const Point* pt, uint64_t calls = 1) {
  RooflineRow& r = g.row;
  if (r.calls == 0) {
    r.dtype = e.dtype;
    r.family = std::string(perf_family_name(e.family));
    if (pt) r.peak_tflops = pt->peak_tflops;
  } else {
    if (r.dtype != e.dtype) g.mixed_dtype = true;
    if (r.family != perf_family_name(e.family)) g.mixed_family = true;
    if (pt && r.peak_tflops != pt->peak_tflops) g.mixed_peak = true;
  }
  r.calls += calls;
  r.kernel_ns += kernel_ns;
  r.flops += e.flops;
  r.bytes += e.bytes;
  if (!pt) return;
  if (pt->above_compute) {
    ++r.above_compute_peak;
    return;  // not a roofline point: left out of roofline and wasted time
  }
  // A call faster than DRAM allows ran at least at its roofline: nothing wasted.
  double rt = pt->above_bw ? static_cast<double>(kernel_ns) : pt->roofline_ns;
  if (pt->above_bw) ++r.above_bandwidth;
  (pt->compute_bound ? g.compute_ns : g.memory_ns) += rt;
  r.roofline_ns += static_cast<int64_t>(rt);
  g.point_ns += kernel_ns;
}

RooflineRow finish(Group& g, const DevicePeaks* p) {
  RooflineRow r = std::move(g.row);
  if (g.mixed_dtype) r.dtype.clear();
  if (g.mixed_family) r.family.clear();
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  double t = static_cast<double>(r.kernel_ns);
  r.achieved_tflops = t > 0 ? r.flops / t / 1e3 : 0;
  r.achieved_tbps = t > 0 ? r.bytes / t / 1e3 : 0;  // bytes/ns = GB/s; /1e3 = TB/s
  if (p == nullptr) {
    r.peak_tflops = 0;
    return r;
  }
  if (g.mixed_peak || g.mixed_dtype) r.peak_tflops = 0;
  if (r.peak_tflops > 0)
    r.attainable_tflops = std::min(r.peak_tflops, r.intensity * p->mem_gbs / 1e3);
  // Over the calls that are roofline points (not those above the compute peak).
  r.roofline_pct = g.point_ns > 0 ? static_cast<double>(r.roofline_ns) / g.point_ns : NAN;
  r.wasted_ns = std::max<int64_t>(0, g.point_ns - r.roofline_ns);
  r.bound = g.compute_ns == 0 && g.memory_ns == 0 ? ""
            : g.compute_ns >= g.memory_ns         ? "compute"
                                                  : "memory";
  return r;
}

std::vector<RooflineRow> sorted_rows(std::map<std::string, Group>& groups, const DevicePeaks* p,
                                     size_t top) {
  std::vector<RooflineRow> rows;
  rows.reserve(groups.size());
  for (auto& [k, g] : groups) rows.push_back(finish(g, p));
  std::sort(rows.begin(), rows.end(), [](const RooflineRow& a, const RooflineRow& b) {
    if (a.wasted_ns != b.wasted_ns) return a.wasted_ns > b.wasted_ns;
    if (a.kernel_ns != b.kernel_ns) return a.kernel_ns > b.kernel_ns;
    return std::tie(a.name, a.shapes) < std::tie(b.name, b.shapes);
  });
  if (top > 0 && rows.size() > top) rows.resize(top);
  return rows;
}

// The device and its peaks: options.device, else the trace's first named device; its peaks from
// --peaks or the table, with a warning when there are none or a --peaks row reads as sparse.
void set_device_peaks(const Trace& trace, const RooflineOptions& options, RooflineResult& r) {
  r.device = options.device;
  if (r.device.empty())
    for (const DeviceInfo& d : trace.meta.devices)
      if (!d.name.empty()) {
        r.device = d.name;
        break;
      }
  if (auto p = find_device_peaks(r.device, options.peaks)) {
    r.peaks = *p;
    r.peaks_known = true;
    // A --peaks row twice the datasheet's dense figure is a with-sparsity figure.
    if (auto table = find_device_peaks(r.device)) {
      if (p->source != table->source && table->bf16 > 0 && p->bf16 >= 1.9 * table->bf16)
        r.warnings.push_back("the peaks row \"" + p->name + "\" gives bf16 " +
                             std::to_string(static_cast<int64_t>(p->bf16)) +
                             " TFLOP/s, about twice the dense datasheet figure " +
                             std::to_string(static_cast<int64_t>(table->bf16)) + " (" +
                             table->source + "): a with-sparsity figure is not a peak");
    }
  } else {
    r.warnings.push_back(r.device.empty()
                             ? "the trace names no device: pass --device NAME or --peaks FILE"
                             : "no peak figures for \"" + r.device +
                                   "\": pass --peaks FILE (docs/roofline.md)");
  }
}

struct Groups {
  std::map<std::string, Group> by_shape, by_op, by_family, by_kernel, by_module;
};

// The innermost nn.Module slice of slice i, -1 none (memo: -2 not known yet).
int32_t module_of(const Trace& trace, std::vector<int32_t>& module_memo, int32_t i) {
  const SliceTable& s = trace.slices;
  std::vector<int32_t> path;
  int32_t q = i, found = -1;
  while (q >= 0) {
    int32_t& m = module_memo[static_cast<size_t>(q)];
    if (m != -2) {
      found = m;
      break;
    }
    if (trace.str(s.name[static_cast<size_t>(q)]).starts_with("nn.Module: ")) {
      found = q;
      m = q;
      break;
    }
    path.push_back(q);
    q = s.parent[static_cast<size_t>(q)];
  }
  for (int32_t x : path) module_memo[static_cast<size_t>(x)] = found;
  return found;
}

// One call into its groups: by shape, op, family, kernel (calls of one kernel) and module.
void group_call(const Trace& trace, const ModeledCall& c, const Point* pp,
                std::vector<int32_t>& module_memo, Groups& g) {
  const SliceTable& s = trace.slices;
  bool is_kernel_call = c.est.family == PerfFamily::kKernelArgs;
  // A replayed call's op is in its capture's trace (modeled_calls.h).
  std::string name(modeled_call_name(trace, c));
  const std::string& shape_text = c.shapes;
  Group& gs = g.by_shape[name + '\x1f' + shape_text + '\x1f' + c.est.dtype];
  if (gs.row.calls == 0) {
    gs.row.name = name;
    gs.row.shapes = shape_text;
  }
  add(gs, c.est, c.kernel_ns, pp);
  Group& go = g.by_op[name];
  go.row.name = name;
  add(go, c.est, c.kernel_ns, pp);
  std::string fam(perf_family_name(c.est.family));
  Group& gf = g.by_family[fam];
  gf.row.name = fam;
  add(gf, c.est, c.kernel_ns, pp);
  if (c.kernels == 1 || (is_kernel_call)) {
    std::string kn(trace.str(c.kernel_name));
    Group& gk = g.by_kernel[kn];
    gk.row.name = kn;
    add(gk, c.est, c.kernel_ns, pp);
  }
  if (c.replay_launch >= 0) {
    if (!c.module.empty()) {
      Group& gm = g.by_module[c.module];
      gm.row.name = c.module;
      add(gm, c.est, c.kernel_ns, pp);
    }
  } else if (!is_kernel_call) {
    int32_t m = module_of(trace, module_memo, c.slice);
    if (m >= 0) {
      std::string mn(trace.str(s.name[static_cast<size_t>(m)]).substr(11));
      Group& gm = g.by_module[mn];
      gm.row.name = mn;
      add(gm, c.est, c.kernel_ns, pp);
    }
  }
}

// One call into the totals, the per-kernel rooflines of a call that wasted time, and its step.
void total_call(const Trace& trace, const StepsResult& steps, const ModeledCall& c, const Point* pp,
                std::vector<RooflineStep>& per_step,
                std::unordered_map<std::string, double>& matrix_flops_by_dtype, RooflineResult& r) {
  const SliceTable& s = trace.slices;
  bool is_kernel_call = c.est.family == PerfFamily::kKernelArgs;
  ++r.calls;
  r.flops += c.est.flops;
  r.bytes += c.est.bytes;
  r.kernel_ns += c.kernel_ns;
  if (perf_estimate_uses_matrix_units(c.est) && !c.est.dtype.empty())
    matrix_flops_by_dtype[c.est.dtype] += c.est.flops;
  int64_t roof = 0, wasted = 0;
  if (pp) {
    const Point& pt = *pp;
    if (pt.above_compute) {
      ++r.above_compute_peak;
    } else {
      if (pt.above_bw) ++r.above_bandwidth;
      roof = pt.above_bw ? c.kernel_ns : static_cast<int64_t>(pt.roofline_ns);
      wasted = std::max<int64_t>(0, c.kernel_ns - roof);
      if (wasted > 0) {
        double total = static_cast<double>(c.kernel_ns);
        for (uint32_t k : c.kernel_slices) {
          double share = static_cast<double>(s.dur[k]) / total;
          RooflineKernel rk;
          rk.slice = k;
          rk.kernel_ns = s.dur[k];
          rk.roofline_ns = static_cast<int64_t>(static_cast<double>(roof) * share);
          rk.flops = c.est.flops * share;
          rk.bytes = c.est.bytes * share;
          rk.family = c.est.family;
          rk.dtype = c.est.dtype;
          rk.compute_bound = pt.compute_bound;
          rk.op = is_kernel_call || c.replay_launch >= 0 ? -1 : c.slice;
          r.kernel_roofline.push_back(std::move(rk));
        }
      }
    }
  }
  r.roofline_ns += roof;
  r.wasted_ns += wasted;
  int64_t st = step_index_at(steps, modeled_call_ts(trace, c));
  if (st >= 0) {
    RooflineStep& x = per_step[static_cast<size_t>(st)];
    x.flops += c.est.flops;
    x.bytes += c.est.bytes;
    x.kernel_ns += c.kernel_ns;
    x.roofline_ns += roof;
    x.wasted_ns += wasted;
  }
}

// MFU's peak and per-step rates, the groups' rows, the unmodeled kernels, the warnings.
void finish_result(const DevicePeaks* peaks, const RooflineOptions& options,
                   const std::unordered_map<std::string, double>& matrix_flops_by_dtype,
                   std::vector<RooflineStep>& per_step, Groups& g, RooflineResult& r) {
  // MFU's peak: the matrix peak of the dtype doing most matrix FLOPs.
  double best = 0;
  for (const auto& [dt, f] : matrix_flops_by_dtype)
    if (f > best || (f == best && dt < r.dtype)) best = f, r.dtype = dt;
  if (peaks && !r.dtype.empty()) r.mfu_peak_tflops = peak_tflops(*peaks, r.dtype, true);
  for (RooflineStep& x : per_step) {
    x.achieved_tflops = x.dur_ns > 0 ? x.flops / static_cast<double>(x.dur_ns) / 1e3 : 0;
    if (r.mfu_peak_tflops > 0) x.mfu = x.achieved_tflops / r.mfu_peak_tflops;
  }
  std::sort(r.kernel_roofline.begin(), r.kernel_roofline.end(),
            [](const RooflineKernel& a, const RooflineKernel& b) { return a.slice < b.slice; });
  r.steps = std::move(per_step);
  r.shapes = sorted_rows(g.by_shape, peaks, options.top);
  r.ops = sorted_rows(g.by_op, peaks, options.top);
  r.families = sorted_rows(g.by_family, peaks, 0);
  r.kernels = sorted_rows(g.by_kernel, peaks, options.top);
  r.modules = sorted_rows(g.by_module, peaks, options.top);
  std::sort(r.unmodeled.begin(), r.unmodeled.end(),
            [](const RooflineUnmodeled& a, const RooflineUnmodeled& b) {
              return a.kernel_ns != b.kernel_ns ? a.kernel_ns > b.kernel_ns : a.name < b.name;
            });
  if (r.unmodeled.size() > 10) r.unmodeled.resize(10);
  if (r.above_compute_peak > 0)
    r.warnings.push_back(std::to_string(r.above_compute_peak) +
                         " call(s) ran faster than the compute peak: their model or the "
                         "attribution of kernels to them is wrong; they are left out of the "
                         "roofline and wasted time");
}

}  // namespace

RooflineResult analyze_roofline(const Trace& trace, const StepsResult& steps,
                                const RooflineOptions& options, const GraphsResult* graphs) {
  RooflineResult r;
  // The device and its peaks.
  set_device_peaks(trace, options, r);
  const DevicePeaks* peaks = r.peaks_known ? &r.peaks : nullptr;

  std::shared_ptr<const ModeledCalls> mc_shared = shared_modeled_calls(trace, graphs);
  const ModeledCalls& mc = *mc_shared;
  r.gpu_kernel_ns = mc.gpu_kernel_ns;
  r.unmodeled = mc.unmodeled;

  // Groups, totals and steps, call by call.
  Groups g;
  std::vector<RooflineStep> per_step(steps.steps.size());
  for (size_t k = 0; k < steps.steps.size(); ++k) {
    per_step[k].number = steps.steps[k].number;
    per_step[k].dur_ns = steps.steps[k].dur_ns;
  }
  std::unordered_map<std::string, double> matrix_flops_by_dtype;
  std::vector<int32_t> module_memo(trace.slices.size(), -2);  // see module_of
  for (const ModeledCall& c : mc.calls) {
    if (c.kernel_ns <= 0) continue;  // no kernel time (CPU ops, copies that only memcpy)
    Point pt;
    if (peaks) pt = point(*peaks, c.est, c.kernel_ns);
    const Point* pp = peaks ? &pt : nullptr;
    group_call(trace, c, pp, module_memo, g);
    total_call(trace, steps, c, pp, per_step, matrix_flops_by_dtype, r);
  }
  finish_result(peaks, options, matrix_flops_by_dtype, per_step, g, r);
  return r;
}

namespace analysis_stage {
RooflineResult compute_roofline(AnalysisSet& s) {
  return analyze_roofline(s.trace(), s.steps(), s.options().roofline,
                          s.has_gpu() ? &s.graphs() : nullptr);
}
}  // namespace analysis_stage

}  // namespace mlprof
