#include "mlprof/analyze/ranks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <queue>
#include <span>
#include <unordered_map>

#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/memory.h"
#include "mlprof/analyze/op_stats.h"
#include "mlprof/analyze/stats.h"
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

  // Steps: ProfilerStep#N on CPU threads, by the rule `steps` uses (a duplicate marker inside the
  // previous step is not a step of its own), so both commands count the same steps.
  const SliceTable& s = t.slices;
  int64_t step_total = 0;
  StepMarkers markers = step_markers(t);
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

  // Collective calls: communication kernels, sized by the args Kineto copies from
  // record_param_comms ("Collective name", "In msg nelems", "dtype", "Group size", "Process
  // Group Name/Ranks"). Without GPU communication kernels (gloo, CPU-only profiles): the CPU
  // record_param_comms ops.
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

  // Top kernels (GPU) and ops (CPU) by total time. Kernels by their full name, as `mlprof
  // kernels` lists them: a cut name merges distinct kernels ("void at::native::(anonymous
  // namespace)::..." are many).
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

// ---- summaries as bytes -------------------------------------------------------------------------

namespace {

struct Writer {
  std::string out;
  template <typename T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out += s;
  }
  template <typename T, typename F>
  void vec(const std::vector<T>& v, F&& each) {
    pod<uint64_t>(v.size());
    for (const T& x : v) each(const_cast<T&>(x));
  }
};

struct Reader {
  std::string_view in;
  size_t pos = 0;
  bool ok = true;
  template <typename T>
  void pod(T& v) {
    if (!ok || in.size() - pos < sizeof(T)) {
      ok = false;
      return;
    }
    std::memcpy(&v, in.data() + pos, sizeof(T));
    pos += sizeof(T);
  }
  void str(std::string& s) {
    uint64_t n = 0;
    pod(n);
    if (!ok || in.size() - pos < n) {
      ok = false;
      return;
    }
    s.assign(in.data() + pos, n);
    pos += n;
  }
  template <typename T, typename F>
  void vec(std::vector<T>& v, F&& each) {
    uint64_t n = 0;
    pod(n);
    if (!ok || n > in.size() - pos) {  // every element takes at least one byte
      ok = false;
      return;
    }
    v.resize(n);
    for (T& x : v) {
      each(x);
      if (!ok) return;
    }
  }
};

template <typename A>
void io(A& a, TemporalBreakdown& t) {
  a.pod(t.device);
  a.pod(t.span_ns);
  a.pod(t.idle_ns);
  a.pod(t.compute_ns);
  a.pod(t.non_compute_ns);
  a.pod(t.communication_ns);
  a.pod(t.memcpy_ns);
  a.pod(t.memset_ns);
  a.pod(t.idle_pct);
  a.pod(t.compute_pct);
  a.pod(t.non_compute_pct);
  a.pod(t.communication_pct);
  a.pod(t.memcpy_pct);
  a.pod(t.memset_pct);
}

template <typename A>
void io(A& a, NamedTime& n) {
  a.str(n.name);
  a.pod(n.count);
  a.pod(n.time_ns);
}

template <typename A>
void io(A& a, RankSummary& s) {
  RankStats& r = s.stats;
  a.pod(r.rank);
  a.str(r.source);
  a.pod(r.steps);
  a.pod(r.step_mean_ns);
  a.pod(r.step_max_ns);
  a.pod(r.wall_ns);
  io(a, r.temporal);
  a.pod(r.comm_comp_overlap_pct);
  a.pod(r.exposed_comm_ns);
  a.pod(r.comm_overhead_pct);
  a.pod(r.memory_peak_bytes);
  a.pod(r.world_size);
  a.vec(r.top_ops, [&](NamedTime& x) { io(a, x); });
  a.vec(r.top_kernels, [&](NamedTime& x) { io(a, x); });
  a.pod(s.base_time_ns);
  a.pod(s.begin_ns);
  a.pod(s.file_bytes);
  a.pod(s.has_gpu);
  a.vec(s.step_times, [&](StepTime& x) { a.pod(x); });
  a.vec(s.groups, [&](std::string& x) { a.str(x); });
  a.vec(s.names, [&](std::string& x) { a.str(x); });
  a.vec(s.calls, [&](CollectiveCall& x) { a.pod(x); });
}

constexpr uint32_t kSummaryMagic = 0x4d4c5253;  // "MLRS"
constexpr uint32_t kSummaryVersion = 1;

}  // namespace

std::string encode_rank_summaries(const std::vector<RankSummary>& summaries) {
  Writer w;
  w.pod(kSummaryMagic);
  w.pod(kSummaryVersion);
  w.vec(summaries, [&](RankSummary& s) { io(w, s); });
  return std::move(w.out);
}

Result<std::vector<RankSummary>> decode_rank_summaries(std::string_view bytes) {
  Reader r{bytes};
  uint32_t magic = 0, version = 0;
  r.pod(magic);
  r.pod(version);
  if (!r.ok || magic != kSummaryMagic || version != kSummaryVersion)
    return Status::error("not a rank summary block");
  std::vector<RankSummary> out;
  r.vec(out, [&](RankSummary& s) { io(r, s); });
  if (!r.ok || r.pos != bytes.size()) return Status::error("truncated rank summary block");
  for (const RankSummary& s : out)
    for (const CollectiveCall& c : s.calls)
      if (c.group >= s.groups.size() || c.name >= s.names.size() || c.dtype >= s.names.size())
        return Status::error("rank summary block: a call points outside its string table");
  return out;
}

// ---- across ranks -------------------------------------------------------------------------------

namespace {

// "2-5, 9, 12-127" for a set of numbers; at most `max_parts` parts, then ", ...".
std::string ranges(std::vector<int32_t> v, size_t max_parts = 8) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  size_t parts = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (parts == max_parts) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    ++parts;
    i = j + 1;
  }
  return out;
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

void add_warnings(RanksResult& r) {
  const std::vector<RankStats>& rows = r.ranks;
  // Unknown ranks.
  std::vector<std::string> unknown;
  for (const RankStats& s : rows)
    if (s.rank < 0) unknown.push_back(file_name(s.source));
  if (!unknown.empty()) {
    std::string w = std::to_string(unknown.size()) +
                    " trace(s) without a rank (no distributedInfo.rank, no number in the file "
                    "name): " +
                    unknown.front();
    if (unknown.size() > 1) w += ", ...";
    r.warnings.push_back(w);
  }
  // Duplicates: several traces claim one rank.
  std::vector<std::pair<int32_t, std::vector<std::string>>> dups;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].rank == rows[i].rank) ++j;
    if (rows[i].rank >= 0 && j - i > 1) {
      std::vector<std::string> files;
      for (size_t k = i; k < j; ++k) files.push_back(file_name(rows[k].source));
      dups.emplace_back(rows[i].rank, std::move(files));
    }
    i = j;
  }
  for (size_t d = 0; d < dups.size() && d < 5; ++d) {
    const auto& [rank, files] = dups[d];
    std::string w = "duplicate rank " + std::to_string(rank) + ": " + std::to_string(files.size()) +
                    " traces (" + files[0] + ", " + files[1];
    if (files.size() > 2) w += ", ...";
    r.warnings.push_back(w + ")");
  }
  if (dups.size() > 5) {
    std::vector<int32_t> ids;
    for (const auto& d : dups) ids.push_back(d.first);
    r.warnings.push_back(std::to_string(dups.size()) +
                         " ranks have several traces: " + ranges(ids));
  }
  // World size: the most common one; others are mixed in.
  std::map<int32_t, std::vector<int32_t>> by_size;
  for (const RankStats& s : rows)
    if (s.world_size > 0) by_size[s.world_size].push_back(s.rank);
  size_t best = 0;
  for (const auto& [size, ranks] : by_size)
    if (ranks.size() > best) {
      best = ranks.size();
      r.world_size = size;
    }
  if (by_size.size() > 1) {
    std::string w = "mixed world sizes:";
    bool first = true;
    for (const auto& [size, ranks] : by_size) {
      w += std::string(first ? " " : "; ") + std::to_string(size) + " (" +
           std::to_string(ranks.size()) + " trace" + (ranks.size() > 1 ? "s" : "") + ": rank " +
           ranges(ranks, 4) + ")";
      first = false;
    }
    r.warnings.push_back(w + "; traces of different jobs?");
  }
  if (r.world_size > 0) {
    std::vector<bool> seen(static_cast<size_t>(r.world_size), false);
    std::vector<int32_t> outside;
    for (const RankStats& s : rows) {
      if (s.rank >= r.world_size) outside.push_back(s.rank);
      if (s.rank >= 0 && s.rank < r.world_size) seen[static_cast<size_t>(s.rank)] = true;
    }
    std::vector<int32_t> missing;
    for (int32_t i = 0; i < r.world_size; ++i)
      if (!seen[static_cast<size_t>(i)]) missing.push_back(i);
    if (!missing.empty())
      r.warnings.push_back("missing ranks: " + std::to_string(missing.size()) + " of world size " +
                           std::to_string(r.world_size) + " have no trace (" + ranges(missing) +
                           ")");
    if (!outside.empty())
      r.warnings.push_back("ranks outside world size " + std::to_string(r.world_size) + ": " +
                           ranges(outside));
  }
}

// A call's key across ranks: the group's text (interned over all ranks) and the sequence number.
struct CallKey {
  uint32_t group;
  int64_t seq;
  bool operator==(const CallKey& o) const { return group == o.group && seq == o.seq; }
};
struct CallKeyHash {
  size_t operator()(const CallKey& k) const {
    return std::hash<uint64_t>{}((static_cast<uint64_t>(k.group) << 40) ^
                                 static_cast<uint64_t>(k.seq));
  }
};

double median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return stats::quantile_sorted(v, 0.5);
}

}  // namespace

RanksResult analyze_rank_summaries(std::vector<RankSummary> sums, const RanksOptions& o) {
  RanksResult r;
  std::sort(sums.begin(), sums.end(), [](const RankSummary& a, const RankSummary& b) {
    return a.stats.rank != b.stats.rank ? a.stats.rank < b.stats.rank
                                        : a.stats.source < b.stats.source;
  });
  // The rows take the stats (not copied: their names are most of a summary); below, the
  // summaries are read for their calls, steps and base times only.
  r.ranks.reserve(sums.size());
  for (RankSummary& s : sums) r.ranks.push_back(std::move(s.stats));
  if (sums.empty()) return r;
  add_warnings(r);
  const size_t n = sums.size();
  // Several traces of one rank (copies, reruns): the first (by file name) stands for the rank in
  // the collectives; the others are warned about and keep their own row, but a call is not
  // matched twice on one rank. Traces without a rank count as distinct ranks.
  std::vector<bool> duplicate(n, false);
  for (size_t i = 1; i < n; ++i)
    duplicate[i] = r.ranks[i].rank >= 0 && r.ranks[i].rank == r.ranks[i - 1].rank;
  r.distinct_ranks = static_cast<uint32_t>(std::count(duplicate.begin(), duplicate.end(), false));

  // Group texts interned over all ranks, numbered in text order (the order calls are listed in).
  std::vector<std::string> group_text;
  std::vector<std::vector<uint32_t>> local_to_global(n);
  {
    std::map<std::string, uint32_t> group_id;
    for (const RankSummary& s : sums)
      for (const std::string& g : s.groups) group_id.emplace(g, 0);
    for (auto& [text, id] : group_id) {
      id = static_cast<uint32_t>(group_text.size());
      group_text.push_back(text);
    }
    for (size_t i = 0; i < n; ++i)
      for (const std::string& g : sums[i].groups) local_to_global[i].push_back(group_id.at(g));
  }
  auto key_of = [&](size_t i, const CollectiveCall& c) {
    return CallKey{local_to_global[i][c.group], c.seq};
  };

  // ---- clock alignment ----
  std::vector<int64_t> offset(n, 0);
  ClockAlignment& clock = r.clock;
  clock.reference_rank = r.ranks[0].rank;
  std::unordered_map<CallKey, int64_t, CallKeyHash> ref_end;
  for (const CollectiveCall& c : sums[0].calls) ref_end[key_of(0, c)] = c.end_ns;
  // Per rank, its calls' end - the reference's end, over the calls both have.
  auto end_diffs = [&](size_t i) {
    std::vector<int64_t> d;
    for (const CollectiveCall& c : sums[i].calls) {
      auto it = ref_end.find(key_of(i, c));
      if (it != ref_end.end()) d.push_back(it->second - c.end_ns);
    }
    return d;
  };
  size_t without_base = 0;
  for (const RankSummary& s : sums) without_base += s.base_time_ns == 0;
  bool all_base = without_base == 0;
  // "no baseTimeNanoseconds in every trace" read as "in none"; say how many lack it.
  std::string no_base = without_base == n
                            ? "no trace has baseTimeNanoseconds"
                            : "baseTimeNanoseconds missing in " + std::to_string(without_base) +
                                  " of " + std::to_string(n) + " traces";
  if (n == 1) {
    clock.note = "one rank";
  } else if (all_base) {
    clock.method = "kineto_base_time";
    for (size_t i = 0; i < n; ++i) offset[i] = sums[i].base_time_ns - sums[0].base_time_ns;
    clock.note = "each trace's baseTimeNanoseconds";
  } else {
    std::vector<int32_t> unaligned;
    size_t aligned = 0;
    for (size_t i = 1; i < n; ++i) {
      std::vector<int64_t> d = end_diffs(i);
      if (d.empty()) {
        unaligned.push_back(r.ranks[i].rank);
        continue;
      }
      offset[i] = std::llround(median_of(std::move(d)));
      ++aligned;
    }
    if (aligned > 0) {
      clock.method = "collective_end";
      clock.note = no_base + ": each rank shifted so the collectives it shares with rank " +
                   std::to_string(clock.reference_rank) + " end together (median over the calls)";
      if (!unaligned.empty())
        clock.note +=
            "; not aligned (no collective shared with the reference): rank " + ranges(unaligned, 4);
    } else {
      clock.note = no_base + " and no collective matched across ranks: raw timestamps";
    }
  }
  if (n > 1) {
    std::vector<int64_t> residuals;
    for (size_t i = 1; i < n; ++i) {
      std::vector<int64_t> d = end_diffs(i);
      if (d.empty()) continue;
      for (int64_t& x : d) x = std::llabs(x - offset[i]);
      residuals.push_back(std::llround(median_of(std::move(d))));
    }
    clock.residual_ns = std::llround(median_of(std::move(residuals)));
  }
  for (size_t i = 0; i < n; ++i) r.ranks[i].clock_offset_ns = offset[i];

  // ---- collectives matched across ranks ----
  // Every call once, as (rank row, index in its summary), sorted by key (group, sequence number),
  // then by aligned arrival and rank row: each key's arrivals are one run. Beside the summaries
  // this takes 8 bytes a call, not a copy of every call in a map by key.
  struct Ref {
    uint32_t row;
    uint32_t call;
  };
  auto call_of = [&](const Ref& x) -> const CollectiveCall& { return sums[x.row].calls[x.call]; };
  auto start_of = [&](const Ref& x) { return call_of(x).start_ns + offset[x.row]; };
  auto end_of = [&](const Ref& x) { return call_of(x).end_ns + offset[x.row]; };
  auto ref_key = [&](const Ref& x) { return key_of(x.row, call_of(x)); };
  std::vector<Ref> refs;
  {
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += duplicate[i] ? 0 : sums[i].calls.size();
    refs.reserve(total);
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < sums[i].calls.size() && !duplicate[i]; ++j)
      refs.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j)});
  std::sort(refs.begin(), refs.end(), [&](const Ref& a, const Ref& b) {
    CallKey ka = ref_key(a), kb = ref_key(b);
    if (ka.group != kb.group) return ka.group < kb.group;
    if (ka.seq != kb.seq) return ka.seq < kb.seq;
    int64_t sa = start_of(a), sb = start_of(b);
    return sa != sb ? sa < sb : a.row < b.row;
  });
  std::vector<size_t> run;  // where each key's arrivals begin in `refs`, then refs.size()
  for (size_t i = 0; i < refs.size(); ++i)
    if (i == 0 || !(ref_key(refs[i]) == ref_key(refs[i - 1]))) run.push_back(i);
  run.push_back(refs.size());
  const size_t keys = run.size() - 1;
  auto arrivals = [&](size_t k) {
    return std::span<const Ref>(refs.data() + run[k], run[k + 1] - run[k]);
  };
  std::vector<std::vector<int64_t>> late_by(n);
  struct Late {
    int64_t late_by;
    size_t key;
  };
  auto later = [](const Late& a, const Late& b) {  // min-heap on lateness, then key order
    return a.late_by != b.late_by ? a.late_by > b.late_by : a.key < b.key;
  };
  std::priority_queue<Late, std::vector<Late>, decltype(later)> worst(later);
  struct BucketKey {
    std::string name;
    int64_t min_bytes;
    bool operator<(const BucketKey& o) const {
      return name != o.name ? name < o.name : min_bytes < o.min_bytes;
    }
  };
  std::map<BucketKey, SizeBucket> buckets;
  for (size_t k = 0; k < keys; ++k) {
    std::span<const Ref> a = arrivals(k);
    // Bandwidth: the shortest kernel of the call moves the data without waiting.
    int64_t transfer = INT64_MAX, bytes = 0;
    int32_t group_size = 0;
    for (const Ref& x : a) {
      transfer = std::min(transfer, end_of(x) - start_of(x));
      bytes = std::max(bytes, call_of(x).bytes);
      group_size = std::max(group_size, call_of(x).group_size);
    }
    if (bytes > 0 && transfer > 0) {
      int64_t lo = 1;
      while (lo <= bytes / 2) lo *= 2;
      const std::string& name = sums[a.front().row].names[call_of(a.front()).name];
      SizeBucket& b = buckets[{name, lo}];
      b.name = name;
      b.min_bytes = lo;
      ++b.calls;
      b.bytes += bytes;
      b.time_ns += transfer;
      b.group_size = std::max<int64_t>(b.group_size, group_size);
    }
    if (a.size() < 2) continue;
    ++r.matched_calls;
    for (const Ref& x : a) ++r.ranks[x.row].collective_calls;
    const Ref& last = a.back();
    int64_t late = start_of(last) - start_of(a[a.size() - 2]);
    // The last two arrived together (identical ranks, or a tie to the ns): nobody was last.
    if (late <= 0) continue;
    RankStats& lr = r.ranks[last.row];
    ++lr.last_count;
    lr.late_total_ns += late;
    late_by[last.row].push_back(late);
    if (o.top_calls > 0) {
      worst.push({late, k});
      if (worst.size() > o.top_calls) worst.pop();
    }
  }
  while (!worst.empty()) {
    const Late& w = worst.top();
    std::span<const Ref> a = arrivals(w.key);
    const Ref& last = a.back();
    LateCall c;
    CallKey key = ref_key(last);
    c.group = group_text[key.group];
    c.seq = key.seq;
    c.name = sums[last.row].names[call_of(last).name];
    for (const Ref& x : a) c.bytes = std::max(c.bytes, call_of(x).bytes);
    c.ranks = static_cast<uint32_t>(a.size());
    c.last_rank = r.ranks[last.row].rank;
    c.late_by_ns = w.late_by;
    c.spread_ns = start_of(last) - start_of(a.front());
    c.aligned_start_ns = start_of(last);
    r.late_calls.push_back(std::move(c));
    worst.pop();
  }
  std::reverse(r.late_calls.begin(), r.late_calls.end());
  for (auto& [key, b] : buckets) {
    b.algbw_gbps = static_cast<double>(b.bytes) / static_cast<double>(b.time_ns);
    b.busbw_gbps = b.algbw_gbps * bus_factor(b.name, b.group_size);
    r.size_buckets.push_back(b);
  }

  // ---- per-collective totals over all ranks (a duplicate trace's calls once) ----
  std::map<std::string, CollectiveStats> coll;
  for (size_t i = 0; i < n; ++i) {
    if (duplicate[i]) continue;
    const RankSummary& s = sums[i];
    for (const CollectiveCall& c : s.calls) {
      const std::string& name = s.names[c.name];
      CollectiveStats& cs = coll[name];
      cs.name = name;
      ++cs.count;
      cs.time_ns += c.end_ns - c.start_ns;
      cs.bytes += c.bytes;
      if (cs.dtype.empty()) cs.dtype = s.names[c.dtype];
      if (c.group_size > 0) cs.group_size = c.group_size;
    }
  }
  for (auto& [name, c] : coll) {
    if (c.time_ns > 0 && c.bytes > 0) {
      c.algbw_gbps = static_cast<double>(c.bytes) / static_cast<double>(c.time_ns);
      c.busbw_gbps = c.algbw_gbps * bus_factor(name, c.group_size);
    }
    r.collectives.push_back(c);
  }
  std::stable_sort(
      r.collectives.begin(), r.collectives.end(),
      [](const CollectiveStats& a, const CollectiveStats& b) { return a.time_ns > b.time_ns; });

  // ---- imbalance and stragglers ----
  std::vector<double> wall, compute;
  double step_sum = 0;
  for (const RankStats& rs : r.ranks) {
    wall.push_back(rs.steps > 0 ? rs.step_mean_ns : static_cast<double>(rs.wall_ns));
    compute.push_back(static_cast<double>(rs.temporal.compute_ns));
    step_sum += rs.step_mean_ns;
  }
  r.step_mean_ns = step_sum / static_cast<double>(n);
  auto max_over_mean = [](const std::vector<double>& v) {
    double sum = 0, mx = 0;
    for (double x : v) {
      sum += x;
      mx = std::max(mx, x);
    }
    return sum > 0 ? mx / (sum / static_cast<double>(v.size())) : 0.0;
  };
  r.load_imbalance = max_over_mean(wall);
  r.compute_imbalance = max_over_mean(compute);
  double med = stats::median(wall);
  std::vector<double> wall_total;
  for (const RankStats& rs : r.ranks) wall_total.push_back(static_cast<double>(rs.wall_ns));
  const double med_total = stats::median(wall_total);
  double share_needed =
      std::max(o.straggler_last_share, std::min(0.9, 1.5 / static_cast<double>(n)));
  for (size_t i = 0; i < n && n > 1; ++i) {
    RankStats& rs = r.ranks[i];
    StragglerEvidence e;
    e.rank = rs.rank;
    e.last_count = rs.last_count;
    e.calls = rs.collective_calls;
    e.last_share = e.calls > 0 ? static_cast<double>(e.last_count) / e.calls : 0;
    e.late_total_ns = rs.late_total_ns;
    e.late_median_ns = std::llround(median_of(late_by[i]));
    e.step_excess_pct = med > 0 ? 100.0 * (wall[i] - med) / med : 0;
    bool by_calls = e.last_count >= o.straggler_min_calls && e.last_share >= share_needed &&
                    e.late_median_ns >= o.straggler_min_late_ns;
    bool by_steps = wall[i] > med * (1.0 + o.straggler_threshold);
    if (!by_calls && !by_steps) continue;
    char buf[256];
    if (by_calls) {
      std::snprintf(buf, sizeof buf,
                    "last to arrive at %llu of %llu collectives (%.0f%%), a median %.3f ms after "
                    "the previous rank",
                    static_cast<unsigned long long>(e.last_count),
                    static_cast<unsigned long long>(e.calls), 100.0 * e.last_share,
                    static_cast<double>(e.late_median_ns) / 1e6);
      e.reason = buf;
    }
    if (by_steps) {
      std::snprintf(buf, sizeof buf, "%s %.1f%% above the median",
                    rs.steps > 0 ? "mean step" : "GPU span", e.step_excess_pct);
      e.reason += (e.reason.empty() ? "" : "; ") + std::string(buf);
    }
    e.time_lost_ns = by_calls ? e.late_total_ns : 0;
    if (by_steps)
      e.time_lost_ns = std::max<int64_t>(
          e.time_lost_ns, std::llround(std::max(0.0, static_cast<double>(rs.wall_ns) - med_total)));
    rs.straggler = true;
    r.stragglers.push_back(rs.rank);
    r.straggler_evidence.push_back(std::move(e));
  }

  // ---- distributions over ranks ----
  auto distribution = [&](const char* metric, auto&& value, bool only_with_steps = false) {
    std::vector<std::pair<double, int32_t>> v;
    for (const RankStats& rs : r.ranks)
      if (!only_with_steps || rs.steps > 0) v.emplace_back(value(rs), rs.rank);
    if (v.empty()) return;
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> sorted;
    double sum = 0;
    for (const auto& [x, rank] : v) {
      sorted.push_back(x);
      sum += x;
    }
    RankDistribution d;
    d.metric = metric;
    d.min = sorted.front();
    d.max = sorted.back();
    d.p50 = stats::quantile_sorted(sorted, 0.5);
    d.p90 = stats::quantile_sorted(sorted, 0.9);
    d.p99 = stats::quantile_sorted(sorted, 0.99);
    d.mean = sum / static_cast<double>(sorted.size());
    d.max_over_mean = d.mean > 0 ? d.max / d.mean : 0;
    d.min_rank = v.front().second;
    d.max_rank = v.back().second;
    r.distributions.push_back(d);
  };
  distribution(
      "step_mean_ns", [](const RankStats& s) { return s.step_mean_ns; }, true);
  distribution("wall_ns", [](const RankStats& s) { return static_cast<double>(s.wall_ns); });
  distribution("span_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.span_ns); });
  distribution("compute_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.compute_ns); });
  distribution("communication_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.communication_ns); });
  distribution("exposed_comm_ns",
               [](const RankStats& s) { return static_cast<double>(s.exposed_comm_ns); });
  distribution("idle_ns",
               [](const RankStats& s) { return static_cast<double>(s.temporal.idle_ns); });
  distribution("memory_peak_bytes",
               [](const RankStats& s) { return static_cast<double>(s.memory_peak_bytes); });
  if (r.matched_calls > 0)
    distribution("late_total_ns",
                 [](const RankStats& s) { return static_cast<double>(s.late_total_ns); });
  return r;
}

const StragglerEvidence* worst_straggler(const RanksResult& r) {
  const StragglerEvidence* worst = nullptr;
  for (const StragglerEvidence& e : r.straggler_evidence)  // in rank order: the lowest wins ties
    if (worst == nullptr || e.time_lost_ns > worst->time_lost_ns) worst = &e;
  return worst;
}

RanksResult analyze_ranks(const std::vector<const Trace*>& traces, const RanksOptions& o) {
  std::vector<RankSummary> sums(traces.size());
  parallel_for(traces.size(), 0, [&](size_t i) { sums[i] = summarize_rank(*traces[i], o); });
  return analyze_rank_summaries(std::move(sums), o);
}

}  // namespace mlprof
