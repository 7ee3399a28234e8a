#include "mlprof/analyze/kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "mlprof/analyze/device_table.h"
#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/graphs.h"
#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/kernel_class.h"

namespace mlprof {

namespace {

struct Accum {
  StringId name = 0;
  KernelType type = KernelType::kComputation;
  GpuWorkKind kind = GpuWorkKind::kKernel;
  uint64_t count = 0;
  int64_t total = 0, min = INT64_MAX, max = INT64_MIN;
  double mean = 0, m2 = 0;  // Welford
  // Launch configuration of the first call, and whether later calls differed.
  uint32_t first_slice = UINT32_MAX;
  bool varies = false;
  double occupancy_weighted = 0;
  int64_t occupancy_ns = 0;
  double blocks_per_sm_weighted = 0;
  int64_t blocks_per_sm_ns = 0;
};

std::string arg_string(const Trace& t, const Arg* a) {
  if (a == nullptr) return {};
  std::string s = t.arg_text(a[0]);
  s.erase(std::remove(s.begin(), s.end(), '"'), s.end());
  return s;
}

// "[16,\n 1, 1]" (an array as the file spelled it) -> "[16, 1, 1]".
std::string dims_text(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    out.push_back(c);
    if (c == ',') out.push_back(' ');
  }
  return out;
}

bool same_arg(const Arg* a, const Arg* b) {
  if ((a == nullptr) != (b == nullptr)) return false;
  if (a == nullptr) return true;
  if (a->type != b->type) return false;
  return a->i == b->i;  // the union's bits: ints, doubles and interned strings alike
}

// HTA's kernel_type_breakdown: sweep over each type's merged intervals with a bitmask of the
// types running; each distinct mask becomes "A overlapping B" in the order below.
std::vector<KernelTypeTime> type_breakdown(const GpuEvents& ev, bool include_memory) {
  const KernelType order[3] = {KernelType::kComputation, KernelType::kCommunication,
                               KernelType::kMemory};
  int types = include_memory ? 3 : 2;
  std::vector<std::pair<int64_t, int>> points;  // (time, +bit / -bit)
  for (int k = 0; k < types; ++k) {
    std::vector<Interval> iv;
    for (const GpuEvent& e : ev.events) {
      if (e.type == order[k]) iv.emplace_back(e.ts, e.end);
    }
    merge_intervals(iv);
    for (const auto& [b, e] : iv) {
      points.emplace_back(b, 1 << k);
      points.emplace_back(e, -(1 << k));
    }
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<int, int64_t> by_mask;
  int running = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    running += points[i].second;
    if (running > 0) by_mask[running] += points[i + 1].first - points[i].first;
  }
  std::vector<KernelTypeTime> out;
  int64_t total = 0;
  for (const auto& [mask, ns] : by_mask) {
    KernelTypeTime t;
    for (int k = 0; k < types; ++k) {
      if ((mask & (1 << k)) == 0) continue;
      if (!t.kernel_type.empty()) t.kernel_type += " overlapping ";
      t.kernel_type += kernel_type_name(order[k]);
    }
    t.time_ns = ns;
    total += ns;
    out.push_back(std::move(t));
  }
  for (KernelTypeTime& t : out) {
    t.percent = total > 0 ? std::round(1000.0 * t.time_ns / total) / 10.0 : 0.0;
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelTypeTime& a, const KernelTypeTime& b) {
    return a.time_ns > b.time_ns;
  });
  return out;
}

struct NameSum {
  std::string name;
  double sum, max, min, mean, std;
};

double sample_std(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// HTA's _aggr_gpu_kernel_time for one kernel type.
std::vector<HtaKernelRow> hta_rows(const std::vector<KernelStats>& kernels, KernelType type,
                                   const KernelsOptions& o, int32_t rank) {
  std::vector<NameSum> rows;
  for (const KernelStats& k : kernels) {
    if (k.type != type) continue;
    rows.push_back({k.name, k.total_ns / 1000.0, k.max_ns / 1000.0, k.min_ns / 1000.0,
                    k.mean_ns / 1000.0, k.std_ns / 1000.0});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const NameSum& a, const NameSum& b) { return a.sum > b.sum; });
  std::vector<HtaKernelRow> out;
  auto emit = [&](const std::string& name, double sum, double max, double min, double mean,
                  double std) {
    HtaKernelRow r;
    r.name = name;
    r.kernel_type = std::string(kernel_type_name(type));
    r.sum_us = sum;
    r.max_us = max;
    r.min_us = min;
    r.mean_us = mean;
    r.std_us = std;
    r.rank = rank;
    out.push_back(std::move(r));
  };
  if (rows.size() <= o.hta_num_kernels) {
    for (const NameSum& r : rows) emit(r.name, r.sum, r.max, r.min, r.mean, r.std);
  } else {
    // Kernels past the duration_ratio quantile of the cumulative sums, or past num_kernels,
    // fold into "others", whose statistics are over the per-name sums (HTA's quirk).
    std::vector<double> cumsum(rows.size());
    double c = 0;
    for (size_t i = 0; i < rows.size(); ++i) cumsum[i] = c += rows[i].sum;
    double x = o.hta_duration_ratio * static_cast<double>(rows.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(x));
    double q =
        lo + 1 < rows.size() ? cumsum[lo] + (cumsum[lo + 1] - cumsum[lo]) * (x - lo) : cumsum[lo];
    std::map<std::string, std::vector<double>> groups;
    for (size_t i = 0; i < rows.size(); ++i) {
      bool other = cumsum[i] > q || i >= o.hta_num_kernels;
      groups[other ? std::string("others") : rows[i].name].push_back(rows[i].sum);
    }
    for (const auto& [name, sums] : groups) {
      double sum = 0;
      for (double s : sums) sum += s;
      emit(name, sum, *std::max_element(sums.begin(), sums.end()),
           *std::min_element(sums.begin(), sums.end()), sum / sums.size(), sample_std(sums));
    }
  }
  return out;
}

// The launch-configuration args of kernel slices, found by key.
struct LaunchArgs {
  const Trace& trace;
  StringId k_grid, k_block, k_regs, k_smem, k_bps, k_wps, k_occ;
  const Arg* find(uint32_t slice, StringId k) const {
    if (k == StringPool::kNotFound) return nullptr;
    const SliceTable& s = trace.slices;
    return trace.find_arg(s.args_begin[slice], s.args_count[slice], k);
  }
};

LaunchArgs launch_args(const Trace& trace) {
  auto key = [&](const char* k) { return trace.strings.find(k); };
  return LaunchArgs{trace,
                    key("grid"),
                    key("block"),
                    key("registers per thread"),
                    key("shared memory"),
                    key("blocks per SM"),
                    key("warps per SM"),
                    key("est. achieved occupancy %")};
}

// The rank, the device's vendor and matrix unit, and whether tensor-core use is measurable.
void set_device(const Trace& trace, KernelsResult& r) {
  r.rank = trace.meta.rank >= 0 ? trace.meta.rank : 0;
  for (const DeviceInfo& d : trace.meta.devices) r.amd_gpu |= is_amd_device(d);
  DeviceCaps caps = trace_device_caps(trace);
  r.device = std::string(device_vendor_name(caps.vendor));
  // An unidentified device keeps the name heuristics (old traces have no deviceProperties).
  r.tensor_cores_measured =
      caps.vendor == DeviceVendor::kUnknown ? !r.amd_gpu : caps.matrix_use_measurable;
  if (!caps.matrix_unit.empty()) r.matrix_unit = caps.matrix_unit;
}

// Per kernel name, in order of first run: count, duration statistics, the first call's launch
// and whether later calls' grid or block differed, duration-weighted occupancy and blocks/SM.
std::vector<Accum> accumulate_by_name(const Trace& trace, const GpuEvents& ev,
                                      const KernelsOptions& o, const LaunchArgs& la) {
  const SliceTable& s = trace.slices;
  std::unordered_map<StringId, uint32_t> index;
  std::vector<Accum> acc;
  for (const GpuEvent& e : ev.events) {
    if (!o.include_memory && e.type == KernelType::kMemory) continue;
    StringId name = s.name[e.slice];
    auto [it, added] = index.emplace(name, static_cast<uint32_t>(acc.size()));
    if (added) {
      acc.emplace_back();
      acc.back().name = name;
      acc.back().type = e.type;
      acc.back().kind = e.kind;
      acc.back().first_slice = e.slice;
    }
    Accum& a = acc[it->second];
    int64_t d = e.dur();
    ++a.count;
    a.total += d;
    a.min = std::min(a.min, d);
    a.max = std::max(a.max, d);
    double delta = static_cast<double>(d) - a.mean;
    a.mean += delta / static_cast<double>(a.count);
    a.m2 += delta * (static_cast<double>(d) - a.mean);
    if (e.kind == GpuWorkKind::kKernel) {
      if (!added && !a.varies) {
        a.varies = !same_arg(la.find(e.slice, la.k_grid), la.find(a.first_slice, la.k_grid)) ||
                   !same_arg(la.find(e.slice, la.k_block), la.find(a.first_slice, la.k_block));
      }
      if (const Arg* occ = la.find(e.slice, la.k_occ)) {
        a.occupancy_weighted += occ->as_double().value_or(0) * static_cast<double>(d);
        a.occupancy_ns += d;
      }
      if (const Arg* bps = la.find(e.slice, la.k_bps)) {
        a.blocks_per_sm_weighted += bps->as_double().value_or(0) * static_cast<double>(d);
        a.blocks_per_sm_ns += d;
      }
    }
  }
  return acc;
}

// The kernel rows (by total time), the totals, shares and tensor-core share.
void set_kernel_rows(const Trace& trace, const std::vector<Accum>& acc, const LaunchArgs& la,
                     KernelsResult& r) {
  auto find = [&](uint32_t slice, StringId k) { return la.find(slice, k); };
  for (const Accum& a : acc) {
    KernelStats k;
    k.name = std::string(trace.str(a.name));
    k.type = a.type;
    k.kind = a.kind;
    k.count = a.count;
    k.total_ns = a.total;
    k.min_ns = a.min;
    k.max_ns = a.max;
    k.mean_ns = a.mean;
    k.std_ns = a.count > 1 ? std::sqrt(a.m2 / static_cast<double>(a.count - 1)) : 0.0;
    k.tensor_cores =
        r.tensor_cores_measured && a.kind == GpuWorkKind::kKernel && uses_tensor_cores(k.name);
    if (a.kind == GpuWorkKind::kKernel) {
      LaunchConfig& l = k.launch;
      l.grid = arg_string(trace, find(a.first_slice, la.k_grid));
      l.block = arg_string(trace, find(a.first_slice, la.k_block));
      if (const Arg* x = find(a.first_slice, la.k_regs))
        l.registers_per_thread = x->as_int().value_or(-1);
      if (const Arg* x = find(a.first_slice, la.k_smem)) l.shared_memory = x->as_int().value_or(-1);
      if (a.blocks_per_sm_ns > 0)
        l.blocks_per_sm = a.blocks_per_sm_weighted / static_cast<double>(a.blocks_per_sm_ns);
      if (const Arg* x = find(a.first_slice, la.k_wps))
        l.warps_per_sm = x->as_double().value_or(-1);
      if (a.occupancy_ns > 0) l.achieved_occupancy = a.occupancy_weighted / a.occupancy_ns;
      l.varies = a.varies;
    }
    r.total_gpu_ns += a.total;
    r.kernel_count += a.count;
    if (a.type == KernelType::kComputation) {
      r.computation_ns += a.total;
      if (k.tensor_cores) r.tensor_core_ns += a.total;
    }
    r.kernels.push_back(std::move(k));
  }
  for (KernelStats& k : r.kernels) {
    k.share = r.total_gpu_ns > 0 ? static_cast<double>(k.total_ns) / r.total_gpu_ns : 0.0;
  }
  r.tensor_core_share =
      r.computation_ns > 0 ? static_cast<double>(r.tensor_core_ns) / r.computation_ns : 0.0;
  std::sort(r.kernels.begin(), r.kernels.end(), [](const KernelStats& a, const KernelStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
}

// Kernels by launching op: a row per (op, kernel, grid, block, registers, shared memory), a
// replayed kernel's op the captured one (a name of the capture pass, keyed apart).
void set_rows_by_op(const Trace& trace, const GpuEvents& ev, const LaunchArgs& la,
                    const GraphsResult* replays, KernelsResult& r) {
  const SliceTable& s = trace.slices;
  auto find = [&](uint32_t slice, StringId k) { return la.find(slice, k); };
  struct OpAcc {
    KernelOpRow row;
    double bps_w = 0, occ_w = 0;
    int64_t bps_ns = 0, occ_ns = 0;
  };
  auto bits = [](const Arg* a) -> uint64_t {
    return a == nullptr ? ~0ull : (static_cast<uint64_t>(a->type) << 56) ^ a->u;
  };
  std::map<std::array<uint64_t, 6>, size_t> row_of;
  std::vector<OpAcc> rows;
  OpAttribution attribution(trace);
  for (const GpuEvent& e : ev.events) {
    if (e.kind != GpuWorkKind::kKernel) continue;
    int32_t op = attribution.op_of(e);
    uint64_t op_name = op < 0 ? ~0ull : s.name[static_cast<size_t>(op)];
    // A replayed kernel's op is the captured one (a name of the capture pass, keyed apart).
    const ReplayedKernel* rk = replays ? replays->replayed_kernel(e.slice) : nullptr;
    if (rk) op_name = (1ull << 62) | rk->op;
    const Arg* grid = find(e.slice, la.k_grid);
    const Arg* block = find(e.slice, la.k_block);
    const Arg* regs = find(e.slice, la.k_regs);
    const Arg* smem = find(e.slice, la.k_smem);
    std::array<uint64_t, 6> k{op_name,     s.name[e.slice], bits(grid),
                              bits(block), bits(regs),      bits(smem)};
    auto [it, added] = row_of.emplace(k, rows.size());
    if (added) {
      OpAcc a;
      a.row.op = rk       ? replays->names[rk->op]
                 : op < 0 ? "(no op)"
                          : std::string(trace.str(s.name[static_cast<size_t>(op)]));
      a.row.replayed = rk != nullptr;
      a.row.kernel = std::string(trace.str(s.name[e.slice]));
      a.row.grid = dims_text(arg_string(trace, grid));
      a.row.block = dims_text(arg_string(trace, block));
      if (regs) a.row.registers_per_thread = regs->as_int().value_or(-1);
      if (smem) a.row.shared_memory = smem->as_int().value_or(-1);
      a.row.min_ns = INT64_MAX;
      a.row.max_ns = INT64_MIN;
      rows.push_back(std::move(a));
    }
    OpAcc& a = rows[it->second];
    int64_t d = e.dur();
    ++a.row.count;
    a.row.total_ns += d;
    a.row.min_ns = std::min(a.row.min_ns, d);
    a.row.max_ns = std::max(a.row.max_ns, d);
    if (const Arg* x = find(e.slice, la.k_bps)) {
      a.bps_w += x->as_double().value_or(0) * static_cast<double>(d);
      a.bps_ns += d;
    }
    if (const Arg* x = find(e.slice, la.k_occ)) {
      a.occ_w += x->as_double().value_or(0) * static_cast<double>(d);
      a.occ_ns += d;
    }
  }
  for (OpAcc& a : rows) {
    a.row.mean_ns = static_cast<double>(a.row.total_ns) / static_cast<double>(a.row.count);
    if (a.bps_ns > 0) a.row.blocks_per_sm = a.bps_w / static_cast<double>(a.bps_ns);
    if (a.occ_ns > 0) a.row.achieved_occupancy = a.occ_w / static_cast<double>(a.occ_ns);
    r.by_op.push_back(std::move(a.row));
  }
  std::sort(r.by_op.begin(), r.by_op.end(), [](const KernelOpRow& a, const KernelOpRow& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.op != b.op) return a.op < b.op;
    return a.kernel < b.kernel;
  });
}

}  // namespace

KernelsResult analyze_kernels(const Trace& trace, const KernelsOptions& o,
                              const GraphsResult* replays) {
  KernelsResult r;
  set_device(trace, r);
  GpuEventsOptions eo;
  eo.hta_compatible = o.hta_compatible;
  GpuEvents ev = collect_gpu_events(trace, eo);
  // Syncs are waits, not kernels.
  ev.events.erase(std::remove_if(ev.events.begin(), ev.events.end(),
                                 [](const GpuEvent& e) { return e.kind == GpuWorkKind::kSync; }),
                  ev.events.end());
  const LaunchArgs la = launch_args(trace);
  set_kernel_rows(trace, accumulate_by_name(trace, ev, o, la), la, r);
  set_rows_by_op(trace, ev, la, replays, r);

  r.type_breakdown = type_breakdown(ev, o.include_memory);
  // HTA lists rows sorted by (kernel_type, name): COMMUNICATION, COMPUTATION, MEMORY.
  for (KernelType t : {KernelType::kCommunication, KernelType::kComputation, KernelType::kMemory}) {
    if (t == KernelType::kMemory && !o.include_memory) continue;
    std::vector<HtaKernelRow> rows = hta_rows(r.kernels, t, o, r.rank);
    std::sort(rows.begin(), rows.end(),
              [](const HtaKernelRow& a, const HtaKernelRow& b) { return a.name < b.name; });
    for (auto& row : rows) r.hta_breakdown.push_back(std::move(row));
  }
  return r;
}

}  // namespace mlprof
