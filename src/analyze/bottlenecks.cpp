#include "mlprof/analyze/bottlenecks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>

#include "analyze/advice.h"
#include "analyze/name_rules.h"
#include "analyze/trace_memo.h"
#include "mlprof/analyze/device_peaks.h"
#include "mlprof/analyze/device_table.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/kernel_class.h"
#include "trace/units.h"

namespace mlprof {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kHigh:
      return "high";
    case Severity::kMedium:
      return "medium";
    case Severity::kLow:
      return "low";
  }
  return "low";
}

namespace {

using analyze_detail::lower;

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

Severity severity_for_pct(double p) {
  return p >= 25 ? Severity::kHigh : (p >= 10 ? Severity::kMedium : Severity::kLow);
}

struct Context {
  const Trace& trace;
  BottleneckResult& out;
  int64_t basis_ns;
  DeviceCaps device;      // what the advice may recommend (device_table.h)
  bool compiled = false;  // the trace has torch.compile regions
  // The device's datasheet peaks (device_peaks.h; --peaks rows through the roofline), for
  // pricing a kernel moved to other units; nullopt when the device is not in the table.
  std::optional<DevicePeaks> peaks;
  // A time measured over the GPU's span (first to last GPU event), as the same share of the basis:
  // with steps as the basis the GPU span also covers the work between and around the steps.
  int64_t over_basis(int64_t ns, int64_t gpu_span_ns) const {
    if (gpu_span_ns <= basis_ns || gpu_span_ns <= 0) return ns;
    return static_cast<int64_t>(static_cast<double>(ns) * static_cast<double>(basis_ns) /
                                static_cast<double>(gpu_span_ns));
  }
  // The change each finding names, for the replay to price (nullopt: nothing to replay);
  // generic ones (a bound such as "the host costs nothing") go after the specific ones.
  std::vector<std::optional<ReplayChange>> changes;
  std::vector<uint8_t> generic;
  void add(Finding f, std::optional<ReplayChange> change = std::nullopt, bool is_generic = false) {
    // No change saves more than the time it is a share of.
    if (basis_ns > 0) f.est_savings_ns = std::min(f.est_savings_ns, basis_ns);
    f.est_savings_pct = pct(static_cast<double>(f.est_savings_ns), static_cast<double>(basis_ns));
    out.findings.push_back(std::move(f));
    changes.push_back(std::move(change));
    generic.push_back(is_generic ? 1 : 0);
  }
};

bool excluded_from_hotspots(std::string_view name, std::string_view cat) {
  if (step_number(name)) return true;
  // A sync call's self time is the GPU's work it waits for: sync_stall's, never a hotspot.
  if (analyze_detail::is_host_sync_call_name(name)) return true;
  if (cat == "user_annotation" || cat == "gpu_user_annotation" || cat == "python_function" ||
      cat == kProfilerSpanCategory)
    return true;
  // record_function labels in traces without categories ("data_load", "forward").
  if (cat.empty() && name.find("::") == std::string_view::npos &&
      name.find("Backward") == std::string_view::npos && classify_step_phase(name))
    return true;
  return false;
}

void rule_hotspots(Context& c) {
  const Trace& t = c.trace;
  const SliceTable& s = t.slices;
  std::unordered_map<StringId, size_t> index;
  struct Row {
    StringId name;
    int64_t self = 0;
    int64_t compiled_self = 0;  // inside torch.compile regions
    uint64_t calls = 0;
    uint32_t last_track = UINT32_MAX;
    uint32_t threads = 0;  // host threads it ran on (counted when the track changes: a bound)
  };
  std::vector<Row> rows;
  std::vector<int8_t> excluded(t.strings.size(), -1);
  std::vector<int8_t> cat_excluded(t.strings.size(), -1);
  // Inside a torch.compile region (parents come before children): no "compile it" advice.
  std::vector<uint8_t> in_compiled(c.compiled ? s.size() : 0, 0);
  std::vector<int8_t> compiled_name(c.compiled ? t.strings.size() : 0, -1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i])) continue;
    if (c.compiled) {
      int8_t& cn = compiled_name[s.name[i]];
      if (cn < 0) cn = advice::is_compiled_region_name(t.str(s.name[i])) ? 1 : 0;
      int32_t p = s.parent[i];
      in_compiled[i] = cn == 1 || (p >= 0 && in_compiled[static_cast<size_t>(p)] != 0);
    }
    int8_t& ce = cat_excluded[s.cat[i]];
    if (ce < 0) {
      std::string_view cat = t.str(s.cat[i]);
      ce = (cat == "user_annotation" || cat == "gpu_user_annotation" || cat == "python_function" ||
            cat == kProfilerSpanCategory)
               ? 1
               : 0;
    }
    if (ce == 1) continue;
    int8_t& ex = excluded[s.name[i]];
    if (ex < 0) ex = excluded_from_hotspots(t.str(s.name[i]), t.str(s.cat[i])) ? 1 : 0;
    if (ex == 1) continue;
    auto [it, inserted] = index.emplace(s.name[i], rows.size());
    if (inserted) rows.push_back({s.name[i]});
    rows[it->second].self += s.self[i];
    if (c.compiled && in_compiled[i]) rows[it->second].compiled_self += s.self[i];
    Row& row = rows[it->second];
    ++row.calls;
    if (row.last_track != s.track[i]) {
      // Slices come per track, so a change of track is a new thread.
      row.last_track = s.track[i];
      ++row.threads;
    }
  }
  if (rows.size() < 2) return;
  std::vector<int64_t> selfs;
  for (const Row& r : rows) selfs.push_back(r.self);
  std::sort(selfs.begin(), selfs.end());
  // numpy-style linear interpolation between closest ranks.
  double pos = kHotspotPercentile / 100.0 * static_cast<double>(selfs.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, selfs.size() - 1);
  double p95 = static_cast<double>(selfs[lo]) +
               (pos - static_cast<double>(lo)) * static_cast<double>(selfs[hi] - selfs[lo]);
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.self > b.self; });
  for (const Row& r : rows) {
    double share = pct(static_cast<double>(r.self), static_cast<double>(c.basis_ns));
    if (static_cast<double>(r.self) < p95 || share < kHotspotMinSharePct) continue;
    Finding f;
    f.kind = "hotspot";
    f.severity = severity_for_pct(share);
    std::string name(t.str(r.name));
    // Self time summed over concurrent threads can exceed the time it is a share of.
    f.title = share <= 100 ? name + " takes " + format_percent(share / 100) + " of the time (self)"
                           : name + " runs " + format_duration_ns(static_cast<double>(r.self)) +
                                 " of self time on " + std::to_string(r.threads) + " threads (" +
                                 format_percent(share / 100) + " of the time, summed over threads)";
    f.evidence = {{"self_ns", static_cast<double>(r.self), "ns"},
                  {"share_pct", share, "%"},
                  {"calls", static_cast<double>(r.calls), "count"},
                  {"p95_self_ns_over_ops", p95, "ns"}};
    f.rule = "self time >= p95 of per-op self times and >= 5% of the time";
    f.ops = {name};
    advice::Advice a = advice::hotspot(
        name, r.self, r.calls, share,
        r.self > 0 ? static_cast<double>(r.compiled_self) / static_cast<double>(r.self) : 0,
        c.device);
    f.recommendation = std::move(a.text);
    f.why = std::move(a.why);
    f.est_savings_ns = static_cast<int64_t>(static_cast<double>(r.self) * kHotspotSavingsFraction);
    ReplayChange ch;
    ch.faster_host_ops = {r.name};
    ch.host_op_speedup = 1 / (1 - kHotspotSavingsFraction);
    c.add(std::move(f), std::move(ch));
  }
}

void rule_data_loading(Context& c, const StepsResult& steps) {
  if (steps.steps.empty()) return;
  // One definition per trace kind: on GPU traces the plugin's own DataLoader share (its step
  // class over the steps it keeps, in their GPU-extended windows: `steps`
  // plugin_class_total_ns.data_loader / plugin_total_ns), which the rule cites; without GPU
  // work the plugin has no breakdown, so the name-based data-loading phase (phase_total_ns).
  bool plugin = steps.has_gpu && steps.plugin_total_ns > 0;
  int64_t dl = plugin ? steps.plugin_class_total_ns[static_cast<size_t>(GpuStepClass::kDataLoader)]
                      : steps.phase_total_ns[static_cast<size_t>(StepPhase::kDataLoading)];
  double share = pct(static_cast<double>(dl),
                     static_cast<double>(plugin ? steps.plugin_total_ns : steps.total_ns));
  if (share <= kDataLoadingMinPct) return;
  Finding f;
  f.kind = "data_loading";
  f.severity = severity_for_pct(share);
  f.title = "Data loading takes " + format_percent(share / 100) + " of step time";
  f.evidence = {
      {"data_loading_ns", static_cast<double>(dl), "ns"},
      {"data_loading_pct", share, "%"},
      {"steps", static_cast<double>(plugin ? steps.plugin_steps : steps.steps.size()), "count"},
      {"step_mean_ns", steps.mean_ns, "ns"}};
  f.rule = plugin ? "the TensorBoard profiler plugin's DataLoader step class > 5% of "
                    "step time (the plugin's rule and number)"
                  : "the data-loading phase (by op name) > 5% of step time (the "
                    "TensorBoard profiler plugin's threshold)";
  advice::Advice a = advice::data_loading(share);
  f.recommendation = std::move(a.text);
  f.why = std::move(a.why);
  f.est_savings_ns = dl;  // fully overlapped loading costs the step nothing
  ReplayChange ch;
  ch.overlap_data_loading = true;
  c.add(std::move(f), std::move(ch));
}

void rule_sync_stalls(Context& c) {
  const Trace& t = c.trace;
  const SliceTable& s = t.slices;
  auto is_sync = [](std::string_view n) {
    return analyze_detail::is_host_sync_call_name(n) ||
           analyze_detail::is_blocking_copy_call_name(n) ||
           analyze_detail::is_device_read_op_name(n);
  };
  bool has_gpu = false;
  for (uint32_t k = 0; k < t.tracks.size() && !has_gpu; ++k) has_gpu = t.is_gpu_track(k);
  std::vector<int8_t> memo(t.strings.size(), -1);
  std::vector<uint8_t> covered(s.size(), 0);
  std::unordered_map<std::string_view, std::pair<int64_t, uint64_t>> by_name;
  int64_t total = 0;
  uint64_t count = 0;
  bool device_sync = false;
  uint32_t last_track = UINT32_MAX, threads = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i])) continue;
    int32_t p = s.parent[i];
    bool inside = p >= 0 && covered[static_cast<size_t>(p)];
    int8_t& m = memo[s.name[i]];
    if (m < 0) m = is_sync(t.str(s.name[i])) ? 1 : 0;
    if (inside) {
      covered[i] = 1;
      continue;
    }
    if (m != 1) continue;
    covered[i] = 1;
    if (s.track[i] != last_track) {  // slices come per track: a change is another thread
      last_track = s.track[i];
      ++threads;
    }
    std::string_view n = t.str(s.name[i]);
    if (!analyze_detail::is_device_read_op_name(n)) device_sync = true;
    total += s.dur[i];
    ++count;
    auto& e = by_name[n];
    e.first += s.dur[i];
    ++e.second;
  }
  // aten::item on a CPU tensor does not wait for a device: only count syncs on GPU traces.
  if (!has_gpu && !device_sync) return;
  double share = pct(static_cast<double>(total), static_cast<double>(c.basis_ns));
  if (share < kSyncStallMinPct) return;
  std::vector<std::pair<std::string_view, std::pair<int64_t, uint64_t>>> names(by_name.begin(),
                                                                               by_name.end());
  std::sort(names.begin(), names.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  Finding f;
  f.kind = "sync_stall";
  f.severity = severity_for_pct(share);
  f.title = share <= 100 ? "The host blocks on GPU synchronization for " +
                               format_percent(share / 100) + " of the time"
                         : "Host threads block on GPU synchronization for " +
                               format_duration_ns(static_cast<double>(total)) + " on " +
                               std::to_string(threads) + " threads (" +
                               format_percent(share / 100) + " of the time, summed over threads)";
  f.evidence = {{"sync_ns", static_cast<double>(total), "ns"},
                {"sync_pct", share, "%"},
                {"sync_calls", static_cast<double>(count), "count"}};
  for (const auto& [n, v] : names) {
    f.ops.emplace_back(n);
    f.evidence.push_back({std::string(n) + "_ns", static_cast<double>(v.first), "ns"});
  }
  f.rule =
      "host time in synchronizing calls (cuda/hip/cu Device/Stream/EventSynchronize, the MTIA "
      "runtime's synchronize[Stream], blocking cudaMemcpy/hipMemcpy, aten::item / "
      "_local_scalar_dense) >= 5%";
  advice::Advice a = advice::sync_stall(
      c.device, names.empty() ? std::string_view() : names.front().first, total, count);
  f.recommendation = std::move(a.text);
  f.why = std::move(a.why);
  f.est_savings_ns = total;
  ReplayChange ch;
  ch.remove_host_waits = true;
  c.add(std::move(f), std::move(ch));
}

// GPU events a CUDA/HIP graph replay started: their launch (by correlation) is a *GraphLaunch
// call. PyTorch 2.11's Kineto puts no graph id on them and draws one flow per replay.
uint64_t graph_replay_kernels(const Trace& t) {
  std::vector<int8_t> is_graph_launch(t.strings.size(), -1);
  uint64_t n = 0;
  std::shared_ptr<const GpuEvents> ev = shared_gpu_events(t);  // the set's table, not a copy
  for (const GpuEvent& g : ev->events) {
    if (g.launch < 0) continue;
    int8_t& gl = is_graph_launch[t.slices.name[g.launch]];
    if (gl < 0) gl = is_graph_launch_call_name(t.str(t.slices.name[g.launch]));
    n += gl;
  }
  return n;
}

// The host link's bandwidth for pinned copies, GB/s (1e9 B/s = bytes per ns), and where it comes
// from: the median of this trace's own pinned host<->device copies of at least 1 MiB, else the
// PCIe generation of the GPU's architecture at 85% of the PCI-SIG rate per direction (x16: Gen3
// 15.75, Gen4 31.5, Gen5 63.0 GB/s; an H100 SXM measured 55.2 GB/s, 88%). 0: unknown (MTIA,
// unlisted GPUs), and the copies are priced at half their time.
double pinned_copy_gbs(const Context& c, std::string& source) {
  const Trace& t = c.trace;
  const SliceTable& s = t.slices;
  StringId bytes_key = t.strings.find("bytes");
  std::vector<double> rates;
  if (bytes_key != StringPool::kNotFound) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (!t.is_gpu_track(s.track[i]) || s.dur[i] <= 0) continue;
      std::string_view n = t.str(s.name[i]);
      if (!n.starts_with("Memcpy") || n.find("Pinned") == std::string_view::npos) continue;
      const Arg* a = t.find_arg(s.args_begin[i], s.args_count[i], bytes_key);
      double bytes = a == nullptr ? 0 : a->as_double().value_or(0);
      if (bytes >= 1024.0 * 1024.0) rates.push_back(bytes / static_cast<double>(s.dur[i]));
    }
  }
  if (!rates.empty()) {
    std::nth_element(rates.begin(), rates.begin() + static_cast<ptrdiff_t>(rates.size() / 2),
                     rates.end());
    source = "the median of this trace's " + std::to_string(rates.size()) + " pinned copies";
    return rates[rates.size() / 2];
  }
  const DeviceCaps& d = c.device;
  int gen = 0;
  if (d.vendor == DeviceVendor::kNvidia) {
    int sm = d.sm();
    gen = sm >= 90 ? 5 : sm >= 80 ? 4 : sm >= 60 ? 3 : 0;
  } else if (d.vendor == DeviceVendor::kAmd) {
    gen = d.arch == "gfx942" || d.arch == "gfx950" ? 5 : d.arch.starts_with("gfx9") ? 4 : 0;
  }
  static constexpr double kPcieX16Gbs[] = {0, 0, 0, 15.75, 31.5, 63.0};
  if (gen == 0) return 0;
  source = "PCIe Gen" + std::to_string(gen) + " x16 at 85% (" + d.arch + ")";
  return kPcieX16Gbs[gen] * 0.85;
}

// How much faster GEMM/conv kernels run on the matrix units than on the vector ALUs: the ratio of
// the device's dense peaks (device_peaks.h) for the type they would use (fp32 -> TF32 where the
// device has it, else fp16 through autocast; fp16/bf16 stay) to the fp32 vector peak they run
// at now, weighted by each type's kernel time. Measured on an H100 (scripts/gpu/advice_truth.py):
// fp32 FFMA GEMMs -> TF32 6.97x, the peaks say 7.39x. A device without peaks in the table keeps
// the conservative 2x (kTensorCoreSavingsFraction). Small, memory-bound GEMMs gain less.
double tensor_core_speedup(const Context& c, const std::map<std::string, int64_t>& ns_by_dtype) {
  double fallback = 1 / (1 - kTensorCoreSavingsFraction);
  if (!c.peaks) return fallback;
  const DevicePeaks& p = *c.peaks;
  double vector = peak_tflops(p, "fp32", false);
  if (vector <= 0) return fallback;
  double total = 0, new_total = 0;
  for (const auto& [dtype, ns] : ns_by_dtype) {
    std::string target = dtype;
    if (dtype == "fp32")
      target = c.device.has(kMatTf32) ? "tf32" : (c.device.has(kMatBf16) ? "bf16" : "fp16");
    double matrix = target == "tf32" ? p.tf32 : peak_tflops(p, target, true);
    double k = matrix > vector ? std::min(matrix / vector, kTensorCoreMaxSpeedup) : fallback;
    total += static_cast<double>(ns);
    new_total += static_cast<double>(ns) / k;
  }
  if (total <= 0 || new_total <= 0) return fallback;
  return std::max(fallback, total / new_total);
}

// Pageable host-to-device copies.
void rule_pageable_copies(Context& c, const GpuResult& gpu) {
  const Trace& t = c.trace;
  const SliceTable& s = t.slices;
  int64_t pageable_ns = gpu.pageable_memcpy_ns;
  int64_t pageable_count = gpu.pageable_memcpy_count;
  if (pageable_count == 0) {
    for (size_t i = 0; i < s.size(); ++i)
      if (t.is_gpu_track(s.track[i]) && is_pageable_memcpy(t.str(s.name[i]))) {
        ++pageable_count;
        pageable_ns += s.dur[i];
      }
  }
  double pageable_pct = pct(static_cast<double>(pageable_ns), static_cast<double>(c.basis_ns));
  if (pageable_count > 0 && pageable_pct >= kPageableMinPct) {
    Finding f;
    f.kind = "pageable_memcpy";
    f.severity = severity_for_pct(pageable_pct);
    f.title = std::to_string(pageable_count) + " copies from pageable host memory";
    f.evidence = {{"pageable_copies", static_cast<double>(pageable_count), "count"},
                  {"pageable_copy_ns", static_cast<double>(pageable_ns), "ns"},
                  {"pageable_copy_bytes", static_cast<double>(gpu.pageable_memcpy_bytes), "bytes"},
                  {"pageable_pct", pageable_pct, "%"}};
    f.rule = "pageable memcpy time >= 1% of the time";
    f.ops = {"Memcpy HtoD (Pageable -> Device)"};
    advice::Advice a = advice::pageable_copies(c.device, pageable_count, pageable_ns);
    f.recommendation = std::move(a.text);
    f.why = std::move(a.why);
    f.est_savings_ns =
        static_cast<int64_t>(static_cast<double>(pageable_ns) * kPageableSavingsFraction);
    ReplayChange ch;
    ch.pinned_async_copies = true;
    // Each copy priced at the host link's pinned bandwidth where it is known (measured on this
    // trace's pinned copies, else the link of the GPU's generation): on an H100 a 256 MiB
    // pageable copy took 28-29 ms (9.1-9.6 GB/s), pinned 4.9 ms (55.2 GB/s), not half.
    std::string link_source;
    double gbs = pinned_copy_gbs(c, link_source);
    if (gbs > 0) {
      StringId bytes_key = t.strings.find("bytes");
      int64_t saving = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (!t.is_gpu_track(s.track[i]) || s.dur[i] <= 0 || !is_pageable_memcpy(t.str(s.name[i])))
          continue;
        const Arg* a = bytes_key == StringPool::kNotFound
                           ? nullptr
                           : t.find_arg(s.args_begin[i], s.args_count[i], bytes_key);
        double bytes = a == nullptr ? 0 : a->as_double().value_or(0);
        if (bytes <= 0) {
          saving += static_cast<int64_t>(static_cast<double>(s.dur[i]) * kPageableSavingsFraction);
          continue;
        }
        int64_t target = std::min<int64_t>(s.dur[i], static_cast<int64_t>(bytes / gbs));
        ch.kernel_target_ns.emplace_back(static_cast<uint32_t>(i), target);
        saving += s.dur[i] - target;
      }
      f.est_savings_ns = saving;
      f.evidence.push_back({"pinned_copy_gbs", gbs, "GB/s"});
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.1f GB/s", gbs);
      f.why += std::string("; pinned copies priced at ") + rate + " (" + link_source + ")";
    }
    c.add(std::move(f), std::move(ch));
  }
}

// Tiny kernels straight from the trace (count and time), and the GEMM/conv kernels that ran off
// the matrix units.
struct KernelScan {
  uint64_t kernel_count = 0, tiny = 0;
  int64_t gemm_ns_no_tc = 0;
  std::vector<int8_t> kind_memo;                        // per name: 1 a GEMM/conv off matrix units
  std::unordered_map<StringId, int64_t> no_tc_by_name;  // GEMM/conv kernels off matrix units
  std::map<std::string, int64_t> no_tc_by_dtype;        // their time by the name's dtype marker
};

KernelScan scan_kernels(const Trace& t) {
  const SliceTable& s = t.slices;
  KernelScan r;
  uint64_t& kernel_count = r.kernel_count;
  uint64_t& tiny = r.tiny;
  int64_t& gemm_ns_no_tc = r.gemm_ns_no_tc;
  std::vector<int8_t>& kind_memo = r.kind_memo;
  std::map<std::string, int64_t>& no_tc_by_dtype = r.no_tc_by_dtype;
  std::unordered_map<StringId, int64_t>& no_tc_by_name = r.no_tc_by_name;
  kind_memo.assign(t.strings.size(), -1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (!t.is_gpu_track(s.track[i])) continue;
    GpuWorkKind k = gpu_work_kind(t.str(s.cat[i]), t.str(s.name[i]));
    if (k != GpuWorkKind::kKernel) continue;
    ++kernel_count;
    if (s.dur[i] < kTinyKernelNs) ++tiny;
    int8_t& m = kind_memo[s.name[i]];
    if (m < 0) {
      MatrixKernel mk = classify_matrix_kernel(t.str(s.name[i]));
      m = mk.gemm_like && !mk.matrix ? 1 : 0;
    }
    if (m == 1) {
      gemm_ns_no_tc += s.dur[i];
      no_tc_by_name[s.name[i]] += s.dur[i];
    }
  }
  for (const auto& [name, ns] : no_tc_by_name) {
    std::string_view d = classify_matrix_kernel(t.str(name)).dtype;
    no_tc_by_dtype[d.empty() ? std::string("fp32") : std::string(d)] += ns;
  }
  return r;
}

// Tensor cores: GEMM/conv kernels that ran off the matrix units of a device that has them.
void rule_tensor_cores(Context& c, const KernelsResult& kernels, const KernelScan& scan) {
  const Trace& t = c.trace;
  const SliceTable& s = t.slices;
  const int64_t gemm_ns_no_tc = scan.gemm_ns_no_tc;
  const std::vector<int8_t>& kind_memo = scan.kind_memo;
  const std::unordered_map<StringId, int64_t>& no_tc_by_name = scan.no_tc_by_name;
  const std::map<std::string, int64_t>& no_tc_by_dtype = scan.no_tc_by_dtype;
  // Tensor cores: where the device has matrix units and mlprof can tell their kernels by name
  // (NVIDIA sm_70+, AMD CDNA/RDNA3+; not MTIA: device_table.h). AMD's computeMajor is no CUDA
  // compute capability; its matrix kernels are judged by their own families (Tensile "_MI",
  // Composable Kernel xdl, MIOpen gtcx).
  const DeviceCaps& dev = c.device;
  if (dev.matrix_use_measurable && dev.matrix_dtypes != 0 && kernels.computation_ns > 0 &&
      kernels.tensor_core_share < kTensorCoreMaxShare && gemm_ns_no_tc > 0) {
    // Tensor-core-eligible host ops present? (the plugin's list)
    static constexpr std::string_view kEligible[] = {
        "aten::conv",   "aten::mm",     "aten::addmm",   "aten::bmm",
        "aten::matmul", "aten::linear", "aten::baddbmm", "aten::_convolution",
        "aten::lstm",   "aten::gru",    "aten::rnn"};
    std::vector<std::string> eligible;
    std::vector<int8_t> memo(t.strings.size(), -1);
    // The eligible ops' input dtype ("Input type"), by calls: fp32 inputs are what autocast or
    // TF32 changes.
    StringId type_key = t.strings.find("Input type");
    std::unordered_map<std::string, uint64_t> dtype_calls;
    for (size_t i = 0; i < s.size(); ++i) {
      if (t.is_gpu_track(s.track[i])) continue;
      int8_t& m = memo[s.name[i]];
      if (m < 0) {
        std::string_view n = t.str(s.name[i]);
        m = 0;
        for (auto e : kEligible)
          if (n.starts_with(e)) m = 1;
        if (m == 1 && eligible.size() < 8) eligible.emplace_back(n);
      }
      if (m != 1 || type_key == StringPool::kNotFound) continue;
      const Arg* a = t.find_arg(s.args_begin[i], s.args_count[i], type_key);
      if (a == nullptr || (a->type != ArgType::kJson && a->type != ArgType::kString)) continue;
      std::string_view ty = t.str(a->s);
      const char* d = ty.find("BFloat16") != std::string_view::npos    ? "bf16"
                      : ty.find("Half") != std::string_view::npos      ? "fp16"
                      : ty.find("Float8") != std::string_view::npos    ? "fp8"
                      : ty.find("\"float\"") != std::string_view::npos ? "fp32"
                      : ty.find("double") != std::string_view::npos    ? "fp64"
                                                                       : nullptr;
      if (d != nullptr) ++dtype_calls[d];
    }
    std::string op_dtype;
    uint64_t best_calls = 0;
    for (const auto& [d, n] : dtype_calls)
      if (n > best_calls || (n == best_calls && d < op_dtype)) {
        op_dtype = d;
        best_calls = n;
      }
    if (!eligible.empty()) {
      double gemm_pct =
          pct(static_cast<double>(gemm_ns_no_tc), static_cast<double>(kernels.computation_ns));
      Finding f;
      f.kind = "low_tensor_core_use";
      f.severity = gemm_pct >= 25 ? Severity::kHigh : Severity::kMedium;
      std::string unit = dev.matrix_unit.empty() ? std::string("tensor cores") : dev.matrix_unit;
      f.title = "Matmul/conv work runs without " + unit + " (" +
                format_percent(kernels.tensor_core_share) + " of compute on " + unit + ")";
      f.evidence = {
          {"tensor_core_share", kernels.tensor_core_share, "ratio"},
          {"non_tensor_core_gemm_conv_ns", static_cast<double>(gemm_ns_no_tc), "ns"},
          {"gemm_conv_share_of_compute_pct", gemm_pct, "%"},
          {"compute_capability_major",
           static_cast<double>(dev.vendor == DeviceVendor::kNvidia ? dev.sm() / 10 : 0), ""}};
      f.rule =
          "a device with tensor/matrix cores (compute capability >= 7, or an AMD CDNA/RDNA3+ "
          "GPU), tensor-core-eligible ops present, < 10% of compute kernel time on them "
          "(TensorBoard plugin, relaxed)";
      f.ops = std::move(eligible);
      advice::TensorCoreFacts facts;
      facts.share = kernels.tensor_core_share;
      facts.non_matrix_gemm_ns = gemm_ns_no_tc;
      facts.op_dtype = op_dtype;
      int64_t top_ns = -1;
      for (const auto& [name, ns] : no_tc_by_name)
        if (ns > top_ns) {
          top_ns = ns;
          facts.top_kernel = std::string(t.str(name));
        }
      facts.top_family = std::string(classify_matrix_kernel(facts.top_kernel).family);
      advice::Advice a = advice::tensor_cores(dev, facts);
      f.recommendation = std::move(a.text);
      f.why = std::move(a.why);
      double speedup = tensor_core_speedup(c, no_tc_by_dtype);
      if (speedup > 1 / (1 - kTensorCoreSavingsFraction))
        f.evidence.push_back({"modeled_kernel_speedup", speedup, "x"});
      f.est_savings_ns =
          static_cast<int64_t>(static_cast<double>(gemm_ns_no_tc) * (1 - 1 / speedup));
      ReplayChange ch;
      ch.faster_kernels.assign(kind_memo.size(), 0);
      for (size_t k = 0; k < kind_memo.size(); ++k) ch.faster_kernels[k] = kind_memo[k] == 1;
      ch.kernel_speedup = speedup;
      c.add(std::move(f), std::move(ch));
    }
  }
}

// Communication not overlapped with compute.
void rule_communication(Context& c, const GpuResult& gpu) {
  const TemporalBreakdown& tb = gpu.temporal;
  double comm_pct = tb.communication_pct;
  double overlap = gpu.comm_comp_overlap_pct;
  if (tb.communication_ns > 0 && comm_pct >= kCommMinPct && !std::isnan(overlap) &&
      overlap < kCommOverlapMinPct) {
    int64_t exposed =
        static_cast<int64_t>(static_cast<double>(tb.communication_ns) * (1 - overlap / 100));
    Finding f;
    f.kind = "communication_not_overlapped";
    f.severity =
        severity_for_pct(pct(static_cast<double>(exposed), static_cast<double>(tb.span_ns)));
    // HTA's share of the GPU span, named as such: the steps' TensorBoard-plugin communication
    // class (share of step time) is another definition with another value.
    f.title = "Communication kernels take " + format_percent(comm_pct / 100) +
              " of the GPU span (HTA) and only " + format_percent(overlap / 100) +
              " of them overlaps compute";
    f.evidence = {{"communication_ns", static_cast<double>(tb.communication_ns), "ns"},
                  {"communication_pct", comm_pct, "%"},
                  {"comm_comp_overlap_pct", overlap, "%"},
                  {"exposed_communication_ns", static_cast<double>(exposed), "ns"}};
    f.rule =
        "communication kernels >= 10% of the GPU span (HTA's temporal breakdown; the TensorBoard "
        "plugin's threshold) and overlap < 50% (HTA metric)";
    advice::Advice a = advice::communication(c.device, comm_pct, overlap);
    f.recommendation = std::move(a.text);
    f.why = std::move(a.why);
    f.est_savings_ns = c.over_basis(exposed, tb.span_ns);
    ReplayChange ch;
    ch.overlap_communication = true;
    c.add(std::move(f), std::move(ch));
  }
}

void rule_gpu(Context& c, const GpuResult& gpu, const KernelsResult& kernels, const StepsResult& st,
              const GraphsResult* graphs) {
  KernelScan scan = scan_kernels(c.trace);
  const uint64_t kernel_count = scan.kernel_count, tiny = scan.tiny;
  const TemporalBreakdown& tb = gpu.temporal;
  int64_t host_wait = 0, idle_total = 0;
  for (const StreamIdle& si : gpu.idle) {
    host_wait += si.host_wait.time_ns;
    idle_total += si.idle_ns();
  }
  double tiny_share = kernel_count ? static_cast<double>(tiny) / kernel_count : 0;
  double host_wait_share = idle_total > 0 ? static_cast<double>(host_wait) / idle_total : 0;
  bool idle_high = tb.idle_pct >= kGpuIdleMinPct;
  bool tiny_many = tiny_share >= kTinyKernelMinShare && tb.idle_pct >= kTinyKernelMinIdlePct;
  bool launch_bound = host_wait_share >= kHostWaitMinShareOfIdle || tiny_many;
  // A graph capture pass records its launches and runs none of their kernels: its iterations are
  // not steady state and their gaps are no launch overhead. Only the other iterations are
  // priced; a trace that is all capture gets no launch finding.
  std::vector<uint8_t> steady_steps;
  bool all_capture = false;
  if (launch_bound && st.capture_count > 0) {
    steady_steps.assign(st.steps.size(), 0);
    for (size_t k = 0; k < st.steps.size(); ++k) steady_steps[k] = st.steps[k].capture ? 0 : 1;
    all_capture = std::find(steady_steps.begin(), steady_steps.end(), 1) == steady_steps.end();
  }
  // No iterations (one window, the capture pass of vLLM/SGLang capture_traces/): the window is
  // the capture run when the trace captured a graph.
  if (launch_bound && st.steps.empty() && graphs && graphs->captured_here > 0) all_capture = true;
  if (tb.span_ns > 0 && (idle_high || tiny_many) && !all_capture) {
    Finding f;
    f.kind = launch_bound ? "gpu_launch_overhead" : "gpu_idle";
    f.severity = severity_for_pct(tb.idle_pct);
    f.title =
        "GPU idle " + format_percent(tb.idle_pct / 100) +
        (launch_bound ? " of its span, waiting on kernel launches from the host" : " of its span");
    f.evidence = {
        {"gpu_idle_pct", tb.idle_pct, "%"},
        {"gpu_idle_ns", static_cast<double>(tb.idle_ns), "ns"},
        // The device's idle time that waits on the host: HTA's host-wait share of
        // the per-stream idle applied to the device-wide idle (the per-stream sum
        // counts a gap once per stream, and read 2.0 s beside 732 ms of idle).
        {"gpu_idle_waiting_on_host_ns", static_cast<double>(tb.idle_ns) * host_wait_share, "ns"},
        {"host_wait_share_of_idle", host_wait_share, "ratio"},
        {"kernels", static_cast<double>(kernel_count), "count"},
        {"tiny_kernels_under_10us", static_cast<double>(tiny), "count"},
        {"tiny_kernel_share", tiny_share, "ratio"},
        {"short_kernels_with_long_launch", static_cast<double>(gpu.launches.short_kernels),
         "count"}};
    f.rule =
        "GPU idle >= 50% (TensorBoard plugin: utilization < 50%), or >= 50% of kernels "
        "under 10 us with idle >= 10%; launch-bound when host wait (HTA) >= 50% of idle";
    for (const LaunchRecord& lr : gpu.launches.flagged) {
      if (f.ops.size() >= 5) break;
      if (std::find(f.ops.begin(), f.ops.end(), lr.kernel) == f.ops.end())
        f.ops.push_back(lr.kernel);
    }
    uint64_t graph_kernels = launch_bound ? graph_replay_kernels(c.trace) : 0;
    double graph_share =
        kernel_count ? std::min(1.0, static_cast<double>(graph_kernels) / kernel_count) : 0;
    if (graph_kernels)
      f.evidence.push_back(
          {"kernels_from_graph_replays", static_cast<double>(graph_kernels), "count"});
    advice::Advice a = advice::gpu_idle(c.device, launch_bound, c.compiled, tb.idle_pct,
                                        host_wait_share, tiny_share, graph_share);
    f.recommendation = std::move(a.text);
    f.why = std::move(a.why);
    // Per-stream idle gaps overlap across streams, so take host wait's share of the device-wide
    // idle time rather than the per-stream sum.
    f.est_savings_ns =
        c.over_basis(launch_bound && host_wait > 0
                         ? static_cast<int64_t>(static_cast<double>(tb.idle_ns) * host_wait_share)
                         : tb.idle_ns / 2,
                     tb.span_ns);
    ReplayChange ch;
    if (launch_bound && !steady_steps.empty()) {
      ch.launch_overhead_steps = std::move(steady_steps);
      f.evidence.push_back(
          {"graph_capture_iterations_left_out", static_cast<double>(st.capture_count), "count"});
    } else if (launch_bound) {
      ch.remove_launch_overhead = true;
    } else
      ch.free_host = true;  // a bound: what any host-side change could give the GPU
    c.add(std::move(f), std::move(ch), !launch_bound);
  }
  rule_pageable_copies(c, gpu);
  rule_tensor_cores(c, kernels, scan);
  rule_communication(c, gpu);
}

// Kernels below their roofline, one finding per family and bound (memory-bound GEMMs are not
// compute-bound GEMMs: different advice). The replay prices each kernel reaching
// kRooflineTargetFraction of its own roofline time.
void rule_roofline(Context& c, const RooflineResult& r) {
  if (!r.peaks_known || r.kernel_roofline.empty()) return;
  const Trace& t = c.trace;
  struct Group {
    int64_t kernel_ns = 0, roofline_ns = 0, headroom_ns = 0;
    double flops = 0, bytes = 0;
    uint64_t kernels = 0;
    std::map<std::string, int64_t> dtype_ns;
    std::unordered_map<StringId, int64_t> op_ns;
    std::vector<std::pair<uint32_t, int64_t>> targets;
  };
  std::map<std::pair<PerfFamily, bool>, Group> groups;
  for (const RooflineKernel& k : r.kernel_roofline) {
    Group& g = groups[{k.family, k.compute_bound}];
    int64_t target =
        static_cast<int64_t>(static_cast<double>(k.roofline_ns) / kRooflineTargetFraction);
    g.kernel_ns += k.kernel_ns;
    g.roofline_ns += k.roofline_ns;
    g.flops += k.flops;
    g.bytes += k.bytes;
    ++g.kernels;
    g.dtype_ns[k.dtype] += k.kernel_ns;
    if (k.op >= 0) g.op_ns[t.slices.name[static_cast<size_t>(k.op)]] += k.kernel_ns;
    if (k.kernel_ns > target) {
      g.headroom_ns += k.kernel_ns - target;
      g.targets.emplace_back(k.slice, target);
    }
  }
  for (auto& [key, g] : groups) {
    double share = pct(static_cast<double>(g.headroom_ns), static_cast<double>(c.basis_ns));
    if (g.targets.empty() || share < kRooflineMinPct) continue;
    advice::RooflineFacts facts;
    facts.family = std::string(perf_family_name(key.first));
    facts.compute_bound = key.second;
    facts.intensity = g.bytes > 0 ? g.flops / g.bytes : 0;
    facts.roofline_pct =
        g.kernel_ns > 0 ? static_cast<double>(g.roofline_ns) / static_cast<double>(g.kernel_ns) : 0;
    facts.kernel_ns = g.kernel_ns;
    facts.roofline_ns = g.roofline_ns;
    facts.kernels = g.kernels;
    facts.target_pct = kRooflineTargetFraction;
    int64_t best = -1;
    for (const auto& [d, ns] : g.dtype_ns)
      if (ns > best) best = ns, facts.dtype = d;
    std::vector<std::pair<int64_t, StringId>> ops;
    for (const auto& [id, ns] : g.op_ns) ops.emplace_back(ns, id);
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    if (!ops.empty()) facts.top_op = std::string(t.str(ops.front().second));
    Finding f;
    f.kind = "below_roofline";
    f.severity = severity_for_pct(share);
    char ai[32];
    std::snprintf(ai, sizeof ai, "%.1f", facts.intensity);
    f.title = (key.second ? "Compute" : "Memory") + std::string("-bound ") + facts.family +
              " kernels" + (facts.dtype.empty() ? "" : " (" + facts.dtype + ")") + " run at " +
              format_percent(facts.roofline_pct) + " of their roofline (" + ai + " FLOP/B)";
    f.evidence = {{"kernel_ns", static_cast<double>(g.kernel_ns), "ns"},
                  {"roofline_ns", static_cast<double>(g.roofline_ns), "ns"},
                  {"roofline_pct", 100 * facts.roofline_pct, "%"},
                  {"arithmetic_intensity", facts.intensity, "FLOP/B"},
                  {"kernels", static_cast<double>(g.kernels), "count"},
                  {"time_above_target_ns", static_cast<double>(g.headroom_ns), "ns"},
                  {"target_roofline_pct", 100 * kRooflineTargetFraction, "%"}};
    f.rule =
        "kernels of one family and bound (mlprof roofline) that would free >= 2% of the time "
        "by reaching 80% of their roofline";
    for (const auto& [ns, id] : ops) {
      if (f.ops.size() >= 5) break;
      f.ops.emplace_back(t.str(id));
    }
    advice::Advice a = advice::roofline(c.device, c.compiled, facts);
    f.recommendation = std::move(a.text);
    f.why = std::move(a.why);
    f.est_savings_ns = g.headroom_ns;
    ReplayChange ch;
    std::sort(g.targets.begin(), g.targets.end());
    ch.kernel_target_ns = std::move(g.targets);
    c.add(std::move(f), std::move(ch));
  }
}

void rule_ranks(Context& c, const RanksResult& ranks) {
  if (ranks.ranks.size() < 2 || ranks.load_imbalance < kRankImbalanceMax) return;
  double max_wall = 0, mean_wall = 0;
  for (const RankStats& r : ranks.ranks) {
    max_wall = std::max(max_wall, static_cast<double>(r.wall_ns));
    mean_wall += static_cast<double>(r.wall_ns);
  }
  mean_wall /= static_cast<double>(ranks.ranks.size());
  Finding f;
  f.kind = "rank_imbalance";
  f.severity = ranks.load_imbalance >= 1.25 ? Severity::kHigh : Severity::kMedium;
  f.title = "Load imbalance across ranks: slowest is " +
            std::to_string(static_cast<int>((ranks.load_imbalance - 1) * 100 + 0.5)) +
            "% above the mean";
  f.evidence = {{"load_imbalance_max_over_mean", ranks.load_imbalance, "ratio"},
                {"compute_imbalance_max_over_mean", ranks.compute_imbalance, "ratio"},
                {"ranks", static_cast<double>(ranks.ranks.size()), "count"},
                {"stragglers", static_cast<double>(ranks.stragglers.size()), "count"}};
  for (int32_t r : ranks.stragglers) f.ops.push_back("rank " + std::to_string(r));
  f.rule = "max/mean per-rank step time >= 1.10";
  f.recommendation =
      "Balance work across ranks: even out data shards and sequence lengths (bucketing), check "
      "the straggler's host (thermal, other jobs, slower links), and its data loading.";
  f.why = "the slowest rank's step time is " + format_fixed(ranks.load_imbalance, 3) +
          "x the mean over " + std::to_string(ranks.ranks.size()) + " ranks";
  f.est_savings_ns = static_cast<int64_t>(max_wall - mean_wall);
  c.add(std::move(f));
}

// Stragglers found from the arrival order at collectives (or a step time above the median): in a
// synchronous job every rank's step lasts as long as the straggler's, so the imbalance rule above
// rarely fires; who arrives last, and how late, names the rank the others wait for.
void rule_stragglers(Context& c, const RanksResult& ranks) {
  std::vector<const StragglerEvidence*> worst;
  for (const StragglerEvidence& e : ranks.straggler_evidence) worst.push_back(&e);
  std::stable_sort(worst.begin(), worst.end(),
                   [](const StragglerEvidence* a, const StragglerEvidence* b) {
                     return a->time_lost_ns > b->time_lost_ns;
                   });
  if (worst.size() > kStragglerFindingsMax) worst.resize(kStragglerFindingsMax);
  for (const StragglerEvidence* e : worst) {
    const RankStats* row = nullptr;
    for (const RankStats& r : ranks.ranks)
      if (r.straggler && r.rank == e->rank) {
        row = &r;
        break;
      }
    const std::string rank = "rank " + std::to_string(e->rank);
    const bool in_depth = row != nullptr && row->source == c.trace.meta.source;
    Finding f;
    f.kind = "straggler";
    f.severity = severity_for_pct(
        pct(static_cast<double>(e->time_lost_ns), static_cast<double>(c.basis_ns)));
    f.title = "Rank " + std::to_string(e->rank) + " is a straggler: " + e->reason;
    if (e->time_lost_ns > 0)
      f.title += "; the job loses " + format_duration_ns(static_cast<double>(e->time_lost_ns));
    f.evidence = {{"rank", static_cast<double>(e->rank), ""},
                  {"last_count", static_cast<double>(e->last_count), "count"},
                  {"calls", static_cast<double>(e->calls), "count"},
                  {"last_share", e->last_share, "ratio"},
                  {"late_median_ns", static_cast<double>(e->late_median_ns), "ns"},
                  {"late_total_ns", static_cast<double>(e->late_total_ns), "ns"},
                  {"step_excess_pct", e->step_excess_pct, "%"},
                  {"time_lost_ns", static_cast<double>(e->time_lost_ns), "ns"},
                  {"stragglers", static_cast<double>(ranks.stragglers.size()), "count"}};
    f.rule =
        "last to arrive at >= 50% of its collectives matched across ranks (and >= 1.5x chance), "
        ">= 3 calls, median lateness >= 20 us; or mean step (GPU span) > 5% above the median";
    f.ops = {rank};
    f.recommendation =
        "The others wait for " + rank + " at its collectives: look at " + rank +
        " on its own, at what it does before them: its step breakdown (data loading, CPU-bound "
        "host work, synchronization: mlprof steps/bottlenecks on " +
        (row != nullptr ? std::filesystem::path(row->source).filename().string()
                        : std::string("its trace")) +
        "), its GPU clocks and temperature (thermal or power throttling: nvidia-smi -q -d "
        "CLOCK,PERFORMANCE), other processes on its host, its input shard (longer sequences), "
        "its links (NCCL_DEBUG=INFO)." +
        (in_depth ? " The other findings here are this rank's." : "");
    f.why = rank + " " + e->reason;
    f.est_savings_ns = e->time_lost_ns;
    c.add(std::move(f));
  }
}

void rule_memory(Context& c, const MemoryResult* memory, const LeakResult* leaks) {
  const Trace& t = c.trace;
  if (leaks && leaks->leak) {
    for (const DeviceLeak& d : leaks->devices) {
      if (!d.leak) continue;
      Finding f;
      f.kind = "memory_leak";
      f.severity = Severity::kHigh;
      f.title = d.device + " memory grows " + format_bytes(d.slope_bytes_per_step) + " per step";
      if (d.change_index >= 0) f.title += " since step #" + std::to_string(d.growth_start_step);
      f.evidence = {{"slope_bytes_per_step", d.slope_bytes_per_step, "bytes/step"},
                    {"growth_bytes", static_cast<double>(d.growth_bytes), "bytes"},
                    {"steps", static_cast<double>(d.step_end_allocated.size()), "count"},
                    {"mann_kendall_p", d.p_value, ""}};
      if (d.change_index >= 0)
        f.evidence.push_back(
            {"growth_start_step", static_cast<double>(d.growth_start_step), "step"});
      f.rule =
          "Theil-Sen slope >= 1 KiB/step and Mann-Kendall p < 0.05 over step boundaries (since "
          "the change point when a two-segment fit is significantly better)";
      for (const SurvivingOp& op : leaks->surviving_ops) {
        if (f.ops.size() >= 5) break;
        f.ops.push_back(op.op);
      }
      f.recommendation =
          "Find what keeps tensors alive across steps: accumulating losses or outputs without "
          ".detach()/.item(), growing Python lists or caches, hooks holding references. The ops "
          "listed allocated memory that was never freed.";
      f.why = d.device + " memory at step ends grows " + format_bytes(d.slope_bytes_per_step) +
              " per step over " + std::to_string(d.step_end_allocated.size()) + " steps";
      c.add(std::move(f));
    }
  }
  if (!memory) return;
  for (const DeviceMemory& d : memory->devices) {
    if (d.has_reserved && d.peak_reserved > 0 &&
        d.fragmentation_at_peak_reserved >= kFragmentationMin &&
        d.max_unused_reserved >= kFragmentationMinBytes) {
      Finding f;
      f.kind = "fragmentation";
      f.severity = Severity::kMedium;
      f.title = d.device + ": " + format_percent(d.fragmentation_at_peak_reserved) +
                " of reserved memory is not allocated at the reserved peak";
      f.evidence = {
          {"peak_reserved_bytes", static_cast<double>(d.peak_reserved), "bytes"},
          {"fragmentation_at_peak_reserved", d.fragmentation_at_peak_reserved, "ratio"},
          {"max_unused_reserved_bytes", static_cast<double>(d.max_unused_reserved), "bytes"}};
      f.rule = "reserved - allocated >= 30% of reserved and >= 256 MiB";
      f.recommendation =
          "Reduce allocator fragmentation: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
          "keep tensor sizes stable across steps, avoid torch.cuda.empty_cache() in the loop.";
      f.why = "at the reserved peak (" + format_bytes(static_cast<double>(d.peak_reserved)) + ") " +
              format_bytes(static_cast<double>(d.max_unused_reserved)) +
              " of reserved memory is not allocated";
      c.add(std::move(f));
    }
    if (d.device_type == static_cast<int8_t>(DeviceType::kCuda)) {
      for (const DeviceInfo& info : t.meta.devices) {
        if (info.id != d.device_id || info.total_global_mem <= 0) continue;
        double use = static_cast<double>(std::max(d.peak_allocated, d.peak_reserved)) /
                     static_cast<double>(info.total_global_mem);
        if (use < kMemoryPressureMin) continue;
        Finding f;
        f.kind = "memory_pressure";
        f.severity = Severity::kMedium;
        f.title = d.device + " peak memory is " + format_percent(use) + " of the device";
        f.evidence = {{"peak_bytes",
                       static_cast<double>(std::max(d.peak_allocated, d.peak_reserved)), "bytes"},
                      {"device_bytes", static_cast<double>(info.total_global_mem), "bytes"}};
        f.rule = "peak memory > 90% of the device (TensorBoard plugin)";
        if (!d.peak_op.empty()) f.ops = {d.peak_op};
        f.recommendation =
            "Lower peak memory: activation checkpointing, mixed precision, smaller micro-batches "
            "with gradient accumulation.";
        f.why = "peak memory " +
                format_bytes(static_cast<double>(std::max(d.peak_allocated, d.peak_reserved))) +
                " of the device's " + format_bytes(static_cast<double>(info.total_global_mem));
        c.add(std::move(f));
      }
    }
  }
}

// A device-bound trace on a device without known peaks (MTIA, an unlisted GPU) has no roofline to
// say how fast its kernels could be: the replay prices the top kernel made kWhatIfSpeedup times
// faster instead, a what-if (not a bound), said so in the finding.
constexpr double kWhatIfSpeedup = 2.0;
void rule_kernel_whatif(Context& c, const GpuResult& gpu, const KernelsResult& kernels,
                        const RooflineResult* roofline) {
  if (roofline && roofline->peaks_known) return;
  const TemporalBreakdown& tb = gpu.temporal;
  if (tb.span_ns <= 0 || tb.idle_pct >= kGpuIdleMinPct) return;  // not device-bound
  int64_t compute = 0;
  const KernelStats* top = nullptr;
  for (const KernelStats& k : kernels.kernels) {
    if (k.kind != GpuWorkKind::kKernel || k.type != KernelType::kComputation) continue;
    compute += k.total_ns;
    if (!top || k.total_ns > top->total_ns) top = &k;
  }
  if (!top || compute <= 0) return;
  double share = pct(static_cast<double>(top->total_ns), static_cast<double>(compute));
  if (share < 10.0) return;
  StringId id = c.trace.strings.find(top->name);
  if (id == StringPool::kNotFound) return;
  Finding f;
  f.kind = "kernel_speedup_whatif";
  f.severity = Severity::kLow;
  f.title = "The device is busy " + format_percent((100 - tb.idle_pct) / 100) +
            " of its span and one kernel takes " + format_percent(share / 100) +
            " of the compute-kernel time; no peak is known for this device, so this is a what-if: "
            "that kernel " +
            format_fixed(kWhatIfSpeedup, 0) + "x faster";
  f.evidence = {{"gpu_busy_pct", 100 - tb.idle_pct, "%"},
                {"kernel_ns", static_cast<double>(top->total_ns), "ns"},
                {"kernel_calls", static_cast<double>(top->count), "count"},
                {"share_of_compute_pct", share, "%"},
                {"what_if_speedup", kWhatIfSpeedup, "ratio"}};
  f.rule =
      "device busy >= 50% of its span, no device peaks known (no roofline), the top "
      "compute kernel >= 10% of compute-kernel time; priced by the replay of that kernel "
      "made 2x faster (a what-if, not a bound)";
  f.ops.push_back(top->name);
  f.recommendation =
      "The step is bound by the device's kernels, and the largest is " + top->name +
      ": profile it with the vendor's kernel profiler (MTIA: its kernel-level tools; NVIDIA "
      "Nsight Compute; AMD rocprof-compute) to see whether it is compute- or memory-bound, then "
      "tune or fuse it. The saving shown is what the step gains if it ran 2x faster, not a "
      "limit.";
  f.why = "no roofline peaks are known for " +
          (c.device.name.empty() ? std::string("this device") : c.device.name) +
          " (mlprof roofline has no row for it), and the device is busy " +
          format_percent((100 - tb.idle_pct) / 100) + " of its span";
  f.est_savings_ns = top->total_ns / 2;
  ReplayChange ch;
  ch.faster_kernels.assign(c.trace.strings.size(), 0);
  ch.faster_kernels[id] = 1;
  ch.kernel_speedup = kWhatIfSpeedup;
  c.add(std::move(f), std::move(ch));
}

// GPU work per serving iteration (by its launch's time), inside graph replays or launched
// eagerly, and what the serving rules ask of each iteration.
struct ServingWork {
  const StepsResult& st;
  size_t n = 0;
  std::vector<int64_t> begins;
  std::vector<uint64_t> graph_kernels, eager_kernels;
  int64_t gpu_ns = 0, graph_ns = 0;
  uint64_t eager_total = 0, graph_total = 0;

  ServingWork(const Trace& t, const StepsResult& steps) : st(steps), n(steps.steps.size()) {
    const SliceTable& s = t.slices;
    for (const StepInfo& x : st.steps) begins.push_back(x.begin_ns);
    graph_kernels.assign(n, 0);
    eager_kernels.assign(n, 0);
    std::vector<int8_t> is_graph(t.strings.size(), -1);
    std::shared_ptr<const GpuEvents> ev = shared_gpu_events(t);  // the set's, not a copy
    for (const GpuEvent& e : ev->events) {
      if (e.kind != GpuWorkKind::kKernel && e.kind != GpuWorkKind::kMemcpy &&
          e.kind != GpuWorkKind::kMemset)
        continue;
      gpu_ns += e.dur();
      bool graph = false;
      if (e.launch >= 0) {
        int8_t& g = is_graph[s.name[static_cast<size_t>(e.launch)]];
        if (g < 0) g = is_graph_launch_call_name(t.str(s.name[static_cast<size_t>(e.launch)]));
        graph = g == 1;
      }
      int64_t k = e.launch >= 0 ? step_of(e.launch_ts) : -1;
      if (graph) {
        graph_ns += e.dur();
        ++graph_total;
        if (k >= 0) ++graph_kernels[static_cast<size_t>(k)];
      } else if (e.launch >= 0) {
        ++eager_total;
        if (k >= 0) ++eager_kernels[static_cast<size_t>(k)];
      }
    }
  }
  // The iteration that holds `ts`, or -1.
  int64_t step_of(int64_t ts) const {
    auto p = std::upper_bound(begins.begin(), begins.end(), ts);
    if (p == begins.begin()) return -1;
    size_t k = static_cast<size_t>(p - begins.begin() - 1);
    return ts <= st.steps[k].begin_ns + st.steps[k].dur_ns ? static_cast<int64_t>(k) : -1;
  }
  bool steady(size_t k) const { return !st.steps[k].warmup && !st.steps[k].capture; }
  IterationPhase phase(size_t k) const {
    return st.steps[k].serving ? st.steps[k].serving->phase : IterationPhase::kUnknown;
  }
};

// 1. Batch sizes that ran eagerly while iterations of other sizes replayed a graph. Returns the
// eager decode iterations at an uncaptured size.
std::vector<uint8_t> rule_serving_batch_missed_graph(Context& c, const ServingWork& w,
                                                     const GraphsResult* graphs,
                                                     std::string_view engine) {
  const StepsResult& st = w.st;
  const size_t n = w.n;
  const std::vector<uint64_t>& graph_kernels = w.graph_kernels;
  const std::vector<uint64_t>& eager_kernels = w.eager_kernels;
  auto steady = [&](size_t k) { return w.steady(k); };
  auto phase = [&](size_t k) { return w.phase(k); };
  std::vector<uint8_t> missed_mask(n, 0);
  std::vector<int64_t> captured, missed;
  std::vector<uint8_t>& mask = missed_mask;
  size_t eager_iters = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!steady(k) || !st.steps[k].serving || st.steps[k].serving->batch_size < 0) continue;
    int64_t b = st.steps[k].serving->batch_size;
    if (graph_kernels[k] > 0) captured.push_back(b);
  }
  // The batch sizes the capture pass captured a graph for (execution_details.json beside
  // capture_traces/, read with --capture): a size that ran eagerly is found from one trace,
  // without an iteration of another size replaying a graph.
  std::vector<int64_t> from_captures;
  if (graphs)
    for (const GraphCapture& g : graphs->captures)
      if (g.batch_size >= 0) from_captures.push_back(g.batch_size);
  std::sort(from_captures.begin(), from_captures.end());
  from_captures.erase(std::unique(from_captures.begin(), from_captures.end()), from_captures.end());
  captured.insert(captured.end(), from_captures.begin(), from_captures.end());
  std::sort(captured.begin(), captured.end());
  captured.erase(std::unique(captured.begin(), captured.end()), captured.end());
  for (size_t k = 0; k < n && !captured.empty(); ++k) {
    if (!steady(k) || !st.steps[k].serving || st.steps[k].serving->batch_size < 0) continue;
    if (graph_kernels[k] > 0 || eager_kernels[k] == 0) continue;
    if (phase(k) != IterationPhase::kDecode) continue;  // prefills run eagerly on purpose
    mask[k] = 1;
    ++eager_iters;
    missed.push_back(st.steps[k].serving->batch_size);
  }
  std::sort(missed.begin(), missed.end());
  missed.erase(std::unique(missed.begin(), missed.end()), missed.end());
  if (eager_iters > 0) {
    auto list = [](const std::vector<int64_t>& v) {
      std::string r;
      for (size_t i = 0; i < v.size() && i < 12; ++i) r += (i ? ", " : "") + std::to_string(v[i]);
      if (v.size() > 12) r += ", ...";
      return r;
    };
    Finding f;
    f.kind = "serving_batch_missed_graph";
    f.severity = Severity::kLow;
    f.title = std::to_string(eager_iters) + " decode iteration" + (eager_iters > 1 ? "s" : "") +
              " at batch size " + list(missed) + " ran eagerly; graphs exist for batch size " +
              list(captured);
    f.evidence = {{"eager_decode_iterations", static_cast<double>(eager_iters), "count"},
                  {"missed_batch_sizes", static_cast<double>(missed.size()), "count"},
                  {"graph_batch_sizes", static_cast<double>(captured.size()), "count"},
                  {"captured_batch_sizes_from_capture_pass",
                   static_cast<double>(from_captures.size()), "count"}};
    f.rule =
        "steady-state decode iterations that launched kernels one at a time while other "
        "iterations of the trace replayed a CUDA/HIP graph, or while the capture pass "
        "(--capture, execution_details.json) captured graphs for other batch sizes (batch "
        "sizes from the iteration annotations); priced as their launches replaying a graph";
    advice::Advice a = advice::serving_batch_missed_graph(c.device, engine);
    f.recommendation = std::move(a.text);
    f.why = "batch sizes run eagerly: " + list(missed) + "; with a graph: " + list(captured) +
            (from_captures.empty() ? std::string(" (replayed in this trace)")
                                   : " (captured: " + list(from_captures) +
                                         ", from the capture pass's execution_details.json)");
    ReplayChange ch;
    ch.launch_overhead_steps = mask;
    // The launch overhead of these iterations is the missed graph's: gpu_launch_overhead
    // keeps the other iterations' (none left: it goes), so no time is counted twice.
    for (size_t i = 0; i < c.out.findings.size(); ++i) {
      if (c.out.findings[i].kind != "gpu_launch_overhead" || !c.changes[i]) continue;
      ReplayChange& lc = *c.changes[i];
      std::vector<uint8_t> rest =
          lc.remove_launch_overhead ? std::vector<uint8_t>(n, 1) : lc.launch_overhead_steps;
      rest.resize(n, 0);
      for (size_t k = 0; k < n; ++k)
        if (mask[k]) rest[k] = 0;
      lc.remove_launch_overhead = false;
      lc.launch_overhead_steps = rest;
      if (std::find(rest.begin(), rest.end(), 1) == rest.end()) {
        c.out.findings.erase(c.out.findings.begin() + static_cast<std::ptrdiff_t>(i));
        c.changes.erase(c.changes.begin() + static_cast<std::ptrdiff_t>(i));
        c.generic.erase(c.generic.begin() + static_cast<std::ptrdiff_t>(i));
      }
      break;
    }
    c.add(std::move(f), std::move(ch));
  }
  return missed_mask;
}

// 2. Decode iterations whose host work (outside waits for the GPU) outlasts their GPU work.
void rule_serving_host_bound_decode(Context& c, const ServingWork& w,
                                    const std::vector<uint8_t>& missed_mask,
                                    std::string_view engine, bool graphs_replayed) {
  const Trace& t = c.trace;
  const SliceTable& s = t.slices;
  const StepsResult& st = w.st;
  const size_t n = w.n;
  auto steady = [&](size_t k) { return w.steady(k); };
  auto phase = [&](size_t k) { return w.phase(k); };
  auto step_of = [&](int64_t ts) { return w.step_of(ts); };
  std::vector<uint8_t> mask(n, 0);
  int64_t host = 0, wait = 0, busy = 0;
  size_t count = 0;
  std::unordered_map<StringId, int64_t> self_by_name;
  std::vector<int8_t> waits(t.strings.size(), -1);
  auto candidate = [&](size_t k) {
    // An eager iteration at an uncaptured size is serving_batch_missed_graph's: its host time
    // is the launches a graph replay removes.
    return steady(k) && phase(k) == IterationPhase::kDecode && st.steps[k].gpu_busy_ns >= 0 &&
           !missed_mask[k];
  };
  // One pass over the host slices: per decode iteration, the time in waits for the GPU
  // (the whole call: what it waits for is the GPU's work) and the self time of the rest.
  std::vector<int64_t> waited(n, 0);
  std::vector<std::unordered_map<StringId, int64_t>> selfs(n);
  auto is_wait = [&](size_t i) {
    int8_t& wv = waits[s.name[i]];
    if (wv < 0) {
      std::string_view nm = t.str(s.name[i]);
      wv = analyze_detail::is_host_sync_call_name(nm) ||
                   analyze_detail::is_blocking_copy_call_name(nm) ||
                   analyze_detail::is_device_read_op_name(nm)
               ? 1
               : 0;
    }
    return wv == 1;
  };
  StepMarkers markers = step_markers(t, st.step_annotation);
  std::vector<uint32_t> step_track(n, UINT32_MAX);
  for (size_t k = 0; k < n && k < markers.slices.size(); ++k)
    step_track[k] = s.track[markers.slices[k]];
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i]) || s.dur[i] < 0) continue;
    int64_t k = step_of(s.ts[i]);
    if (k < 0 || !candidate(static_cast<size_t>(k))) continue;
    const StepInfo& x = st.steps[static_cast<size_t>(k)];
    if (s.end(i) > x.begin_ns + x.dur_ns || s.track[i] != step_track[static_cast<size_t>(k)])
      continue;
    if (is_wait(i)) {
      // The outermost wait only (aten::item holds the copy that waits).
      bool nested = false;
      for (int32_t p = s.parent[i]; p >= 0 && !nested; p = s.parent[static_cast<size_t>(p)])
        nested = is_wait(static_cast<size_t>(p));
      if (!nested) waited[static_cast<size_t>(k)] += s.dur[i];
    } else if (s.ts[i] != x.begin_ns || s.dur[i] != x.dur_ns) {  // not the marker itself
      selfs[static_cast<size_t>(k)][s.name[i]] += s.self[i];
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (!candidate(k)) continue;
    const StepInfo& x = st.steps[k];
    int64_t w = std::min(waited[k], x.dur_ns);
    int64_t work = std::max<int64_t>(0, x.dur_ns - w);
    if (work <= x.gpu_busy_ns) continue;
    mask[k] = 1;
    ++count;
    host += work;
    wait += w;
    busy += x.gpu_busy_ns;
    for (auto& [nm, v] : selfs[k]) self_by_name[nm] += v;
  }
  if (count > 0) {
    std::pair<int64_t, StringId> top{0, 0};
    for (auto& [nm, v] : self_by_name) top = std::max(top, std::make_pair(v, nm));
    Finding f;
    f.kind = "serving_host_bound_decode";
    f.severity = Severity::kMedium;
    f.title = std::to_string(count) + " decode iteration" + (count > 1 ? "s" : "") +
              " spend more time on the host than on the GPU (host " +
              format_duration_ns(static_cast<double>(host) / count) + " vs GPU busy " +
              format_duration_ns(static_cast<double>(busy) / count) + " per iteration)";
    f.evidence = {{"decode_iterations", static_cast<double>(count), "count"},
                  {"host_work_ns", static_cast<double>(host), "ns"},
                  {"host_wait_ns", static_cast<double>(wait), "ns"},
                  {"gpu_busy_ns", static_cast<double>(busy), "ns"},
                  {"host_over_gpu", busy > 0 ? static_cast<double>(host) / busy : 0, "ratio"}};
    if (top.first > 0)
      f.evidence.push_back({"top_host_op_self_ns", static_cast<double>(top.first), "ns"});
    f.rule =
        "steady-state decode iterations (step model) whose host time outside waits for the GPU "
        "(syncs, blocking copies, .item()) exceeds their GPU busy time";
    std::string top_name = top.first > 0 ? std::string(t.str(top.second)) : "";
    if (!top_name.empty()) f.ops.push_back(top_name);
    advice::Advice a = advice::serving_host_bound_decode(
        c.device, engine, graphs_replayed,
        top_name.empty()
            ? std::string()
            : top_name + " (" + format_duration_ns(static_cast<double>(top.first)) + " self)");
    f.recommendation = std::move(a.text);
    f.why = "host " + format_duration_ns(static_cast<double>(host)) + " vs GPU busy " +
            format_duration_ns(static_cast<double>(busy)) + " over " + std::to_string(count) +
            " decode iterations (" + format_duration_ns(static_cast<double>(wait)) +
            " of waits for the GPU left out)" + (a.why.empty() ? "" : "; " + a.why) +
            "; priced as the bound the host's part of those iterations costs nothing";
    f.est_savings_ns = host;
    ReplayChange ch;
    ch.free_host_steps = std::move(mask);
    c.add(std::move(f), std::move(ch), true);
  }
}

// 3. Graph coverage: the share of GPU time inside graph replays.
void rule_serving_graph_coverage(Context& c, const ServingWork& w, const GraphsResult* graphs,
                                 std::string_view engine, bool serving, bool launch_finding) {
  const StepsResult& st = w.st;
  const size_t n = w.n;
  const int64_t gpu_ns = w.gpu_ns, graph_ns = w.graph_ns;
  const uint64_t eager_total = w.eager_total, graph_total = w.graph_total;
  const std::vector<uint64_t>& eager_kernels = w.eager_kernels;
  const bool graphs_replayed = graph_total > 0;
  double coverage =
      gpu_ns > 0 ? pct(static_cast<double>(graph_ns), static_cast<double>(gpu_ns)) : 0;
  // A capture pass (one window that captured a graph) launches eagerly to warm up and capture:
  // not the steady state whose coverage matters.
  const bool capture_pass = st.steps.empty() && graphs && graphs->captured_here > 0;
  if (gpu_ns > 0 && (graphs_replayed || serving) && eager_total > 0 && coverage < 90.0 &&
      !capture_pass) {
    if (launch_finding) {
      // gpu_launch_overhead already prices the launches: give it the coverage as evidence.
      for (Finding& f : c.out.findings)
        if (f.kind == "gpu_launch_overhead")
          f.evidence.push_back({"graph_gpu_time_pct", coverage, "%"});
    } else {
      Finding f;
      f.kind = "serving_graph_coverage";
      f.severity = Severity::kLow;
      f.title = format_percent(coverage / 100) + " of the GPU time runs inside graph replays; " +
                std::to_string(eager_total) + " GPU ops are launched one at a time";
      f.evidence = {{"graph_gpu_time_pct", coverage, "%"},
                    {"graph_gpu_ns", static_cast<double>(graph_ns), "ns"},
                    {"gpu_ns", static_cast<double>(gpu_ns), "ns"},
                    {"graph_replayed_ops", static_cast<double>(graph_total), "count"},
                    {"eager_launched_ops", static_cast<double>(eager_total), "count"}};
      f.rule =
          "GPU time outside CUDA/HIP graph replays >= 10% in a serving trace or one that "
          "replays graphs; priced as the eager launches' host cost and launch delay -> 0";
      advice::Advice a = advice::serving_graph_coverage(c.device, engine, coverage);
      f.recommendation = std::move(a.text);
      f.why = std::move(a.why);
      ReplayChange ch;
      if (n == 0) {
        ch.remove_launch_overhead = true;
      } else {
        ch.launch_overhead_steps.assign(n, 0);
        for (size_t k = 0; k < n; ++k) ch.launch_overhead_steps[k] = eager_kernels[k] > 0;
      }
      c.add(std::move(f), std::move(ch));
    }
  }
}

// 4. Prefill iterations much longer than decodes, taking a large share: they stall decodes.
void rule_serving_prefill_imbalance(Context& c, const ServingWork& w, std::string_view engine) {
  const StepsResult& st = w.st;
  const size_t n = w.n;
  auto steady = [&](size_t k) { return w.steady(k); };
  auto phase = [&](size_t k) { return w.phase(k); };
  double pre = 0, dec = 0, all = 0;
  size_t np = 0, nd = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!steady(k)) continue;
    const StepInfo& x = st.steps[k];
    double d = static_cast<double>(st.has_gpu && x.gpu_dur_ns > 0 ? x.gpu_dur_ns : x.dur_ns);
    all += d;
    if (phase(k) == IterationPhase::kPrefill) {
      pre += d;
      ++np;
    } else if (phase(k) == IterationPhase::kDecode) {
      dec += d;
      ++nd;
    }
  }
  double share = pct(pre, all);
  double ratio = np && nd && dec > 0 ? (pre / np) / (dec / nd) : 0;
  if (np >= 1 && nd >= 2 && ratio >= 4.0 && share >= 20.0) {
    Finding f;
    f.kind = "serving_prefill_decode_imbalance";
    f.severity = share >= 25 ? Severity::kMedium : Severity::kLow;
    f.title = "Prefill iterations take " + format_percent(share / 100) +
              " of the serving time and each lasts " + format_fixed(ratio, 1) + "x" +
              " a decode iteration: running decodes stall behind them";
    f.evidence = {{"prefill_iterations", static_cast<double>(np), "count"},
                  {"decode_iterations", static_cast<double>(nd), "count"},
                  {"prefill_mean_ns", pre / np, "ns"},
                  {"decode_mean_ns", dec / nd, "ns"},
                  {"prefill_share_pct", share, "%"},
                  {"prefill_over_decode", ratio, "ratio"}};
    f.rule =
        "steady-state prefill iterations >= 20% of the iterations' time and >= 4x the "
        "mean decode iteration (step model phases)";
    advice::Advice a = advice::serving_prefill_imbalance(engine);
    f.recommendation = std::move(a.text);
    f.why = std::to_string(np) + " prefill iterations of " + format_duration_ns(pre / np) +
            " on average against " + std::to_string(nd) + " decode iterations of " +
            format_duration_ns(dec / nd);
    c.add(std::move(f));
  }
}

// Serving engines (vLLM/SGLang iterations, or any step model whose iterations have a phase) and
// graph-replayed work: decode iterations whose host work outlasts their GPU work, GPU time
// outside graph replays, batch sizes that ran eagerly beside captured ones, and prefills that
// stall decodes. Each is priced by the replay over the step model's iterations where a change
// can be replayed (`launch_overhead_steps`, `free_host_steps`).
void rule_serving(Context& c, const StepsResult& st, bool launch_finding,
                  const GraphsResult* graphs) {
  bool serving = st.source == StepSource::kVllm || st.source == StepSource::kSglang;
  for (const StepInfo& x : st.steps)
    serving |= x.serving && x.serving->phase != IterationPhase::kUnknown;
  std::string_view engine = st.source == StepSource::kVllm     ? "vllm"
                            : st.source == StepSource::kSglang ? "sglang"
                                                               : "";
  ServingWork w(c.trace, st);
  if (!serving && w.graph_ns == 0) return;
  bool graphs_replayed = w.graph_total > 0;
  std::vector<uint8_t> missed_mask = rule_serving_batch_missed_graph(c, w, graphs, engine);
  if (serving && st.has_gpu)
    rule_serving_host_bound_decode(c, w, missed_mask, engine, graphs_replayed);
  rule_serving_graph_coverage(c, w, graphs, engine, serving, launch_finding);
  rule_serving_prefill_imbalance(c, w, engine);
}

// Prices the findings with the step replay: each change alone (its own saving and per-step
// spread), then the changes added one by one in that order, each finding keeping what its change
// adds to those above it, so that no two findings count the same time and all of them together
// are one replay that never exceeds the step. Findings the replay cannot price (ranks) keep
// their estimate, capped by what the priced ones leave of the step.
void price_findings(Context& c, const StepModel* model) {
  BottleneckResult& out = c.out;
  std::vector<size_t> priced;
  std::optional<ReplayTime> base_time;
  if (model && model->usable()) base_time = model->replay();
  // The replay's steps (each to the end of the GPU work it launched) are the time the savings
  // are a share of: a host step span can end long before its GPU work does.
  if (base_time && base_time->total_ns > 0) {
    out.basis_ns = c.basis_ns = base_time->total_ns;
    // No iterations: the one window replayed (the step thread's span and the GPU work it
    // launched), not the trace's span.
    if (model->source() == StepSource::kTraceSpan) out.basis = "window";
  }
  const double basis = static_cast<double>(c.basis_ns);
  int64_t left = c.basis_ns;
  if (base_time) {
    const ReplayTime& base = *base_time;
    out.replayed = true;
    out.replay_step_ns = base.total_ns;
    out.replay_steps = model->steps();
    out.replay_window = model->source();
    for (size_t k = 0; k < out.findings.size(); ++k) {
      if (!c.changes[k]) continue;
      Finding& f = out.findings[k];
      ReplaySaving alone = replay_saving(base, model->replay(*c.changes[k]));
      f.priced_by = "replay";
      f.saving_alone_ns = alone.saving_ns;
      f.step_saving_min_ns = alone.step_min_ns;
      f.step_saving_median_ns = alone.step_median_ns;
      f.step_saving_max_ns = alone.step_max_ns;
      priced.push_back(k);
    }
    std::stable_sort(priced.begin(), priced.end(), [&](size_t a, size_t b) {
      if (c.generic[a] != c.generic[b]) return c.generic[a] < c.generic[b];
      return out.findings[a].saving_alone_ns > out.findings[b].saving_alone_ns;
    });
    ReplayChange all;
    int64_t best = base.total_ns;
    std::string above;  // kinds already applied
    for (size_t k : priced) {
      Finding& f = out.findings[k];
      all.merge(*c.changes[k]);
      int64_t now = model->replay(all).total_ns;
      // What it adds to the findings above, never more than it saves alone (two changes can
      // save more together than apart: the rest stays in the combined replay).
      int64_t excl = std::clamp<int64_t>(std::min(best - now, f.saving_alone_ns), 0,
                                         std::max<int64_t>(left, 0));
      best = std::min(best, now);
      f.est_savings_ns = excl;
      left -= excl;
      ++out.combined_findings;
      double alone_pct = pct(static_cast<double>(f.saving_alone_ns), basis);
      if (alone_pct < 1.0) {
        f.replay_note =
            f.kind == "sync_stall"
                ? "the replay without these waits saves ~0: the GPU is busy while the host "
                  "waits, so the step lasts as long as the GPU's work"
                : "the replay of the step with this change saves ~0: the time it measures "
                  "overlaps work the step still has to do";
      } else if (f.saving_alone_ns > 0 &&
                 static_cast<double>(excl) < 0.8 * static_cast<double>(f.saving_alone_ns)) {
        f.replay_note = "alone it saves " +
                        format_duration_ns(static_cast<double>(f.saving_alone_ns)) +
                        "; the rest of that is already counted by " + above;
      }
      if (!above.empty()) above += ", ";
      above += f.kind;
    }
    out.combined_savings_ns = std::min(base.total_ns - best, c.basis_ns);
  }
  for (size_t k = 0; k < out.findings.size(); ++k) {
    Finding& f = out.findings[k];
    if (f.priced_by.empty() && f.est_savings_ns > 0) {
      f.priced_by = "estimate";
      f.est_savings_ns = std::clamp<int64_t>(f.est_savings_ns, 0, std::max<int64_t>(left, 0));
      left -= f.est_savings_ns;
    }
    f.est_savings_pct = pct(static_cast<double>(f.est_savings_ns), basis);
    if (f.priced_by == "replay") f.severity = severity_for_pct(f.est_savings_pct);
  }
  out.combined_savings_pct = pct(static_cast<double>(out.combined_savings_ns), basis);
}

}  // namespace

BottleneckResult find_bottlenecks(const Trace& trace, const BottleneckInputs& in) {
  BottleneckResult out;
  std::optional<StepsResult> own_steps;
  const StepsResult* steps = in.steps;
  if (!steps) steps = &own_steps.emplace(analyze_steps(trace));
  if (!steps->steps.empty() && steps->total_ns > 0) {
    out.basis_ns = steps->total_ns;
    out.basis = "steps";
  } else {
    out.basis_ns = trace.span_ns();
    out.basis = "span";
  }
  Context c{trace, out, out.basis_ns, trace_device_caps(trace), false, std::nullopt, {}, {}};
  if (in.roofline && in.roofline->peaks_known)
    c.peaks = in.roofline->peaks;
  else
    c.peaks = find_device_peaks(c.device.name);
  for (StringId k = 0; k < trace.strings.size() && !c.compiled; ++k)
    c.compiled = advice::is_compiled_region_name(trace.strings.get(k));
  rule_hotspots(c);
  rule_data_loading(c, *steps);
  rule_sync_stalls(c);
  bool has_gpu = false;
  for (uint32_t k = 0; k < trace.tracks.size() && !has_gpu; ++k) has_gpu = trace.is_gpu_track(k);
  if (has_gpu) {
    std::optional<GpuResult> own_gpu;
    std::optional<KernelsResult> own_kernels;
    const GpuResult* gpu = in.gpu ? in.gpu : &own_gpu.emplace(analyze_gpu(trace));
    const KernelsResult* kernels =
        in.kernels ? in.kernels : &own_kernels.emplace(analyze_kernels(trace));
    rule_gpu(c, *gpu, *kernels, *steps, in.graphs);
    std::optional<RooflineResult> own_roofline;
    const RooflineResult* roofline =
        in.roofline ? in.roofline : &own_roofline.emplace(analyze_roofline(trace, *steps));
    rule_roofline(c, *roofline);
    rule_kernel_whatif(c, *gpu, *kernels, roofline);
  }
  {
    bool launch_finding = false;
    for (const Finding& f : out.findings) launch_finding |= f.kind == "gpu_launch_overhead";
    rule_serving(c, *steps, launch_finding, in.graphs);
  }
  if (in.ranks) {
    rule_ranks(c, *in.ranks);
    rule_stragglers(c, *in.ranks);
  }
  std::optional<MemoryResult> own_memory;
  std::optional<LeakResult> own_leaks;
  const MemoryResult* memory = in.memory;
  const LeakResult* leaks = in.leaks;
  if (trace.memory.size() > 0) {
    if (!memory) memory = &own_memory.emplace(analyze_memory(trace));
    LeakOptions lo;
    lo.unfreed_by_stack = false;  // a heap analysis the rules do not need
    if (!leaks) leaks = &own_leaks.emplace(analyze_leaks(trace, *steps, lo));
  }
  rule_memory(c, memory, leaks);
  std::optional<StepModel> own_model;
  const StepModel* model = in.model;
  if (!model && !c.changes.empty()) {
    if (in.graph && &in.graph->trace() == &trace &&
        in.graph->step_annotation() == steps->step_annotation)
      model = &in.graph->replay();
    else
      model = &own_model.emplace(trace, steps->step_annotation);
  }
  price_findings(c, model);
  std::stable_sort(out.findings.begin(), out.findings.end(),
                   [](const Finding& a, const Finding& b) {
                     if (a.est_savings_ns != b.est_savings_ns)
                       return a.est_savings_ns > b.est_savings_ns;
                     return static_cast<int>(a.severity) < static_cast<int>(b.severity);
                   });
  return out;
}

}  // namespace mlprof
