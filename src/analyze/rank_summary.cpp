// One rank's trace -> its RankSummary (steps, GPU time breakdown, collective calls, top names),
// and a directory's rank files reduced to summaries, one trace per worker in memory at a time.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/op_stats.h"
#include "mlprof/analyze/ranks.h"
#include "mlprof/analyze/steps.h"
#include "trace/file_error.h"
#include "trace/parallel_for.h"

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

// Interns strings into a summary's table.
struct Interner {
  std::vector<std::string>& table;
  std::unordered_map<std::string, uint32_t> index;
  uint32_t operator()(const std::string& s) {
    auto [it, added] = index.emplace(s, static_cast<uint32_t>(table.size()));
    if (added) table.push_back(s);
    return it->second;
  }
};

// The n names with the most time. The result is kept for the whole run (one per rank), so it is
// allocated at its final size: a vector of every name cut down to n would keep the capacity of
// all of them (~10 KB per rank with a few hundred op names).
std::vector<NamedTime> top_of(std::unordered_map<std::string, NamedTime>& by_name, size_t n) {
  std::vector<NamedTime*> all;
  all.reserve(by_name.size());
  for (auto& [name, t] : by_name) all.push_back(&t);
  auto more = [](const NamedTime* a, const NamedTime* b) {
    return a->time_ns != b->time_ns ? a->time_ns > b->time_ns : a->name < b->name;
  };
  n = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), more);
  std::vector<NamedTime> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) v.push_back(std::move(*all[i]));
  return v;
}

// A kernel's name without its parameter list: cut at the first '(' outside template arguments
// ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, ...)"; the "(cudnnKernelDataType_t)2" in
// "nchwToNhwcKernel<float, ..., (cudnnKernelDataType_t)2>(...)" is not one).
std::string short_name(std::string_view n) {
  int depth = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] == '<') ++depth;
    if (n[i] == '>' && depth > 0) --depth;
    if (n[i] == '(' && depth == 0) return std::string(n.substr(0, i));
  }
  return std::string(n);
}

// Steps: ProfilerStep#N on CPU threads (or --step-annotation's iterations), by the rule `steps`
// uses (a duplicate marker inside the previous step is not a step of its own), so both commands
// count the same steps. Returns their total time.
int64_t add_step_times(const Trace& t, RankSummary& sum, const std::string& step_annotation) {
  RankStats& rs = sum.stats;
  const SliceTable& s = t.slices;
  int64_t step_total = 0;
  StepMarkers markers = step_markers(t, step_annotation);
  for (size_t k = 0; k < markers.slices.size(); ++k) {
    size_t i = markers.slices[k];
    ++rs.steps;
    step_total += s.dur[i];
    rs.step_max_ns = std::max(rs.step_max_ns, s.dur[i]);
    sum.step_times.push_back({markers.numbers[k], s.ts[i], s.dur[i]});
  }
  std::sort(sum.step_times.begin(), sum.step_times.end(), [](const StepTime& a, const StepTime& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.number < b.number;
  });
  if (rs.steps > 0) rs.step_mean_ns = static_cast<double>(step_total) / rs.steps;
  return step_total;
}

// GPU time: the temporal breakdown, the communication/computation overlap and the communication
// no computation hides; the rank's wall time (its steps, else its GPU span).
void add_gpu_time(const Trace& t, const GpuEvents& ev, int64_t step_total, RankStats& rs) {
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
}

// Collective calls: communication kernels, sized by the args Kineto copies from
// record_param_comms ("Collective name", "In msg nelems", "dtype", "Group size", "Process
// Group Name/Ranks"). Without GPU communication kernels (gloo, CPU-only profiles): the CPU
// record_param_comms ops.
void add_collective_calls(const Trace& t, const GpuEvents& ev, RankSummary& sum) {
  const SliceTable& s = t.slices;
  const StringId k_coll = t.strings.find("Collective name");
  const StringId k_nelems = t.strings.find("In msg nelems");
  const StringId k_dtype = t.strings.find("dtype");
  const StringId k_group = t.strings.find("Group size");
  const StringId k_pg = t.strings.find("Process Group Name");
  const StringId k_pg_ranks = t.strings.find("Process Group Ranks");
  auto find = [&](uint32_t slice, StringId k) -> const Arg* {
    if (k == StringPool::kNotFound) return nullptr;
    return t.find_arg(s.args_begin[slice], s.args_count[slice], k);
  };
  auto arg_text = [&](const Arg* a) -> std::string {
    if (a == nullptr) return {};
    if (a->type == ArgType::kString) return std::string(t.str(a->s));
    if (auto v = a->as_int()) return std::to_string(*v);
    return {};
  };
  Interner groups{sum.groups, {}}, names{sum.names, {}};
  names("");  // index 0: unknown dtype
  auto add_call = [&](uint32_t slice, int64_t ts, int64_t end, const std::string& fallback) {
    CollectiveCall c;
    std::string name = arg_text(find(slice, k_coll));
    c.name = names(name.empty() ? short_name(t.str(s.name[slice])) : name);
    std::string pg = arg_text(find(slice, k_pg));
    std::string pg_ranks = arg_text(find(slice, k_pg_ranks));
    if (!pg.empty()) {
      c.group = groups(pg_ranks.empty() ? pg : pg + " " + pg_ranks);
    } else {
      c.group = groups(fallback);
    }
    c.start_ns = ts;
    c.end_ns = end;
    const Arg* dt = find(slice, k_dtype);
    std::string dtype = arg_text(dt);
    c.dtype = names(dtype);
    if (const Arg* ne = find(slice, k_nelems))
      c.bytes = ne->as_int().value_or(0) * dtype_size(dtype);
    if (const Arg* g = find(slice, k_group))
      c.group_size = static_cast<int32_t>(g->as_int().value_or(0));
    sum.calls.push_back(c);
  };
  for (const GpuEvent& e : ev.events) {
    if (e.type != KernelType::kCommunication) continue;
    // Without process-group args, the stream stands for the communicator: each process group
    // gets its own NCCL stream, numbered alike on every rank (device numbers differ by rank).
    add_call(e.slice, e.ts, e.end, "stream " + std::to_string(e.stream));
  }
  if (sum.calls.empty() && k_coll != StringPool::kNotFound) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (t.is_gpu_track(s.track[i]) || find(static_cast<uint32_t>(i), k_coll) == nullptr) continue;
      add_call(static_cast<uint32_t>(i), s.ts[i], s.ts[i] + s.dur[i], "cpu");
    }
  }
  // Sequence numbers: the order of the calls within their group, which every member issues
  // in the same order (NCCL requires it).
  std::stable_sort(sum.calls.begin(), sum.calls.end(),
                   [](const CollectiveCall& a, const CollectiveCall& b) {
                     return a.group != b.group ? a.group < b.group : a.start_ns < b.start_ns;
                   });
  for (size_t i = 0; i < sum.calls.size(); ++i)
    sum.calls[i].seq =
        i > 0 && sum.calls[i].group == sum.calls[i - 1].group ? sum.calls[i - 1].seq + 1 : 0;
}

// Top kernels (GPU) and ops (CPU) by total time. Kernels by their full name, as `mlprof
// kernels` lists them: a cut name merges distinct kernels ("void at::native::(anonymous
// namespace)::..." are many). And the memory peak.
void add_top_names(const Trace& t, const GpuEvents& ev, const RanksOptions& o, RankStats& rs) {
  const SliceTable& s = t.slices;
  std::unordered_map<std::string, NamedTime> kernels;
  for (const GpuEvent& e : ev.events) {
    if (e.kind != GpuWorkKind::kKernel) continue;
    std::string n(t.str(s.name[e.slice]));
    NamedTime& k = kernels[n];
    k.name = n;
    ++k.count;
    k.time_ns += e.dur();
  }
  rs.top_kernels = top_of(kernels, o.top_names);
  OpStatsOptions oo;
  oo.include_gpu = false;
  std::unordered_map<std::string, NamedTime> ops;
  for (const OpStats& op : op_stats(t, oo)) {
    if (step_number(op.name)) continue;  // the steps themselves
    NamedTime& n = ops[op.name];
    n.name = op.name;
    n.count += op.count;
    n.time_ns += op.total_ns;
  }
  rs.top_ops = top_of(ops, o.top_names);
  for (int64_t a : memory_allocated_totals(t))
    rs.memory_peak_bytes = std::max(rs.memory_peak_bytes, a);
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

// ---- one rank -> its summary --------------------------------------------------------------------

RankSummary summarize_rank(const Trace& t, const RanksOptions& o) {
  RankSummary sum;
  RankStats& rs = sum.stats;
  rs.source = t.meta.source;
  rs.rank = rank_of(t, t.meta.source);
  rs.world_size = t.meta.world_size;
  sum.base_time_ns = t.meta.base_time_ns;
  sum.begin_ns = t.begin_ns();
  sum.has_gpu = has_gpu(t);
  int64_t step_total = add_step_times(t, sum, o.step_annotation);
  GpuEventsOptions eo;
  eo.hta_compatible = o.hta_compatible;
  std::shared_ptr<const GpuEvents> ev_shared = shared_gpu_events(t, eo);
  const GpuEvents& ev = *ev_shared;
  add_gpu_time(t, ev, step_total, rs);
  add_collective_calls(t, ev, sum);
  add_top_names(t, ev, o, rs);
  // Kept until every rank is reduced: no spare capacity (push_back leaves up to half unused).
  sum.step_times.shrink_to_fit();
  sum.calls.shrink_to_fit();
  sum.groups.shrink_to_fit();
  sum.names.shrink_to_fit();
  return sum;
}

std::vector<RankSummary> reduce_rank_files(const std::vector<std::string>& files,
                                           const RankLoader& load, unsigned threads,
                                           const RanksOptions& options,
                                           std::vector<std::string>& errors,
                                           const std::function<bool()>& keep_going,
                                           std::vector<size_t>* error_files) {
  std::vector<std::optional<RankSummary>> done(files.size());
  std::vector<std::string> failure(files.size());
  parallel_for(
      files.size(), threads,
      [&](size_t i) {
        std::error_code ec;
        uint64_t bytes = std::filesystem::file_size(files[i], ec);
        Result<Trace> t = load(files[i]);  // sets meta.source; freed at the end of this call
        if (!t) {
          failure[i] = t.error();
          return;
        }
        done[i] = summarize_rank(t.value(), options);
        done[i]->file_bytes = ec ? 0 : bytes;
      },
      keep_going);
  std::vector<RankSummary> out;
  out.reserve(static_cast<size_t>(
      std::count_if(done.begin(), done.end(), [](const auto& d) { return d.has_value(); })));
  for (size_t i = 0; i < files.size(); ++i) {
    if (done[i]) {
      out.push_back(std::move(*done[i]));
    } else if (!failure[i].empty()) {
      if (error_files != nullptr) error_files->push_back(i);
      errors.push_back(file_error(files[i], failure[i]));
    }
  }
  return out;
}

}  // namespace mlprof
