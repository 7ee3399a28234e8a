#include "mlprof/analyze/graphs.h"

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analyze/trace_memo.h"
#include "mlprof/analyze/device_time.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/kernel_class.h"

namespace mlprof {

namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";
// How far ahead in the capture a replayed kernel's name is looked for: a captured launch the
// replay lacks (a kernel the profiler missed, a launch that failed) is skipped, not fatal.
constexpr size_t kLookahead = 64;

struct CapturedLaunch {
  // Empty: the launch names no kernel (Kineto on NVIDIA records no args.kernel on launches made
  // during capture, and no kernel runs then): it matches the replayed kernel at its position.
  std::string kernel, op, module;
  std::string op_category, module_path;  // module_path: every enclosing nn.Module, outer first
  int32_t op_slice = -1;                 // the captured op's slice in the capture's trace
  int64_t node_id = -1;                  // args "graph node id" of the launch, -1 none
};

struct CapturedGraph {
  GraphCapture info;
  int64_t begin_ns = 0;  // BeginCapture
  std::vector<CapturedLaunch> launches;
  // args "graph id" of its launches (CUPTI's graph id; -1 none): replays whose kernels carry
  // the same graph id are matched to it by graph node id (GraphIds).
  int64_t graph_id = -1;
};

std::string_view string_arg(const Trace& t, size_t i, StringId key) {
  if (key == StringPool::kNotFound) return {};
  const Arg* a = t.find_arg(t.slices.args_begin[i], t.slices.args_count[i], key);
  if (!a || a->type != ArgType::kString) return {};
  return t.str(a->s);
}

// A whole-number arg (CUPTI's ids), -1 when absent.
int64_t id_arg(const Trace& t, size_t i, StringId key) {
  if (key == StringPool::kNotFound) return -1;
  const Arg* a = t.find_arg(t.slices.args_begin[i], t.slices.args_count[i], key);
  std::optional<int64_t> v = a ? a->as_int() : std::nullopt;
  return v && *v >= 0 ? *v : -1;
}

// Every Begin/EndCapture window of `t`, with the kernel launches made inside it on that thread.
void read_captures(const Trace& t, const GraphCaptureInput& in, std::vector<CapturedGraph>& out) {
  const SliceTable& s = t.slices;
  StringId kernel_key = t.strings.find("kernel");
  StringId graph_key = t.strings.find("graph id"), node_key = t.strings.find("graph node id");
  std::vector<int8_t> runtime_cat(t.strings.size(), -1);
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i])) continue;
    int8_t& r = runtime_cat[s.cat[i]];
    if (r < 0) r = is_runtime_category(t.str(s.cat[i])) ? 1 : 0;
    if (r == 1) by_track[s.track[i]].push_back(static_cast<uint32_t>(i));
  }
  OpAttribution ops(t);
  for (auto& [track, idx] : by_track) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](uint32_t a, uint32_t b) { return s.ts[a] < s.ts[b]; });
    CapturedGraph* cur = nullptr;
    int64_t begin_ts = 0;
    for (uint32_t i : idx) {
      std::string_view n = t.str(s.name[i]);
      if (n.ends_with("StreamBeginCapture")) {
        out.push_back({});
        cur = &out.back();
        cur->info.source = in.source;
        cur->info.batch_size = in.batch_size;
        cur->info.mode = in.mode;
        cur->info.trace = in.trace;
        begin_ts = s.ts[i];
        cur->begin_ns = begin_ts;
        continue;
      }
      if (!cur) continue;
      if (n.ends_with("StreamEndCapture")) {
        cur->info.capture_ns = s.end(i) - begin_ts;
        cur->info.kernels = cur->launches.size();
        cur->info.unnamed = static_cast<uint64_t>(
            std::count_if(cur->launches.begin(), cur->launches.end(),
                          [](const CapturedLaunch& l) { return l.kernel.empty(); }));
        cur = nullptr;
        continue;
      }
      std::string_view k = string_arg(t, i, kernel_key);
      // Without args.kernel only the kernel launch calls count (not copies, memsets, graph calls).
      bool kernel_launch = !k.empty() || is_kernel_launch_call_name(n);
      if (!kernel_launch) continue;
      // A driver call inside a runtime launch is the same launch: count the outer one.
      int32_t p = s.parent[i];
      if (p >= 0) {
        std::string_view pn = t.str(s.name[static_cast<size_t>(p)]);
        if (!string_arg(t, static_cast<size_t>(p), kernel_key).empty() ||
            (is_launch_call_name(pn) && is_runtime_category(t.str(s.cat[static_cast<size_t>(p)]))))
          continue;
      }
      CapturedLaunch l;
      l.kernel = k;
      l.node_id = id_arg(t, i, node_key);
      if (int64_t g = id_arg(t, i, graph_key); g >= 0 && l.node_id >= 0) cur->graph_id = g;
      GpuEvent probe;
      probe.launch = static_cast<int32_t>(i);
      int32_t op = ops.op_of(probe);
      l.op_slice = op;
      l.op = op >= 0 ? std::string(t.str(s.name[static_cast<size_t>(op)])) : std::string(n);
      l.op_category = t.str(s.cat[op >= 0 ? static_cast<size_t>(op) : i]);
      // Inductor wraps each Triton launch in a record_function named after its kernel.
      if (l.kernel.empty() && l.op.starts_with("triton_")) l.kernel = l.op;
      for (int32_t q = s.parent[i]; q >= 0; q = s.parent[static_cast<size_t>(q)]) {
        std::string_view m = t.str(s.name[static_cast<size_t>(q)]);
        if (!m.starts_with(kModulePrefix)) continue;
        std::string_view name = m.substr(kModulePrefix.size());
        if (l.module.empty()) l.module = name;
        l.module_path =
            l.module_path.empty() ? std::string(name) : std::string(name) + "/" + l.module_path;
      }
      cur->launches.push_back(std::move(l));
      cur->info.launch_host_ns += s.dur[i];
    }
    if (cur) out.pop_back();  // never closed: the profile ended inside the capture
  }
}

// Kernels of the replay matched to the capture in order: each replayed name is looked for at
// most kLookahead captured launches ahead of the last match; a launch naming no kernel matches
// the replayed kernel at its position. Returns, per replayed kernel, the captured launch index
// or -1.
std::vector<int32_t> align(const std::vector<std::string_view>& replay, const CapturedGraph& g) {
  std::vector<int32_t> m(replay.size(), -1);
  size_t j = 0;
  for (size_t r = 0; r < replay.size(); ++r) {
    size_t end = std::min(g.launches.size(), j + kLookahead);
    for (size_t k = j; k < end; ++k) {
      const std::string& want = g.launches[k].kernel;
      if (want.empty() && k != j) break;  // unnamed: by position only, never skipped to
      if (want.empty() || want == replay[r]) {
        m[r] = static_cast<int32_t>(k);
        j = k + 1;
        break;
      }
    }
  }
  return m;
}

// Replays matched by CUPTI's ids (Kineto's and nsys's kernel args "graph id" / "graph node id"):
// a replayed kernel is the captured launch with its node id, in a capture of its graph id. Each
// capture's node index is built once and shared by every replay of that graph.
class GraphIds {
 public:
  GraphIds(const Trace& t, const std::vector<CapturedGraph>& graphs)
      : t_(t),
        graphs_(graphs),
        graph_key_(t.strings.find("graph id")),
        node_key_(t.strings.find("graph node id")),
        nodes_(graphs.size()) {}

  // The capture (index) of the replay's graph id matching most of its kernels by node id, with
  // the per-kernel captured launch indexes (-1 none) in `m`; -1 when the kernels carry no ids
  // or no capture has their graph id.
  int32_t match(const std::vector<const GpuEvent*>& ks, std::vector<int32_t>& m, size_t& matched) {
    if (ks.empty() || node_key_ == StringPool::kNotFound) return -1;
    int64_t graph = id_arg(t_, ks.front()->slice, graph_key_);
    if (graph < 0) return -1;
    int32_t best = -1;
    for (size_t g = 0; g < graphs_.size(); ++g) {
      if (graphs_[g].graph_id != graph) continue;
      const auto& index = node_index(g);
      std::vector<int32_t> cand(ks.size(), -1);
      size_t n = 0;
      for (size_t i = 0; i < ks.size(); ++i) {
        if (id_arg(t_, ks[i]->slice, graph_key_) != graph) continue;
        auto it = index.find(id_arg(t_, ks[i]->slice, node_key_));
        if (it == index.end()) continue;
        cand[i] = it->second;
        ++n;
      }
      if (best < 0 || n > matched) {
        best = static_cast<int32_t>(g);
        matched = n;
        m = std::move(cand);
      }
    }
    return best;
  }

 private:
  const std::unordered_map<int64_t, int32_t>& node_index(size_t g) {
    auto& index = nodes_[g];
    if (index.empty())
      for (size_t k = 0; k < graphs_[g].launches.size(); ++k)
        if (graphs_[g].launches[k].node_id >= 0)
          index.emplace(graphs_[g].launches[k].node_id, static_cast<int32_t>(k));
    return index;
  }
  const Trace& t_;
  const std::vector<CapturedGraph>& graphs_;
  StringId graph_key_, node_key_;
  std::vector<std::unordered_map<int64_t, int32_t>> nodes_;
};

// The capture whose launches match most of the replay's kernels: by graph ids when the kernels
// carry them and a capture of that graph holds the nodes, else by kernel-name sequence.
int32_t best_capture(const std::vector<const GpuEvent*>& ks,
                     const std::vector<std::string_view>& names,
                     const std::vector<CapturedGraph>& graphs, GraphIds& ids, double min_match,
                     std::vector<int32_t>& best, size_t& best_matched, std::string& method) {
  best_matched = 0;
  int32_t c = ids.match(ks, best, best_matched);
  if (c >= 0 && static_cast<double>(best_matched) >= min_match * static_cast<double>(ks.size())) {
    method = "graph ids";
    return c;
  }
  c = -1;
  best_matched = 0;
  for (size_t g = 0; g < graphs.size(); ++g) {
    std::vector<int32_t> m = align(names, graphs[g]);
    size_t n =
        static_cast<size_t>(std::count_if(m.begin(), m.end(), [](int32_t x) { return x >= 0; }));
    if (c < 0 || n > best_matched) {
      c = static_cast<int32_t>(g);
      best_matched = n;
      best = std::move(m);
    }
  }
  method = "kernel names";
  return c;
}

std::vector<GraphAttribution> rows(const std::map<std::string, GraphAttribution>& by) {
  std::vector<GraphAttribution> v;
  v.reserve(by.size());
  for (const auto& [k, a] : by) v.push_back(a);
  std::stable_sort(v.begin(), v.end(), [](const GraphAttribution& a, const GraphAttribution& b) {
    return a.gpu_ns > b.gpu_ns;
  });
  return v;
}

// The graphs captured while this trace was recorded (recaptures marked: the same launches
// captured again), then those of the capture passes given, in r.captures in that order.
std::vector<CapturedGraph> collect_captures(const Trace& trace, const GraphsOptions& options,
                                            GraphsResult& r) {
  std::vector<CapturedGraph> graphs;
  GraphCaptureInput self;
  self.source = "(this trace)";
  read_captures(trace, self, graphs);
  std::stable_sort(
      graphs.begin(), graphs.end(),
      [](const CapturedGraph& a, const CapturedGraph& b) { return a.begin_ns < b.begin_ns; });
  // Graphs captured while this trace was recorded, and those captured again (same launches).
  r.captured_here = graphs.size();
  for (size_t g = 0; g < graphs.size(); ++g) {
    r.capture_ns += graphs[g].info.capture_ns;
    for (size_t h = 0; h < g; ++h) {
      const auto& a = graphs[h].launches;
      const auto& b = graphs[g].launches;
      if (graphs[h].info.recapture_of < 0 && a.size() == b.size() &&
          std::equal(a.begin(), a.end(), b.begin(),
                     [](const CapturedLaunch& x, const CapturedLaunch& y) {
                       return x.kernel == y.kernel && x.op == y.op;
                     })) {
        graphs[g].info.recapture_of = static_cast<int32_t>(h);
        ++r.recaptures;
        break;
      }
    }
  }
  for (const CapturedGraph& g : graphs) r.captures.push_back(g.info);
  for (const GraphCaptureInput& in : options.captures) {
    if (!in.trace) continue;
    size_t before = graphs.size();
    read_captures(*in.trace, in, graphs);
    if (graphs.size() == before)
      r.notes.push_back(in.source + ": no Stream{Begin,End}Capture window with kernel launches");
    for (size_t g = before; g < graphs.size(); ++g) r.captures.push_back(graphs[g].info);
  }
  return graphs;
}

// What every replay is matched and charged against, and where its attribution accumulates.
struct ReplayAttribution {
  const Trace& trace;
  const GraphsOptions& options;
  const std::vector<CapturedGraph>& graphs;
  GraphIds& ids;  // builds each capture's node index on first use
  const OpAttribution& attribution;
  GraphsResult& r;
  std::unordered_map<std::string, uint32_t> name_index;
  std::map<std::string, GraphAttribution> ops, modules, kernels;

  uint32_t intern(const std::string& n) {
    auto [it, added] = name_index.emplace(n, static_cast<uint32_t>(r.names.size()));
    if (added) r.names.push_back(n);
    return it->second;
  }
  static void charge(std::map<std::string, GraphAttribution>& by, const std::string& k,
                     int64_t ns) {
    GraphAttribution& a = by[k];
    if (a.name.empty()) a.name = k;
    ++a.kernels;
    a.gpu_ns += ns;
  }
};

// Each graph launch (its slice) -> the GPU events it ran; r.gpu_ns counts all GPU work.
std::map<int32_t, std::vector<const GpuEvent*>> replays_by_launch(const Trace& trace,
                                                                  const GpuEvents& ev,
                                                                  GraphsResult& r) {
  const SliceTable& s = trace.slices;
  std::map<int32_t, std::vector<const GpuEvent*>> by_launch;  // launch slice -> its GPU events
  for (const GpuEvent& e : ev.events) {
    if (e.kind == GpuWorkKind::kSync || e.kind == GpuWorkKind::kAnnotation) continue;
    r.gpu_ns += e.dur();
    if (e.launch < 0 ||
        !is_graph_launch_call_name(trace.str(s.name[static_cast<size_t>(e.launch)])))
      continue;
    by_launch[e.launch].push_back(&e);
  }
  return by_launch;
}

// A replay that matched no capture at min_match gets capture -1 and p.why saying why.
void explain_unmatched(const ReplayAttribution& a, GraphReplay& p, size_t best_matched) {
  const GraphsOptions& options = a.options;
  if (a.graphs.empty()) {
    p.why = options.captures.empty()
                ? "no capture pass: give --capture DIR|FILE (the trace of the pass that captured "
                  "the graph, e.g. capture_traces/)"
                : "the capture traces hold no Stream{Begin,End}Capture window with kernel "
                  "launches";
  } else if (p.kernels == 0 || static_cast<double>(best_matched) <
                                   options.min_match * static_cast<double>(p.kernels)) {
    const CapturedGraph& g = a.graphs[static_cast<size_t>(p.capture)];
    p.why = "best capture (" + g.info.source + ", " + std::to_string(g.launches.size()) +
            " kernels) matches " + std::to_string(best_matched) + " of " +
            std::to_string(p.kernels) + " replayed kernels in order";
    p.capture = -1;
  }
  if (p.capture < 0) p.matched_by.clear();
}

// Charges a matched replay's kernels to the captured launches `best` aligned them with.
void charge_matched(ReplayAttribution& a, GraphReplay& p, int32_t launch,
                    const std::vector<const GpuEvent*>& ks,
                    const std::vector<std::string_view>& names, const std::vector<int32_t>& best,
                    size_t best_matched) {
  GraphsResult& r = a.r;
  const CapturedGraph& g = a.graphs[static_cast<size_t>(p.capture)];
  ++r.captures[static_cast<size_t>(p.capture)].replays;
  p.matched = best_matched;
  p.eager_launch_host_ns = g.info.launch_host_ns;
  r.eager_launch_host_ns += p.eager_launch_host_ns;
  for (size_t i = 0; i < ks.size(); ++i) {
    if (best[i] < 0) continue;
    const CapturedLaunch& c = g.launches[static_cast<size_t>(best[i])];
    if (c.kernel.empty()) ++p.matched_by_position;
    int64_t ns = ks[i]->dur();
    p.attributed_ns += ns;
    ReplayAttribution::charge(a.ops, c.op, ns);
    if (!c.module.empty()) ReplayAttribution::charge(a.modules, c.module, ns);
    ReplayAttribution::charge(a.kernels, std::string(names[i]), ns);
    ReplayedKernel rk;
    rk.slice = ks[i]->slice;
    rk.launch_op = a.attribution.op_of(*ks[i]);
    rk.op = a.intern(c.op);
    rk.op_category = a.intern(c.op_category);
    rk.module = a.intern(c.module_path);
    rk.launch = launch;
    rk.capture = p.capture;
    rk.captured_op = c.op_slice;
    r.replayed.push_back(rk);
  }
  r.matched_kernels += p.matched;
  r.attributed_gpu_ns += p.attributed_ns;
}

// One graph launch and the GPU work it ran: matched to a capture and charged, or said why not.
GraphReplay attribute_replay(ReplayAttribution& a, int32_t launch,
                             const std::vector<const GpuEvent*>& events) {
  const Trace& trace = a.trace;
  const SliceTable& s = trace.slices;
  GraphsResult& r = a.r;
  GraphReplay p;
  size_t li = static_cast<size_t>(launch);
  p.ts_ns = s.ts[li];
  p.launch = trace.str(s.name[li]);
  p.correlation = events.front()->correlation;
  p.launch_host_ns = s.dur[li];
  int64_t first = INT64_MAX;
  for (const GpuEvent* e : events) first = std::min(first, e->ts);
  p.launch_delay_ns = first - s.ts[li];
  r.launch_host_ns += p.launch_host_ns;
  std::vector<const GpuEvent*> ks;
  for (const GpuEvent* e : events) {
    p.gpu_ns += e->dur();
    if (e->kind == GpuWorkKind::kKernel)
      ks.push_back(e);
    else
      ++p.other;
  }
  p.kernels = ks.size();
  std::vector<std::string_view> names;
  for (const GpuEvent* e : ks) names.push_back(trace.str(s.name[e->slice]));
  r.replayed_kernels += p.kernels;
  r.replayed_gpu_ns += p.gpu_ns;
  std::vector<int32_t> best;
  size_t best_matched = 0;
  p.capture = best_capture(ks, names, a.graphs, a.ids, a.options.min_match, best, best_matched,
                           p.matched_by);
  explain_unmatched(a, p, best_matched);
  if (p.capture >= 0) charge_matched(a, p, launch, ks, names, best, best_matched);
  return p;
}

}  // namespace

GraphsResult analyze_graphs(const Trace& trace, const GraphsOptions& options) {
  GraphsResult r;
  r.top = options.top;
  std::vector<CapturedGraph> graphs = collect_captures(trace, options, r);

  std::shared_ptr<const GpuEvents> ev = shared_gpu_events(trace);  // the set's, not a copy
  OpAttribution attribution(trace);
  GraphIds ids(trace, graphs);
  ReplayAttribution at{trace, options, graphs, ids, attribution, r, {}, {}, {}, {}};
  r.names.emplace_back();
  at.name_index.emplace("", 0);
  for (auto& [launch, events] : replays_by_launch(trace, *ev, r))
    r.replays.push_back(attribute_replay(at, launch, events));
  std::stable_sort(r.replays.begin(), r.replays.end(),
                   [](const GraphReplay& a, const GraphReplay& b) { return a.ts_ns < b.ts_ns; });
  r.ops = rows(at.ops);
  r.modules = rows(at.modules);
  r.kernels = rows(at.kernels);
  std::sort(r.replayed.begin(), r.replayed.end(),
            [](const ReplayedKernel& a, const ReplayedKernel& b) { return a.slice < b.slice; });
  return r;
}

const ReplayedKernel* GraphsResult::replayed_kernel(uint32_t slice) const {
  auto it = std::lower_bound(replayed.begin(), replayed.end(), slice,
                             [](const ReplayedKernel& k, uint32_t s) { return k.slice < s; });
  return it != replayed.end() && it->slice == slice ? &*it : nullptr;
}

}  // namespace mlprof
