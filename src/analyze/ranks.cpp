#include "mlprof/analyze/ranks.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/stats.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {

namespace {

int64_t dtype_size(std::string_view dtype) {
  // PyTorch's ScalarType names as record_param_comms writes them.
  if (dtype == "Double" || dtype == "Long" || dtype == "ComplexFloat") return 8;
  if (dtype == "Float" || dtype == "Int") return 4;
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short") return 2;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || dtype == "Float8_e4m3fn" ||
      dtype == "Float8_e5m2") {
    return 1;
  }
  if (dtype == "ComplexDouble") return 16;
  return 0;
}

// NCCL's bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md): the data each rank moves over
// the slowest link relative to the message size.
double bus_factor(std::string_view op, int64_t n) {
  if (n <= 1) return 1.0;
  double r = static_cast<double>(n);
  std::string lower(op);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto has = [&](const char* s) { return lower.find(s) != std::string::npos; };
  if (has("allreduce") || has("all_reduce")) return 2.0 * (r - 1) / r;
  if (has("allgather") || has("all_gather") || has("reduce_scatter") || has("reducescatter") ||
      has("alltoall") || has("all_to_all")) {
    return (r - 1) / r;
  }
  return 1.0;
}

}  // namespace

int32_t rank_of(const Trace& trace, const std::string& path) {
  if (trace.meta.rank >= 0) return trace.meta.rank;
  // "rank-3.json", "rank3_trace.json.gz", "worker_rank_3.pt.trace.json": the number after
  // "rank", else the last number of the file name.
  std::string name = std::filesystem::path(path).filename().string();
  size_t pos = name.find("rank");
  auto number_at = [&](size_t i) -> int32_t {
    while (i < name.size() && !std::isdigit(static_cast<unsigned char>(name[i]))) {
      if (name[i] != '-' && name[i] != '_') return -1;
      ++i;
    }
    if (i >= name.size()) return -1;
    int32_t n = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) {
      n = n * 10 + (name[i++] - '0');
    }
    return n;
  };
  if (pos != std::string::npos) {
    int32_t n = number_at(pos + 4);
    if (n >= 0) return n;
  }
  int32_t last = -1;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i])) &&
        (i == 0 || !std::isdigit(static_cast<unsigned char>(name[i - 1])))) {
      last = number_at(i);
    }
  }
  return last;
}

RanksResult analyze_ranks(const std::vector<const Trace*>& traces, const RanksOptions& o) {
  RanksResult r;
  std::map<std::string, CollectiveStats> collectives;
  for (const Trace* tp : traces) {
    const Trace& t = *tp;
    RankStats rs;
    rs.source = t.meta.source;
    rs.rank = rank_of(t, t.meta.source);
    // Steps: ProfilerStep#N on CPU threads.
    const SliceTable& s = t.slices;
    int64_t step_total = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (t.is_gpu_track(s.track[i]) || !step_number(t.str(s.name[i]))) continue;
      ++rs.steps;
      step_total += s.dur[i];
      rs.step_max_ns = std::max(rs.step_max_ns, s.dur[i]);
    }
    if (rs.steps > 0) rs.step_mean_ns = static_cast<double>(step_total) / rs.steps;

    GpuEventsOptions eo;
    eo.hta_compatible = o.hta_compatible;
    GpuEvents ev = collect_gpu_events(t, eo);
    rs.temporal = temporal_breakdown(t, ev, -1);
    rs.comm_comp_overlap_pct = comm_comp_overlap_pct(ev, -1);
    std::vector<Interval> comm, comp;
    for (const GpuEvent& e : ev.events) {
      if (e.type == KernelType::kCommunication) comm.emplace_back(e.ts, e.end);
      if (e.type == KernelType::kComputation) comp.emplace_back(e.ts, e.end);
    }
    merge_intervals(comm);
    merge_intervals(comp);
    rs.exposed_comm_ns = total_length(comm) - intersection_length(comm, comp);
    rs.comm_overhead_pct =
        rs.temporal.span_ns > 0 ? 100.0 * rs.exposed_comm_ns / rs.temporal.span_ns : 0.0;
    rs.wall_ns = rs.steps > 0 ? step_total : rs.temporal.span_ns;

    // Collectives: communication kernels, sized by the args Kineto copies from
    // record_param_comms ("Collective name", "In msg nelems", "dtype", "Group size").
    const StringId k_coll = t.strings.find("Collective name");
    const StringId k_nelems = t.strings.find("In msg nelems");
    const StringId k_dtype = t.strings.find("dtype");
    const StringId k_group = t.strings.find("Group size");
    auto find = [&](uint32_t slice, StringId k) -> const Arg* {
      if (k == StringPool::kNotFound) return nullptr;
      return t.find_arg(s.args_begin[slice], s.args_count[slice], k);
    };
    for (const GpuEvent& e : ev.events) {
      if (e.type != KernelType::kCommunication) continue;
      std::string name;
      const Arg* coll = find(e.slice, k_coll);
      if (coll != nullptr && coll->type == ArgType::kString) {
        name = std::string(t.str(coll->s));
      } else {
        // "ncclKernel_AllReduce_RING_LL_Sum_float(...)" -> "ncclKernel_AllReduce_RING_LL_Sum_float"
        std::string_view n = t.str(s.name[e.slice]);
        name = std::string(n.substr(0, n.find('(')));
      }
      CollectiveStats& c = collectives[name];
      c.name = name;
      ++c.count;
      c.time_ns += e.dur();
      const Arg* dt = find(e.slice, k_dtype);
      if (dt != nullptr && dt->type == ArgType::kString && c.dtype.empty()) {
        c.dtype = std::string(t.str(dt->s));
      }
      if (const Arg* ne = find(e.slice, k_nelems)) {
        int64_t elem = dt != nullptr && dt->type == ArgType::kString ? dtype_size(t.str(dt->s)) : 0;
        c.bytes += ne->as_int().value_or(0) * elem;
      }
      if (const Arg* g = find(e.slice, k_group)) c.group_size = g->as_int().value_or(c.group_size);
    }
    r.ranks.push_back(std::move(rs));
  }
  std::sort(r.ranks.begin(), r.ranks.end(),
            [](const RankStats& a, const RankStats& b) { return a.rank < b.rank; });

  if (!r.ranks.empty()) {
    std::vector<double> wall, compute;
    double step_sum = 0;
    for (const RankStats& rs : r.ranks) {
      wall.push_back(rs.steps > 0 ? rs.step_mean_ns : static_cast<double>(rs.wall_ns));
      compute.push_back(static_cast<double>(rs.temporal.compute_ns));
      step_sum += rs.step_mean_ns;
    }
    r.step_mean_ns = step_sum / r.ranks.size();
    auto max_over_mean = [](const std::vector<double>& v) {
      double sum = 0, mx = 0;
      for (double x : v) {
        sum += x;
        mx = std::max(mx, x);
      }
      return sum > 0 ? mx / (sum / v.size()) : 0.0;
    };
    r.load_imbalance = max_over_mean(wall);
    r.compute_imbalance = max_over_mean(compute);
    double med = stats::median(wall);
    for (size_t i = 0; i < r.ranks.size(); ++i) {
      if (r.ranks.size() > 1 && wall[i] > med * (1.0 + o.straggler_threshold)) {
        r.ranks[i].straggler = true;
        r.stragglers.push_back(r.ranks[i].rank);
      }
    }
  }
  for (auto& [name, c] : collectives) {
    if (c.time_ns > 0 && c.bytes > 0) {
      c.algbw_gbps = static_cast<double>(c.bytes) / static_cast<double>(c.time_ns);
      c.busbw_gbps = c.algbw_gbps * bus_factor(name, c.group_size);
    }
    r.collectives.push_back(c);
  }
  std::sort(
      r.collectives.begin(), r.collectives.end(),
      [](const CollectiveStats& a, const CollectiveStats& b) { return a.time_ns > b.time_ns; });
  return r;
}

}  // namespace mlprof
