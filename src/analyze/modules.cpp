#include "mlprof/analyze/modules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "mlprof/analyze/flops.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/graphs.h"
#include "mlprof/analyze/interval_set.h"
#include "mlprof/analyze/modeled_calls.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";
constexpr const char* kNoModules =
    "no nn.Module events in this trace: record with torch.profiler.profile(with_stack=True, "
    "with_modules=True) (python_function events named 'nn.Module: Name_N')";

std::string class_of(std::string_view name) {  // "Qwen3Attention_0" -> "Qwen3Attention"
  size_t us = name.rfind('_');
  if (us != std::string_view::npos && us + 1 < name.size() &&
      name.substr(us + 1).find_first_not_of("0123456789") == std::string_view::npos)
    return std::string(name.substr(0, us));
  return std::string(name);
}

struct Call {  // one module event
  uint32_t slice;
  int32_t parent = -1;  // module parent call
  int32_t row = -1;
  bool recompute = false;
  std::vector<Interval> gpu;  // GPU events launched inside it
  int64_t gpu_ns = 0;
  int64_t child_host_ns = 0;
};

// The "% step" denominator (modules.h): ProfilerStep# host time as `steps` and `summary` count
// it; an engine iteration's host window is only its CPU side (vLLM's piecewise decode: 26 ms on
// the host, 307 ms on the GPU), so on a GPU trace its GPU windows.
void set_step_time(const Trace& t, const StepsResult* steps, ModulesResult& res) {
  if (steps && !steps->steps.empty()) {
    bool gpu = res.has_gpu && steps->has_gpu && steps->gpu_total_ns > 0 &&
               steps->source != StepSource::kProfilerStep;
    res.step_ns = gpu ? steps->gpu_total_ns : steps->total_ns;
    res.steps = static_cast<uint32_t>(steps->steps.size());
    res.step_source = steps->source;
    res.step_window = gpu ? "gpu" : "host";
  }
  if (res.step_ns > 0) return;
  res.step_ns = t.span_ns();
  res.steps = 0;
  res.step_source = StepSource::kNone;
  res.step_window = "span";
}

// Module events (python_function slices named "nn.Module: ..."), the Python id index their
// parents are found by, and the tracks the autograd engine runs on.
struct ModuleScan {
  std::unordered_map<int64_t, uint32_t> by_python_id;
  std::vector<uint32_t> module_slices;
  std::set<uint32_t> autograd_tracks;
};

ModuleScan scan_module_events(const Trace& t) {
  ModuleScan sc;
  const SliceTable& s = t.slices;
  StringId py_cat = t.strings.find("python_function");
  for (size_t i = 0; i < s.size(); ++i) {
    std::string_view name = t.str(s.name[i]);
    if (name.starts_with("autograd::engine::evaluate_function"))
      sc.autograd_tracks.insert(s.track[i]);
    if (s.cat[i] != py_cat) continue;
    if (const Arg* id = t.slice_arg(i, "Python id"))
      if (auto v = id->as_int()) sc.by_python_id[*v] = static_cast<uint32_t>(i);
    if (name.starts_with(kModulePrefix)) sc.module_slices.push_back(static_cast<uint32_t>(i));
  }
  return sc;
}

// One call per module event, by start, outer (longer) first so a parent precedes its children;
// a call's module parent follows "Python parent id" until a module event.
std::vector<Call> link_calls(const Trace& t, ModuleScan& sc, ModulesResult& res) {
  const SliceTable& s = t.slices;
  std::vector<uint32_t>& module_slices = sc.module_slices;
  const std::unordered_map<int64_t, uint32_t>& by_python_id = sc.by_python_id;
  // Order: by track, then start, outer (longer) first, so a parent precedes its children.
  std::sort(module_slices.begin(), module_slices.end(), [&](uint32_t a, uint32_t b) {
    if (s.ts[a] != s.ts[b]) return s.ts[a] < s.ts[b];
    return s.dur[a] > s.dur[b];
  });
  std::vector<Call> calls(module_slices.size());
  std::unordered_map<uint32_t, int32_t> call_of_slice;
  for (size_t k = 0; k < module_slices.size(); ++k) {
    calls[k].slice = module_slices[k];
    call_of_slice[module_slices[k]] = static_cast<int32_t>(k);
  }
  // Module parent: follow "Python parent id" until a module event (memoized per python slice).
  std::unordered_map<uint32_t, int32_t> nearest;  // python slice -> module call, -1 none
  auto module_ancestor = [&](uint32_t start) -> int32_t {
    std::vector<uint32_t> chain;
    int32_t found = -1;
    uint32_t cur = start;
    for (int hops = 0; hops < 100000; ++hops) {
      const Arg* pa = t.slice_arg(cur, "Python parent id");
      auto pid = pa ? pa->as_int() : std::nullopt;
      if (!pid) break;
      auto it = by_python_id.find(*pid);
      if (it == by_python_id.end() || it->second == cur) break;
      cur = it->second;
      auto m = call_of_slice.find(cur);
      if (m != call_of_slice.end()) {
        found = m->second;
        break;
      }
      auto memo = nearest.find(cur);
      if (memo != nearest.end()) {
        found = memo->second;
        break;
      }
      chain.push_back(cur);
    }
    for (uint32_t c : chain) nearest[c] = found;
    return found;
  };
  for (size_t k = 0; k < calls.size(); ++k) {
    calls[k].parent = module_ancestor(calls[k].slice);
    calls[k].recompute = sc.autograd_tracks.count(s.track[calls[k].slice]) > 0;
    if (calls[k].recompute) ++res.recompute_events;
  }
  return calls;
}

// The rows as they are made: a row per module path, its children in first-call order.
struct RowTree {
  std::map<std::string, uint32_t> row_of_path;
  std::vector<std::vector<uint32_t>> row_children;
  std::vector<uint32_t> root_rows;
};

// A row per module path with its calls and host time, host self time less the child calls'.
void build_rows(const Trace& t, std::vector<Call>& calls, RowTree& tree, ModulesResult& res) {
  const SliceTable& s = t.slices;
  std::map<std::string, uint32_t>& row_of_path = tree.row_of_path;
  std::vector<std::vector<uint32_t>>& row_children = tree.row_children;
  std::vector<uint32_t>& root_rows = tree.root_rows;
  // Paths (parents first: a parent always starts no later than its child).
  std::vector<std::string> path(calls.size());
  std::vector<uint32_t> order(calls.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<uint32_t>(k);
  auto path_of = [&](auto&& self, uint32_t k, int depth) -> const std::string& {
    if (!path[k].empty() || depth > 256) return path[k];
    std::string name(t.str(s.name[calls[k].slice]).substr(kModulePrefix.size()));
    if (calls[k].parent >= 0) {
      path[k] = self(self, static_cast<uint32_t>(calls[k].parent), depth + 1) + "/" + name;
    } else {
      path[k] = (calls[k].recompute ? "[recompute] " : "") + name;
    }
    return path[k];
  };
  for (uint32_t k : order) {
    const std::string& p = path_of(path_of, k, 0);
    auto [it, fresh] = row_of_path.try_emplace(p, static_cast<uint32_t>(res.rows.size()));
    if (fresh) {
      ModuleRow row;
      row.path = p;
      std::string_view name = t.str(s.name[calls[k].slice]).substr(kModulePrefix.size());
      row.name = std::string(name);
      row.cls = class_of(name);
      row.recompute = calls[k].recompute;
      int32_t pc = calls[k].parent;
      row.parent = pc >= 0 ? calls[pc].row : -1;
      row.depth = row.parent >= 0 ? res.rows[row.parent].depth + 1 : 0;
      res.max_depth = std::max(res.max_depth, row.depth);
      res.rows.push_back(std::move(row));
      row_children.emplace_back();
      if (res.rows.back().parent >= 0)
        row_children[res.rows.back().parent].push_back(it->second);
      else
        root_rows.push_back(it->second);
    }
    calls[k].row = static_cast<int32_t>(it->second);
    ModuleRow& row = res.rows[it->second];
    ++row.calls;
    row.host_ns += s.dur[calls[k].slice];
    if (calls[k].parent >= 0) calls[calls[k].parent].child_host_ns += s.dur[calls[k].slice];
  }
  for (size_t k = 0; k < calls.size(); ++k)
    res.rows[calls[k].row].host_self_ns +=
        std::max<int64_t>(0, s.dur[calls[k].slice] - calls[k].child_host_ns);
}

// Which module call launched each GPU event and ran each FLOP-counted op (the innermost one).
struct GpuOwners {
  GpuEvents ev;
  std::vector<int32_t> gpu_owner;   // GPU event -> call, -1 none
  std::vector<double> op_flops_of;  // FLOP-counted op -> its FLOPs
  std::vector<int32_t> op_owner;    // FLOP-counted op -> call, -1 none
  std::vector<double> call_flops;   // call -> FLOPs of the ops inside it
};

// Per track, module calls outer-first; GPU launches and FLOP-counted ops by time.
GpuOwners attribute_gpu(const Trace& t, std::vector<Call>& calls, ModulesResult& res) {
  const SliceTable& s = t.slices;
  std::map<uint32_t, std::vector<uint32_t>> calls_on_track;
  for (uint32_t k = 0; k < calls.size(); ++k) calls_on_track[s.track[calls[k].slice]].push_back(k);
  GpuOwners w;
  w.ev = collect_gpu_events(t);
  const GpuEvents& ev = w.ev;
  res.has_gpu = !ev.events.empty();
  {
    std::vector<Interval> all;
    for (const GpuEvent& g : ev.events) all.emplace_back(g.ts, g.end);
    merge_intervals(all);
    res.gpu_total_ns = total_length(all);
  }
  struct Point {
    int64_t ts;
    uint32_t idx;
  };
  std::map<uint32_t, std::vector<Point>> launches, ops;
  for (uint32_t e = 0; e < ev.events.size(); ++e) {
    const GpuEvent& g = ev.events[e];
    if (g.launch >= 0) launches[s.track[g.launch]].push_back({s.ts[g.launch], e});
  }
  std::vector<double>& op_flops_of = w.op_flops_of;
  // FLOPs of the calls the performance models price (modeled_calls.h): the numbers `flops` and
  // `roofline` show for the same ops.
  for (const ModeledCall& c : collect_modeled_calls(t).calls) {
    if (c.est.family == PerfFamily::kKernelArgs || c.est.flops <= 0) continue;
    const size_t i = static_cast<size_t>(c.slice);
    ops[s.track[i]].push_back({s.ts[i], static_cast<uint32_t>(op_flops_of.size())});
    op_flops_of.push_back(c.est.flops);
  }
  for (auto& [track, v] : launches)
    std::sort(v.begin(), v.end(), [](const Point& a, const Point& b) { return a.ts < b.ts; });
  for (auto& [track, v] : ops)
    std::sort(v.begin(), v.end(), [](const Point& a, const Point& b) { return a.ts < b.ts; });
  std::vector<int32_t>& gpu_owner = w.gpu_owner;
  std::vector<int32_t>& op_owner = w.op_owner;
  std::vector<double>& call_flops = w.call_flops;
  gpu_owner.assign(ev.events.size(), -1);
  op_owner.assign(op_flops_of.size(), -1);
  call_flops.assign(calls.size(), 0);
  for (auto& [track, ks] : calls_on_track) {
    const auto& lv = launches[track];
    const auto& ov = ops[track];
    for (uint32_t k : ks) {  // outer first: an inner module overwrites the owner
      int64_t b = s.ts[calls[k].slice], e = s.end(calls[k].slice);
      auto lo = std::lower_bound(lv.begin(), lv.end(), b,
                                 [](const Point& p, int64_t v) { return p.ts < v; });
      for (auto it = lo; it != lv.end() && it->ts <= e; ++it) {
        const GpuEvent& g = ev.events[it->idx];
        calls[k].gpu.emplace_back(g.ts, g.end);
        gpu_owner[it->idx] = static_cast<int32_t>(k);
      }
      auto olo = std::lower_bound(ov.begin(), ov.end(), b,
                                  [](const Point& p, int64_t v) { return p.ts < v; });
      for (auto it = olo; it != ov.end() && it->ts <= e; ++it) {
        call_flops[k] += op_flops_of[it->idx];
        op_owner[it->idx] = static_cast<int32_t>(k);
      }
    }
  }
  return w;
}

// Per row: GPU time summed over calls, per-call spread (the sum of squares per row returned).
std::vector<double> sum_call_gpu(std::vector<Call>& calls, const std::vector<double>& call_flops,
                                 ModulesResult& res) {
  std::vector<double> sum_sq(res.rows.size(), 0);
  std::vector<uint64_t> seen(res.rows.size(), 0);
  for (size_t k = 0; k < calls.size(); ++k) {
    ModuleRow& row = res.rows[calls[k].row];
    row.gpu_events += calls[k].gpu.size();
    merge_intervals(calls[k].gpu);
    int64_t g = total_length(calls[k].gpu);
    calls[k].gpu_ns = g;
    row.gpu_min_ns = seen[calls[k].row]++ ? std::min(row.gpu_min_ns, g) : g;
    row.gpu_max_ns = std::max(row.gpu_max_ns, g);
    row.gpu_ns += g;
    row.flops += call_flops[k];
    sum_sq[calls[k].row] += static_cast<double>(g) * static_cast<double>(g);
  }
  return sum_sq;
}

// Graph replays as if run eagerly: a matched replayed kernel's self time goes to the module
// that launched it in the capture pass, found by path under the module the replay ran in (a
// row of no calls when this trace never ran it: the capture may be another trace). Returns the
// row of each GPU event that is a matched replay, -1 for the others.
std::vector<int32_t> attribute_replays(const GraphsResult* replays, const std::vector<Call>& calls,
                                       const GpuOwners& w, RowTree& tree,
                                       std::vector<double>& sum_sq, ModulesResult& res) {
  const GpuEvents& ev = w.ev;
  const std::vector<int32_t>& gpu_owner = w.gpu_owner;
  std::map<std::string, uint32_t>& row_of_path = tree.row_of_path;
  std::vector<std::vector<uint32_t>>& row_children = tree.row_children;
  std::vector<uint32_t>& root_rows = tree.root_rows;
  std::vector<int32_t> replay_row(ev.events.size(), -1);
  if (replays && !replays->replayed.empty()) {
    res.replayed = true;
    auto row_at = [&](const std::string& p) -> uint32_t {
      auto it = row_of_path.find(p);
      if (it != row_of_path.end()) return it->second;
      size_t cut = p.rfind('/');
      int32_t parent = cut == std::string::npos ? -1 : static_cast<int32_t>(0);
      uint32_t parent_row = 0;
      if (cut != std::string::npos) parent_row = row_of_path.find(p.substr(0, cut))->second;
      ModuleRow row;
      row.path = p;
      row.name = p.substr(cut == std::string::npos ? 0 : cut + 1);
      row.cls = class_of(row.name);
      row.parent = parent < 0 ? -1 : static_cast<int32_t>(parent_row);
      row.depth = row.parent >= 0 ? res.rows[parent_row].depth + 1 : 0;
      res.max_depth = std::max(res.max_depth, row.depth);
      uint32_t r = static_cast<uint32_t>(res.rows.size());
      res.rows.push_back(std::move(row));
      row_children.emplace_back();
      sum_sq.push_back(0);
      row_of_path[p] = r;
      if (parent < 0)
        root_rows.push_back(r);
      else
        row_children[parent_row].push_back(r);
      return r;
    };
    for (uint32_t e = 0; e < ev.events.size(); ++e) {
      const ReplayedKernel* k = replays->replayed_kernel(ev.events[e].slice);
      if (!k || replays->names[k->module].empty()) continue;
      std::string base = gpu_owner[e] >= 0 ? res.rows[calls[gpu_owner[e]].row].path : "";
      std::string p = replays->names[k->module];
      // The captured path is from the model's root: where its first module is on the path the
      // replay ran under, it continues from there (vLLM captures GptOss_0/GraphModule_0 and
      // replays it inside GptOss_0/GraphModule_0), else it goes under that path.
      std::string first = p.substr(0, p.find('/'));
      for (size_t at = 0; !base.empty();) {
        size_t end = base.find('/', at);
        if (base.compare(at, (end == std::string::npos ? base.size() : end) - at, first) == 0) {
          base.resize(at == 0 ? 0 : at - 1);
          break;
        }
        if (end == std::string::npos) break;
        at = end + 1;
      }
      // Each prefix of the captured path becomes a row (parents first).
      uint32_t r = 0;
      std::string at = base;
      for (size_t from = 0; from <= p.size();) {
        size_t to = p.find('/', from);
        if (to == std::string::npos) to = p.size();
        at += (at.empty() ? "" : "/") + p.substr(from, to - from);
        r = row_at(at);
        if (res.rows[r].calls == 0) res.rows[r].gpu_ns += ev.events[e].dur();
        from = to + 1;
      }
      replay_row[e] = static_cast<int32_t>(r);
      if (res.rows[r].calls == 0) ++res.rows[r].gpu_events;
    }
  }
  return replay_row;
}

// Per row: GPU self time (its calls' GPU events no inner module launched, and its replayed
// kernels), the replayed part, and the FLOPs of the ops no inner module ran.
void set_self_times(const std::vector<Call>& calls, const GpuOwners& w,
                    const std::vector<int32_t>& replay_row, ModulesResult& res) {
  const GpuEvents& ev = w.ev;
  const std::vector<int32_t>& gpu_owner = w.gpu_owner;
  std::vector<std::vector<Interval>> self(res.rows.size()), replayed(res.rows.size());
  for (uint32_t e = 0; e < ev.events.size(); ++e)
    if (replay_row[e] >= 0) {
      self[replay_row[e]].emplace_back(ev.events[e].ts, ev.events[e].end);
      replayed[replay_row[e]].emplace_back(ev.events[e].ts, ev.events[e].end);
    } else if (gpu_owner[e] >= 0) {
      self[calls[gpu_owner[e]].row].emplace_back(ev.events[e].ts, ev.events[e].end);
    }
  if (res.replayed)
    for (size_t r = 0; r < replayed.size(); ++r) {
      merge_intervals(replayed[r]);
      res.rows[r].gpu_replayed_ns = total_length(replayed[r]);
    }
  for (size_t r = 0; r < self.size(); ++r) {
    merge_intervals(self[r]);
    res.rows[r].gpu_self_ns = total_length(self[r]);
  }
  for (size_t i = 0; i < w.op_owner.size(); ++i)
    if (w.op_owner[i] >= 0) res.rows[calls[w.op_owner[i]].row].flops_self += w.op_flops_of[i];
}

// Per row: the per-call spread of GPU time (coefficient of variation) and the share of step time.
void set_spread_and_share(const std::vector<double>& sum_sq, ModulesResult& res) {
  for (size_t r = 0; r < res.rows.size(); ++r) {
    ModuleRow& row = res.rows[r];
    double n = static_cast<double>(std::max<uint64_t>(row.calls, 1));
    double mean = row.gpu_ns / n;
    double var = row.calls ? std::max(0.0, sum_sq[r] / n - mean * mean) : 0.0;
    row.gpu_cv = mean > 0 ? std::sqrt(var) / mean : 0;
    int64_t time = res.has_gpu ? row.gpu_ns : row.host_ns;
    row.step_share = res.step_ns > 0 ? static_cast<double>(time) / res.step_ns : 0;
  }
}

// Tree order (depth first, children in first-call order).
void sort_tree(const RowTree& tree, ModulesResult& res) {
  std::vector<ModuleRow> sorted;
  std::vector<int32_t> new_index(res.rows.size(), -1);
  std::vector<uint32_t> stack(tree.root_rows.rbegin(), tree.root_rows.rend());
  while (!stack.empty()) {
    uint32_t r = stack.back();
    stack.pop_back();
    new_index[r] = static_cast<int32_t>(sorted.size());
    sorted.push_back(res.rows[r]);
    for (auto it = tree.row_children[r].rbegin(); it != tree.row_children[r].rend(); ++it)
      stack.push_back(*it);
  }
  for (ModuleRow& row : sorted)
    if (row.parent >= 0) row.parent = new_index[row.parent];
  res.rows = std::move(sorted);
}

// Slowest by self time (GPU when there is GPU work), most variable by per-call spread.
void rank_rows(const ModulesOptions& o, ModulesResult& res) {
  std::vector<uint32_t> idx(res.rows.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<uint32_t>(k);
  auto self_time = [&](uint32_t r) {
    return res.has_gpu ? res.rows[r].gpu_self_ns : res.rows[r].host_self_ns;
  };
  res.slowest = idx;
  std::sort(res.slowest.begin(), res.slowest.end(), [&](uint32_t a, uint32_t b) {
    return self_time(a) != self_time(b) ? self_time(a) > self_time(b) : a < b;
  });
  if (res.slowest.size() > o.top) res.slowest.resize(o.top);
  for (uint32_t r : idx)
    if (res.rows[r].calls >= 3 && res.rows[r].gpu_ns * 1000 > res.gpu_total_ns)
      res.variable.push_back(r);
  std::sort(res.variable.begin(), res.variable.end(),
            [&](uint32_t a, uint32_t b) { return res.rows[a].gpu_cv > res.rows[b].gpu_cv; });
  if (res.variable.size() > o.top) res.variable.resize(o.top);
}

// Shared modules: one name called from several parent paths. A module's time counts once
// where it is nested in itself (vLLM's GraphModule_0 inside GraphModule_0: summing both calls
// read more GPU time than the trace has), and a recompute (activation checkpointing on the
// autograd thread) is the same call site run again, not another caller.
void find_shared(const Trace& t, const std::vector<Call>& calls, const ModulesOptions& o,
                 ModulesResult& res) {
  const SliceTable& s = t.slices;
  std::map<std::string, SharedModule> by_name;
  std::map<std::string, std::set<int32_t>> sites;
  for (size_t r = 0; r < res.rows.size(); ++r) {
    const ModuleRow& row = res.rows[r];
    SharedModule& m = by_name[row.name];
    m.name = row.name;
    if (!row.recompute && row.calls > 0) sites[row.name].insert(row.parent);
  }
  for (size_t k = 0; k < calls.size(); ++k) {
    std::string_view name = t.str(s.name[calls[k].slice]);
    bool nested_in_itself = false;
    int depth = 0;
    for (int32_t p = calls[k].parent; p >= 0 && !nested_in_itself && ++depth < 256;
         p = calls[p].parent)
      nested_in_itself = s.name[calls[p].slice] == s.name[calls[k].slice];
    SharedModule& m = by_name[std::string(name.substr(kModulePrefix.size()))];
    ++m.calls;
    if (!nested_in_itself) m.gpu_ns += calls[k].gpu_ns;
  }
  for (auto& [name, m] : by_name) {
    m.call_sites = sites[name].size();
    if (m.call_sites > 1) res.shared.push_back(m);
  }
  std::sort(res.shared.begin(), res.shared.end(),
            [](const auto& a, const auto& b) { return a.calls > b.calls; });
  if (res.shared.size() > o.top) res.shared.resize(o.top);
}

// Per module class: calls and self time, by self time (GPU when there is GPU work).
void sum_classes(ModulesResult& res) {
  std::map<std::string, ModuleClass> by_class;
  for (const ModuleRow& row : res.rows) {
    ModuleClass& c = by_class[row.cls];
    c.cls = row.cls;
    c.calls += row.calls;
    c.host_self_ns += row.host_self_ns;
    c.gpu_self_ns += row.gpu_self_ns;
    c.flops_self += row.flops_self;
  }
  for (auto& [k, c] : by_class) res.classes.push_back(c);
  std::sort(res.classes.begin(), res.classes.end(), [&](const auto& a, const auto& b) {
    return res.has_gpu ? a.gpu_self_ns > b.gpu_self_ns : a.host_self_ns > b.host_self_ns;
  });
}

}  // namespace

ModulesResult analyze_modules(const Trace& t, const ModulesOptions& o, const GraphsResult* replays,
                              const StepsResult* steps) {
  ModulesResult res;
  ModuleScan sc = scan_module_events(t);
  res.module_events = sc.module_slices.size();
  if (sc.module_slices.empty()) {
    res.message = kNoModules;
    return res;
  }
  std::vector<Call> calls = link_calls(t, sc, res);
  RowTree tree;
  build_rows(t, calls, tree, res);
  GpuOwners w = attribute_gpu(t, calls, res);
  std::vector<double> sum_sq = sum_call_gpu(calls, w.call_flops, res);
  std::vector<int32_t> replay_row = attribute_replays(replays, calls, w, tree, sum_sq, res);
  set_self_times(calls, w, replay_row, res);
  set_step_time(t, steps, res);
  set_spread_and_share(sum_sq, res);
  sort_tree(tree, res);
  rank_rows(o, res);
  find_shared(t, calls, o, res);
  sum_classes(res);
  return res;
}

std::optional<std::string> modules_unavailable(const Trace& t) {
  StringId py_cat = t.strings.find("python_function");
  if (py_cat != StringPool::kNotFound)
    for (size_t i = 0; i < t.slices.size(); ++i)
      if (t.slices.cat[i] == py_cat && t.str(t.slices.name[i]).starts_with(kModulePrefix))
        return std::nullopt;
  return std::string(kNoModules);
}

}  // namespace mlprof
