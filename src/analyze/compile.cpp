#include "mlprof/analyze/compile.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/interval_set.h"
#include "trace/cancel.h"
#include "trace/units.h"

namespace mlprof {
namespace {

std::string base_name(std::string_view path) {
  size_t slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string frame_of(const CompileRecord& r) {
  if (r.co_name.empty()) return r.user_frame;
  return r.co_name + " (" + base_name(r.co_filename) + ":" + std::to_string(r.co_firstlineno) + ")";
}

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& k) const {
    return std::hash<int64_t>()(k.first) * 0x9e3779b97f4a7c15ull ^ std::hash<int64_t>()(k.second);
  }
};
struct TripleHash {
  size_t operator()(const std::tuple<int64_t, int64_t, int64_t>& k) const {
    auto h = std::hash<int64_t>();
    return (h(std::get<0>(k)) * 0x9e3779b97f4a7c15ull ^ h(std::get<1>(k))) * 0xbf58476d1ce4e5b9ull ^
           h(std::get<2>(k));
  }
};

// What one record needs to know about the others of its log, looked up instead of scanned (a
// scan per record was quadratic: 40k compile ids took 43 s).
class LogIndex {
 public:
  explicit LogIndex(const CompileLog& log) {
    CancelPoint cancel;
    for (size_t k = 0; k < log.compiles.size(); ++k) {
      cancel.tick();
      const CompileRecord& c = log.compiles[k];
      if (!c.co_name.empty()) code_.try_emplace(std::pair(c.id.autograd, c.id.frame), k);
      auto compile = std::tuple(c.id.autograd, c.id.frame, c.id.compile);
      if (!c.user_frame.empty()) caller_.try_emplace(compile, k);
      auto [it, fresh] = last_attempt_.try_emplace(compile, c.id.attempt);
      if (!fresh) it->second = std::max(it->second, c.id.attempt);
    }
  }
  // The frame of a compile id, named the same way for all its attempts and recompiles: a record
  // without compilation_metrics (an attempt that restarted after a graph break) takes the code
  // object of the first record of the same frame_id that has one.
  std::string frame_of(const CompileRecord& r, const CompileLog& log) const {
    if (r.co_name.empty())
      if (auto it = code_.find(std::pair(r.id.autograd, r.id.frame)); it != code_.end())
        return mlprof::frame_of(log.compiles[it->second]);
    return mlprof::frame_of(r);
  }
  // The first record of the same compile (any attempt) with a dynamo_start caller, or null.
  const CompileRecord* caller(const CompileRecord& r, const CompileLog& log) const {
    auto it = caller_.find(std::tuple(r.id.autograd, r.id.frame, r.id.compile));
    return it == caller_.end() ? nullptr : &log.compiles[it->second];
  }
  bool restarted_later(const CompileRecord& r) const {
    auto it = last_attempt_.find(std::tuple(r.id.autograd, r.id.frame, r.id.compile));
    return it != last_attempt_.end() && it->second > r.id.attempt;
  }

 private:
  std::unordered_map<std::pair<int64_t, int64_t>, size_t, PairHash> code_;
  std::unordered_map<std::tuple<int64_t, int64_t, int64_t>, size_t, TripleHash> caller_;
  std::unordered_map<std::tuple<int64_t, int64_t, int64_t>, int64_t, TripleHash> last_attempt_;
};

// "0/3: tensor 'x' size mismatch at index 0. expected 5, actual 6" -> the reason with the
// compile-id prefix dropped and numbers as N, so recompiles of one cause group together.
std::string normalize_reason(std::string_view s) {
  size_t colon = s.find(": ");
  if (colon != std::string_view::npos && colon < 12 &&
      s.substr(0, colon).find_first_not_of("0123456789/!") == std::string_view::npos)
    s = s.substr(colon + 2);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      out += 'N';
    } else {
      out += s[i++];
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

bool is_hit(const std::string& kind) { return kind == "fx_graph_cache_hit"; }
bool is_miss(const std::string& kind) { return kind == "fx_graph_cache_miss"; }

void add_divergence(CompileResult& r, const std::string& what,
                    const std::vector<std::pair<int32_t, std::string>>& per_rank) {
  std::map<std::string, std::vector<int32_t>> groups;
  for (const auto& [rank, v] : per_rank) groups[v].push_back(rank);
  if (groups.size() < 2) return;
  RankDivergence d;
  d.what = what;
  for (auto& [v, ranks] : groups) d.groups.emplace_back(v, ranks);
  std::sort(d.groups.begin(), d.groups.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  r.divergences.push_back(std::move(d));
}

// "torch.ops._c10d_functional.all_reduce_.default" -> "all_reduce_" (also at the start of a
// tensor-meta line "name outputs").
std::string short_op(const std::string& s) {
  std::string out = s;
  for (std::string_view prefix : {"torch.ops._c10d_functional.", "torch.ops.c10d_functional.",
                                  "torch.ops._c10d.", "torch.ops."})
    if (out.starts_with(prefix)) {
      out.erase(0, prefix.size());
      break;
    }
  size_t dot = out.find(".default");
  if (dot != std::string::npos) out.erase(dot, 8);
  return out;
}

// One graph's per-rank item lists (collective ops, tensor meta lines) -> a divergence when the
// ranks that compiled the graph disagree. Each group's value is its length and, unless short
// enough to show whole, the first item where it differs from the most common group.
void add_list_divergence(
    CompileResult& r, const std::string& what, const std::string& graph,
    const std::vector<std::pair<int32_t, const std::vector<std::string>*>>& per_rank) {
  std::vector<std::pair<const std::vector<std::string>*, std::vector<int32_t>>> groups;
  for (const auto& entry : per_rank) {
    // Named copies, not structured bindings: clang 14 (the fuzz build) cannot capture those.
    const int32_t rank = entry.first;
    const std::vector<std::string>* items = entry.second;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return (g.first == nullptr) == (items == nullptr) && (!items || *g.first == *items);
    });
    if (it == groups.end())
      groups.emplace_back(items, std::vector<int32_t>{rank});
    else
      it->second.push_back(rank);
  }
  if (groups.size() < 2) return;
  const std::vector<std::string>* ref = nullptr;
  size_t ref_n = 0;
  for (const auto& [items, ranks] : groups)
    if (items && ranks.size() > ref_n) ref = items, ref_n = ranks.size();
  RankDivergence d;
  d.what = what;
  d.graph = graph;
  for (const auto& [items, ranks] : groups) {
    if (!items) {
      d.groups.emplace_back("(not logged)", ranks);
      continue;
    }
    std::string v = std::to_string(items->size()) + (items->size() == 1 ? " op" : " ops");
    std::string whole;
    for (const std::string& x : *items) whole += (whole.empty() ? "" : ", ") + short_op(x);
    if (whole.size() <= 72) {
      v += ": " + whole;
    } else if (items != ref && ref) {
      size_t k = 0;
      while (k < items->size() && k < ref->size() && (*items)[k] == (*ref)[k]) ++k;
      v += ", #" + std::to_string(k + 1) + ": " +
           (k < items->size() ? short_op((*items)[k]) : std::string("(ends)"));
    }
    d.groups.emplace_back(v, ranks);
  }
  r.divergences.push_back(std::move(d));
}

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

enum RegionClass { kTorchCompiled, kFxGraph, kCompiledFunction, kClasses };
using Enclosing = std::vector<std::array<int32_t, kClasses>>;  // per slice: region per class

// Each GPU event inside or outside the compiled regions its launch ran in, and per region its
// GPU events, Triton kernels, busy time and distinct kernels.
void attribute_gpu_events(const Trace& t, const Enclosing& enclosing, CompileResult& res) {
  std::shared_ptr<const GpuEvents> ev = shared_gpu_events(t);  // the set's table, not a copy
  std::vector<std::vector<Interval>> busy(res.runtime.regions.size());
  std::vector<std::set<StringId>> distinct(res.runtime.regions.size());
  for (const GpuEvent& g : ev->events) {
    std::string_view kname = t.str(t.slices.name[g.slice]);
    bool triton = kname.starts_with("triton_");
    if (triton) ++res.runtime.triton_total;
    bool inside = false;
    if (g.launch >= 0) {
      for (int32_t reg : enclosing[g.launch]) {
        if (reg < 0) continue;
        inside = true;
        CompiledRegion& cr = res.runtime.regions[reg];
        ++cr.gpu_events;
        if (triton) ++cr.triton_kernels;
        busy[reg].emplace_back(g.ts, g.end);
        distinct[reg].insert(t.slices.name[g.slice]);
      }
    }
    if (inside) {
      ++res.runtime.kernels_in_compiled;
      if (triton) ++res.runtime.triton_in_compiled;
      res.runtime.gpu_ns_in_compiled += g.dur();
    } else {
      ++res.runtime.kernels_outside;
      res.runtime.gpu_ns_outside += g.dur();
    }
  }
  for (size_t k = 0; k < busy.size(); ++k) {
    merge_intervals(busy[k]);
    res.runtime.regions[k].gpu_busy_ns = total_length(busy[k]);
    res.runtime.regions[k].distinct_kernels = static_cast<uint32_t>(distinct[k].size());
  }
}

// Join FX graphs to compile ids through the logs' FX graph cache keys.
void join_fx_compile_ids(const std::vector<CompileLog>& logs, CompileResult& res) {
  std::unordered_map<std::string, std::string> id_by_key;
  for (const CompileLog& log : logs)
    for (const auto& [kind, key, cid] : log.cache_events)
      if (!key.empty() && cid != "None") id_by_key.emplace(key, cid);
  for (CompiledRegion& reg : res.runtime.regions)
    if (reg.kind == "CompiledFxGraph") {
      auto it = id_by_key.find(reg.fx_key);
      if (it != id_by_key.end()) reg.compile_id = it->second;
    }
}

void analyze_runtime(const Trace& t, const std::vector<CompileLog>& logs, CompileResult& res) {
  size_t n = t.slices.size();
  std::vector<int32_t> cls_of(n, -1);
  std::unordered_map<StringId, int32_t> region_by_name;  // slice name -> regions index
  auto region_index = [&](size_t i) -> int32_t {
    StringId nm = t.slices.name[i];
    auto it = region_by_name.find(nm);
    if (it != region_by_name.end()) return it->second;
    std::string_view name = t.str(nm);
    CompiledRegion reg;
    reg.name = std::string(name);
    int32_t cls = -1;
    if (name.starts_with("Torch-Compiled Region")) {
      cls = kTorchCompiled;
      reg.kind = "Torch-Compiled Region";
      size_t colon = name.find(": ");
      if (colon != std::string_view::npos) reg.compile_id = std::string(name.substr(colon + 2));
    } else if (name.starts_with("## Call CompiledFxGraph ")) {
      cls = kFxGraph;
      reg.kind = "CompiledFxGraph";
      std::string_view rest = name.substr(24);
      reg.fx_key = std::string(rest.substr(0, rest.find(' ')));
    } else if (name == "CompiledFunction" || name == "CompiledFunctionBackward") {
      cls = kCompiledFunction;
      reg.kind = std::string(name);
    }
    if (cls < 0) return region_by_name[nm] = -1;
    res.runtime.regions.push_back(std::move(reg));
    return region_by_name[nm] = static_cast<int32_t>(res.runtime.regions.size() - 1);
  };
  // Innermost enclosing region of each class, per slice (parents precede children).
  std::vector<std::array<int32_t, kClasses>> enclosing(n,
                                                       std::array<int32_t, kClasses>{-1, -1, -1});
  // The region slice behind each enclosing entry: PyTorch's Python tracer leaves some
  // python_function events open tens of ms past the region they start in (the H100 run:
  // `<built-in method apply of FunctionMeta>` 39 ms past "Torch-Compiled Region: 0/0"), and
  // what starts under such an event after the region ended is not the region's work.
  std::vector<std::array<int32_t, kClasses>> enclosing_slice(
      n, std::array<int32_t, kClasses>{-1, -1, -1});
  std::vector<int32_t> region_of_slice(n, -1);
  StringId lookup = t.strings.find("TorchDynamo Cache Lookup");
  StringId cpu_op = t.strings.find("cpu_op");
  std::vector<bool> capture(t.strings.size(), false);
  for (StringId id = 0; id < t.strings.size(); ++id) {
    std::string_view nm = t.str(id);
    capture[id] = nm.starts_with("cudaStreamBeginCapture") ||
                  nm.starts_with("hipStreamBeginCapture") ||
                  nm.starts_with("cudaGraphInstantiate") || nm.starts_with("hipGraphInstantiate");
  }
  for (size_t i = 0; i < n; ++i) {
    if (t.is_gpu_track(t.slices.track[i])) continue;
    if (capture[t.slices.name[i]]) ++res.runtime.graph_captures;
    int32_t p = t.slices.parent[i];
    if (p >= 0) {
      enclosing[i] = enclosing[p];
      enclosing_slice[i] = enclosing_slice[p];
      for (int c = 0; c < kClasses; ++c)
        if (enclosing_slice[i][c] >= 0 && t.slices.ts[i] >= t.slices.end(enclosing_slice[i][c]))
          enclosing[i][c] = enclosing_slice[i][c] = -1;
    }
    if (t.slices.name[i] == lookup) {
      ++res.runtime.cache_lookups;
      res.runtime.cache_lookup_ns += t.slices.dur[i];
    }
    int32_t reg = region_index(i);
    if (reg >= 0) {
      std::string_view kind = res.runtime.regions[reg].kind;
      int c = kind == "Torch-Compiled Region" ? kTorchCompiled
              : kind == "CompiledFxGraph"     ? kFxGraph
                                              : kCompiledFunction;
      cls_of[i] = c;
      region_of_slice[i] = reg;
      ++res.runtime.regions[reg].calls;
      res.runtime.regions[reg].cpu_ns += t.slices.dur[i];
      enclosing[i][c] = reg;
      enclosing_slice[i][c] = static_cast<int32_t>(i);
    }
    if (t.slices.cat[i] == cpu_op && reg < 0) {
      bool inside = enclosing[i][0] >= 0 || enclosing[i][1] >= 0 || enclosing[i][2] >= 0;
      (inside ? res.runtime.cpu_ops_in_compiled : res.runtime.cpu_ops_outside)++;
    }
  }
  attribute_gpu_events(t, enclosing, res);
  join_fx_compile_ids(logs, res);
  std::sort(
      res.runtime.regions.begin(), res.runtime.regions.end(), [](const auto& a, const auto& b) {
        return a.gpu_busy_ns != b.gpu_busy_ns ? a.gpu_busy_ns > b.gpu_busy_ns : a.name < b.name;
      });
  res.runtime.present = true;
}

bool is_region_name(std::string_view name) {
  return name.starts_with("Torch-Compiled Region") ||
         name.starts_with("## Call CompiledFxGraph ") || name == "CompiledFunction" ||
         name == "CompiledFunctionBackward";
}

// compile_s in disjoint parts (see CompileRow::time_split_s). The times nest in PyTorch's
// compilation_metrics: entire_frame_compile > backend_compile > inductor_compile > code_gen.
std::vector<std::pair<std::string, double>> time_split(const CompileRecord& c) {
  std::vector<std::pair<std::string, double>> out;
  if (std::isnan(c.compile_s)) return out;
  const double nested[] = {c.compile_s, c.backend_s, c.inductor_s, c.code_gen_s};
  const char* names[] = {"Dynamo", "AOTAutograd", "Inductor", "code gen"};
  int n = 1;
  while (n < 4 && !std::isnan(nested[n])) ++n;
  for (int i = 0; i < n; ++i) {
    double part = nested[i] - (i + 1 < n ? nested[i + 1] : 0.0);
    if (part < -1e-6) return {};  // not nested: no split rather than a wrong one
    out.emplace_back(names[i], std::max(part, 0.0));
  }
  return out;
}

}  // namespace

uint64_t triton_kernel_count(const Trace& t) {
  std::vector<bool> triton(t.strings.size(), false);
  bool any = false;
  for (StringId id = 0; id < t.strings.size(); ++id)
    if (t.str(id).starts_with("triton_")) any = triton[id] = true;
  uint64_t n = 0;
  if (any)
    for (size_t i = 0; i < t.slices.size(); ++i)
      n += triton[t.slices.name[i]] && t.is_gpu_track(t.slices.track[i]);
  return n;
}

bool has_compiled_regions(const Trace& t) {
  // Names first (the string pool is small next to the slices): most traces stop here.
  std::vector<bool> region(t.strings.size(), false);
  bool any = false;
  for (StringId id = 0; id < t.strings.size(); ++id)
    if (is_region_name(t.str(id))) any = region[id] = true;
  if (!any) return false;
  for (size_t i = 0; i < t.slices.size(); ++i)
    if (region[t.slices.name[i]] && !t.is_gpu_track(t.slices.track[i])) return true;
  return false;
}

namespace {

using RankSequences = std::vector<std::pair<int32_t, std::string>>;

bool is_autotune(const std::string& n) {
  return n.find("autotun") != std::string::npos || n.find("benchmark") != std::string::npos;
}

// One rank's counts: compile ids, frames, recompiles, restarts, failures, autotuning, cache.
RankCompileSummary summarize_rank(const CompileLog& log, size_t li, CancelPoint& cancel) {
  RankCompileSummary s;
  s.source = log.source;
  s.rank = log.rank >= 0 ? log.rank : static_cast<int32_t>(li);
  s.md5_mismatches = log.md5_mismatches;
  s.json_failures = log.json_failures + log.payload_json_failures;
  s.unrecognized_lines = log.unrecognized_lines;
  s.blank_lines = log.blank_lines;
  s.crlf = log.crlf;
  std::set<std::pair<int64_t, int64_t>> frames;
  for (const CompileRecord& c : log.compiles) {
    cancel.tick();
    ++s.compile_ids;
    frames.insert({c.id.autograd, c.id.frame});
    if (c.id.compile > 0 && c.id.attempt == 0) ++s.recompiles;
    s.restarts += static_cast<uint32_t>(c.restart_reasons.size());
    if (!c.fail_type.empty()) ++s.failures;
    if (c.has_metrics && !std::isnan(c.compile_s)) s.compile_s += c.compile_s;
    if (!s.id_sequence.empty()) s.id_sequence += ' ';
    s.id_sequence += c.id.text();
  }
  s.frames = static_cast<uint32_t>(frames.size());
  for (const CompileRecord& c : log.compiles) {
    s.autotune_us += c.autotune_us;
    s.autotune_events += c.autotune_events;
    for (const auto& [name, us] : c.phases_us)
      if (is_autotune(name)) s.autotune_us += us;
  }
  for (const auto& [name, us] : log.global_phases_us)
    if (is_autotune(name)) s.autotune_us += us;
  s.autotune_events += log.global_autotune_events;
  for (const auto& [kind, key, cid] : log.cache_events) {
    if (is_hit(kind))
      ++s.cache_hits;
    else if (is_miss(kind))
      ++s.cache_misses;
    else
      ++s.cache_bypasses;
    if (!s.cache_sequence.empty()) s.cache_sequence += ' ';
    s.cache_sequence += kind.substr(std::string_view("fx_graph_cache_").size());
  }
  return s;
}

// Graph breaks, recompiles and failures over all ranks (deduplicated).
struct CompileGroups {
  std::map<std::pair<std::string, std::string>, size_t> break_index;
  std::map<std::pair<std::string, std::string>, size_t> recompile_index;
};

// Adds one rank's (the last in res.ranks) graph breaks, recompiles and failures to res.
void group_rank_events(const CompileLog& log, const LogIndex& index, const CompileOptions& o,
                       CancelPoint& cancel, CompileGroups& groups, CompileResult& res) {
  std::map<size_t, uint32_t> recompiles_here;  // group -> this rank's recompiles
  for (const CompileRecord& c : log.compiles) {
    cancel.tick();
    std::string frame = index.frame_of(c, log);
    auto add_break = [&](const std::string& reason) {
      auto [it, fresh] = groups.break_index.try_emplace({reason, frame}, res.graph_breaks.size());
      if (fresh) res.graph_breaks.push_back(GraphBreak{reason, frame, 0, {}, {}});
      GraphBreak& g = res.graph_breaks[it->second];
      ++g.count;
      if (g.ids.size() < 8) g.ids.push_back(c.id.text());
      const std::string* user = &c.user_frame;
      if (user->empty())
        if (const CompileRecord* x = index.caller(c, log)) user = &x->user_frame;
      if (!user->empty() && g.user_frames.size() < 8 &&
          std::find(g.user_frames.begin(), g.user_frames.end(), *user) == g.user_frames.end())
        g.user_frames.push_back(*user);
    };
    for (const std::string& reason : c.restart_reasons) add_break(reason);
    for (const std::string& reason : c.graph_break_reasons) add_break(reason);
    if (c.id.compile > 0 && c.id.attempt == 0) {
      std::string reason = c.recompile_reasons.empty() ? "(no reason logged)"
                                                       : normalize_reason(c.recompile_reasons[0]);
      auto [it, fresh] = groups.recompile_index.try_emplace({frame, reason}, res.recompiles.size());
      if (fresh) res.recompiles.push_back(RecompileGroup{frame, reason, 0, 0, 0});
      ++res.recompiles[it->second].count;
      ++recompiles_here[it->second];
    }
    if (!c.fail_type.empty() && (o.rank < 0 || o.rank == res.ranks.back().rank))
      res.failures.push_back(CompileFailure{c.id.text(), c.fail_type, c.fail_reason,
                                            c.fail_user_frame.empty() ? frame : c.fail_user_frame,
                                            res.ranks.back().rank});
  }
  for (const auto& [g, n] : recompiles_here) {
    RecompileGroup& rg = res.recompiles[g];
    rg.max_per_rank = std::max(rg.max_per_rank, n);
    ++rg.ranks;
  }
}

// One compile id's row.
CompileRow compile_row(const CompileRecord& c, const CompileLog& log, const LogIndex& index,
                       int32_t rank) {
  CompileRow row;
  row.rank = rank;
  row.id = c.id.text();
  row.frame = index.frame_of(c, log);
  row.user_frame = c.user_frame;
  // A restart (attempt > 0) has no dynamo_start of its own: the caller is its first
  // attempt's (comp_metrics.log's [0/0_1] had none).
  if (row.user_frame.empty())
    if (const CompileRecord* x = index.caller(c, log)) row.user_frame = x->user_frame;
  row.status = index.restarted_later(c)     ? "restarted"
               : !c.fail_type.empty()       ? "failed"
               : !c.restart_reasons.empty() ? "restarted"
               : c.has_metrics              ? "ok"
                                            : "no metrics";
  row.compile_s = c.compile_s;
  row.backend_s = c.backend_s;
  row.inductor_s = c.inductor_s;
  row.code_gen_s = c.code_gen_s;
  row.graph_ops = c.graph_op_count;
  row.starts = c.dynamo_starts;
  row.phases_us = c.phases_us;
  row.time_split_s = time_split(c);
  if (!c.recompile_reasons.empty()) row.recompile_reason = c.recompile_reasons[0];
  std::unordered_set<std::string_view> keys;
  for (const auto& [kind, key] : c.cache_events) {
    if (is_hit(kind)) ++row.cache_hits;
    if (is_miss(kind)) ++row.cache_misses;
    if (keys.insert(key).second) row.cache_keys.push_back(key);
  }
  row.kernels = static_cast<uint32_t>(c.kernels.size());
  row.autotune = c.autotune_events;
  return row;
}

// Compile-id rows of every rank (or --rank's); global phases of the first shown rank.
void add_compile_rows(const std::vector<CompileLog>& logs, const CompileOptions& o,
                      CompileResult& res) {
  bool phases_set = false;
  for (size_t li = 0; li < logs.size(); ++li) {
    const CompileLog& log = logs[li];
    int32_t rank = res.ranks[li].rank;
    if (o.rank >= 0 && rank != o.rank) continue;
    if (!phases_set) res.global_phases_us = log.global_phases_us, phases_set = true;
    LogIndex index(log);
    CancelPoint cancel;
    for (const CompileRecord& c : log.compiles) {
      cancel.tick();
      res.compiles.push_back(compile_row(c, log, index, rank));
    }
  }
}

// Per graph, over the ranks whose logs carry the artifact at all: the collective schedule
// (kind 0) or the tensor meta (kind 1); a rank without the graph's artifact is "(not logged)".
void add_artifact_divergences(const std::vector<CompileLog>& logs, int kind, CompileResult& res) {
  auto has = [&](const CompileRecord& c) {
    return kind == 0 ? c.has_collective_schedule : c.has_tensor_meta;
  };
  std::vector<size_t> carrying;
  std::vector<std::string> graphs;
  std::unordered_set<std::string> graph_seen;
  for (size_t li = 0; li < logs.size(); ++li) {
    bool any = false;
    for (const CompileRecord& c : logs[li].compiles)
      if (has(c)) {
        any = true;
        if (graph_seen.insert(c.id.text()).second) graphs.push_back(c.id.text());
      }
    if (any) carrying.push_back(li);
  }
  if (carrying.size() < 2) return;
  // Per carrying log, each graph's records in log order (looked up, not scanned per graph).
  std::vector<std::unordered_map<std::string, std::vector<size_t>>> records_of(carrying.size());
  for (size_t k = 0; k < carrying.size(); ++k) {
    const auto& compiles = logs[carrying[k]].compiles;
    for (size_t j = 0; j < compiles.size(); ++j)
      if (graph_seen.count(compiles[j].id.text()))
        records_of[k][compiles[j].id.text()].push_back(j);
  }
  CancelPoint cancel;
  for (const std::string& g : graphs) {
    cancel.tick();
    std::vector<std::pair<int32_t, const std::vector<std::string>*>> per_rank;
    for (size_t k = 0; k < carrying.size(); ++k) {
      size_t li = carrying[k];
      // Ranks that never compiled the graph are the compile-id divergence, not this one.
      auto found = records_of[k].find(g);
      if (found == records_of[k].end()) continue;
      const std::vector<std::string>* items = nullptr;
      for (size_t j : found->second) {
        const CompileRecord& c = logs[li].compiles[j];
        if (has(c)) items = kind == 0 ? &c.collective_schedule : &c.tensor_meta;
      }
      per_rank.emplace_back(res.ranks[li].rank, items);
    }
    add_list_divergence(res, kind == 0 ? "collective schedule" : "inductor tensor meta", g,
                        per_rank);
  }
}

// Recommendations for the usual causes: graph breaks and recompiles.
void recommend_breaks_and_recompiles(CompileResult& res) {
  for (const GraphBreak& g : res.graph_breaks)
    res.recommendations.push_back(
        "graph break x" + std::to_string(g.count) + " in " + g.frame + ": " + g.reason +
        " -- each break ends a graph and runs Python between graphs; rewrite the line or check "
        "with torch._dynamo.explain / fullgraph=True");
  for (const RecompileGroup& rg : res.recompiles) {
    std::string why = rg.reason.find("size mismatch") != std::string::npos
                          ? " -- shapes change between calls: mark the dimension dynamic "
                            "(torch._dynamo.mark_dynamic) or compile with dynamic=True"
                      : rg.reason.find("___check_obj_id") != std::string::npos
                          ? " -- a guard on an object's identity: pass the same object each "
                            "call instead of a new one"
                          : "";
    // The cache limit counts one process's compiles of the frame: the most on one rank, not the
    // sum over ranks (7 ranks with 3 each was "17 recompiles ... falls back to eager").
    std::string limit = rg.max_per_rank + 1 >= 8
                            ? " (at torch._dynamo.config.cache_size_limit = 8 the frame falls "
                              "back to eager)"
                            : "";
    std::string where = rg.ranks > 1 ? " over " + std::to_string(rg.ranks) + " ranks (at most " +
                                           std::to_string(rg.max_per_rank) + " on one)"
                                     : "";
    res.recommendations.push_back(std::to_string(rg.count) + " recompiles of " + rg.frame + where +
                                  ": " + rg.reason + why + limit);
  }
}

// One bullet per distinct failure, naming the ranks it happened on.
void recommend_failures(CompileResult& res) {
  std::vector<std::pair<const CompileFailure*, std::vector<int32_t>>> failure_groups;
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, size_t> failure_index;
  for (const CompileFailure& f : res.failures) {
    auto [it, fresh] = failure_index.try_emplace(
        std::tuple<std::string_view, std::string_view, std::string_view>(f.id, f.type, f.reason),
        failure_groups.size());
    if (fresh)
      failure_groups.emplace_back(&f, std::vector<int32_t>{f.rank});
    else
      failure_groups[it->second].second.push_back(f.rank);
  }
  for (const auto& [f, ranks] : failure_groups) {
    std::string on;
    if (res.ranks.size() > 1) {
      on = ranks.size() == 1 ? " on rank " : " on ranks ";
      for (size_t k = 0; k < ranks.size(); ++k) on += (k ? ", " : "") + std::to_string(ranks[k]);
    }
    res.recommendations.push_back("compile " + f->id + on + " failed (" + f->type + ": " +
                                  one_line(f->reason) + "): that frame runs eagerly");
  }
}

// A cold FX graph cache on the first rank, and ranks that compiled differently.
void recommend_cache_and_divergences(CompileResult& res) {
  if (!res.ranks.empty()) {
    const RankCompileSummary& s = res.ranks[0];
    if (s.cache_misses > 0 && s.cache_hits == 0)
      res.recommendations.push_back(
          "FX graph cache" +
          (res.ranks.size() > 1 ? " on rank " + std::to_string(s.rank) : std::string()) + ": " +
          std::to_string(s.cache_misses) + (s.cache_misses == 1 ? " miss" : " misses") +
          ", no hits -- a warm cache (persistent TORCHINDUCTOR_CACHE_DIR, or the remote "
          "cache) skips inductor on the next run; compile time now " +
          fmt_s(s.compile_s));
  }
  for (const RankDivergence& d : res.divergences) {
    std::string groups;
    for (const auto& [v, ranks] : d.groups) {
      groups += groups.empty() ? "" : "; ";
      groups += ranks.size() == 1 ? "rank " : "ranks ";
      for (size_t k = 0; k < ranks.size(); ++k)
        groups += (k ? ", " : "") + std::to_string(ranks[k]);
      if (!d.graph.empty()) groups += ": " + v.substr(0, v.find_first_of(":,"));
    }
    if (d.what == "collective schedule")
      res.recommendations.push_back(
          "ranks diverge in the collective schedule of " + d.graph + " (" + groups +
          "): ranks that issue different collectives hang or deadlock -- make the graph the same "
          "on every rank (same shapes, config and data-dependent branches)");
    else if (d.what == "inductor tensor meta")
      res.recommendations.push_back(
          "ranks diverge in inductor tensor meta of " + d.graph + " (" + groups +
          "): the ranks compiled the graph for different output shapes/strides/dtypes -- "
          "collectives over those tensors mismatch; check inputs and dynamic-shape marks per "
          "rank");
    else
      res.recommendations.push_back("ranks diverge in " + d.what + " (" + groups +
                                    "): ranks that compile differently can hang in collectives");
  }
}

// How much GPU work the compiled regions of the trace launched.
void recommend_runtime(CompileResult& res) {
  if (!res.runtime.present || res.runtime.kernels_in_compiled + res.runtime.kernels_outside == 0)
    return;
  double share = static_cast<double>(res.runtime.gpu_ns_in_compiled) /
                 std::max<int64_t>(1, res.runtime.gpu_ns_in_compiled + res.runtime.gpu_ns_outside);
  if (res.runtime.regions.empty())
    res.recommendations.push_back("no compiled regions in the trace: the model ran eagerly");
  else if (res.runtime.kernels_in_compiled == 0 && res.runtime.graph_captures > 0)
    // A graph-capture pass (vLLM's capture_traces): the compiled graphs ran under stream
    // capture, their kernels were recorded into CUDA graphs, not executed.
    res.recommendations.push_back(
        "the compiled regions launched no GPU work and the trace has " +
        std::to_string(res.runtime.graph_captures) +
        " CUDA graph capture/instantiate calls: this is a graph-capture pass, whose kernels "
        "are recorded, not run -- profile the replay (the graph execution) for GPU time");
  else if (res.runtime.kernels_in_compiled == 0)
    res.recommendations.push_back(
        "the compiled regions launched no GPU work: the kernels in this trace all ran outside "
        "them (compiled code on the CPU, or a profile of the eager part only)");
  else if (share < 0.5)
    res.recommendations.push_back(
        format_percent(1 - share) +
        " of GPU time is launched outside compiled regions: compile the modules that run "
        "those kernels too");
}

}  // namespace

CompileResult analyze_compile(const std::vector<CompileLog>& logs, const Trace* trace,
                              const CompileOptions& o) {
  CompileResult res;
  RankSequences ids_by_rank, cache_by_rank, exec_by_rank;
  CompileGroups groups;
  for (size_t li = 0; li < logs.size(); ++li) {
    const CompileLog& log = logs[li];
    LogIndex index(log);
    CancelPoint cancel;
    RankCompileSummary s = summarize_rank(log, li, cancel);
    ids_by_rank.emplace_back(s.rank, s.id_sequence);
    cache_by_rank.emplace_back(s.rank, s.cache_sequence);
    if (!log.graph_execution_order.empty()) {
      std::string order;
      for (const std::string& x : log.graph_execution_order)
        order += (order.empty() ? "" : ",") + x;
      exec_by_rank.emplace_back(s.rank, order);
    }
    res.ranks.push_back(std::move(s));
    group_rank_events(log, index, o, cancel, groups, res);
  }
  add_compile_rows(logs, o, res);
  if (logs.size() > 1) {
    add_divergence(res, "compile ids", ids_by_rank);
    add_divergence(res, "FX graph cache hit/miss", cache_by_rank);
    if (exec_by_rank.size() > 1) add_divergence(res, "graph execution order", exec_by_rank);
    for (int kind = 0; kind < 2; ++kind) add_artifact_divergences(logs, kind, res);
  }
  std::sort(res.graph_breaks.begin(), res.graph_breaks.end(),
            [](const auto& a, const auto& b) { return a.count > b.count; });
  std::sort(res.recompiles.begin(), res.recompiles.end(),
            [](const auto& a, const auto& b) { return a.count > b.count; });
  if (res.graph_breaks.size() > o.top) res.graph_breaks.resize(o.top);
  if (res.recompiles.size() > o.top) res.recompiles.resize(o.top);
  if (trace) analyze_runtime(*trace, logs, res);
  recommend_breaks_and_recompiles(res);
  recommend_failures(res);
  recommend_cache_and_divergences(res);
  recommend_runtime(res);
  return res;
}

}  // namespace mlprof
