#include "mlprof/analyze/critical_path.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "mlprof/analyze/dependency_graph.h"
#include "mlprof/analyze/steps.h"
#include "trace/units.h"

namespace mlprof {

const char* cp_edge_type_name(CpEdgeType t) {
  switch (t) {
    case CpEdgeType::kOperatorKernel:
      return "critical_path_operator";
    case CpEdgeType::kDependency:
      return "critical_path_dependency";
    case CpEdgeType::kKernelLaunchDelay:
      return "critical_path_kernel_launch_delay";
    case CpEdgeType::kKernelKernelDelay:
      return "critical_path_kernel_kernel_delay";
    default:
      return "critical_path_sync_dependency";
  }
}

namespace {

// HTA's time base: whole microseconds, start rounded up, end rounded down (see gpu_events).
int64_t us_start(int64_t ns) { return (ns >= 0 ? (ns + 999) / 1000 : -((-ns) / 1000)) * 1000; }
int64_t us_end(int64_t ns) { return (ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000)) * 1000; }

struct Ev {
  uint32_t slice;
  bool gpu;
  int64_t ts, end;
  uint32_t start_node = 0, end_node = 0;
};

struct Edge {
  uint32_t u, v;
  CpEdgeType type;
  int64_t weight;
  int32_t ev;  // attributed event (index into evs), -1 none
};

bool is_comm_kernel(std::string_view name) {
  return name.find("nccl") != std::string_view::npos ||
         name.find("NCCL") != std::string_view::npos || name.find("rccl") != std::string_view::npos;
}

// What a caller may ask for instead: the steps (numbers) and the annotations (record_function
// names, how many of each) the trace has.
std::string window_choices(const Trace& t, const StepMarkers& m) {
  const std::vector<size_t>& step_slices = m.slices;
  const SliceTable& s = t.slices;
  std::string out;
  if (step_slices.empty()) {
    out = "no ProfilerStep in the trace";
  } else {
    out = std::to_string(step_slices.size()) + (step_slices.size() == 1 ? " step" : " steps") +
          " in the trace:";
    constexpr size_t kListed = 12;
    for (size_t k = 0; k < step_slices.size(); ++k) {
      if (k == kListed && step_slices.size() > kListed + 1) {
        out += " ...";
        k = step_slices.size() - 1;
      }
      out += (k ? ", #" : " #") + std::to_string(m.numbers[k]);
    }
  }
  StringId ua = t.strings.find("user_annotation");
  std::vector<std::pair<StringId, size_t>> names;  // first-seen order
  std::unordered_map<StringId, size_t> index;
  if (ua != StringPool::kNotFound)
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.cat[i] != ua || t.is_gpu_track(s.track[i]) || step_number(t.str(s.name[i]))) continue;
      auto [it, fresh] = index.try_emplace(s.name[i], names.size());
      if (fresh) names.emplace_back(s.name[i], 0);
      ++names[it->second].second;
    }
  if (names.empty()) {
    out += "; no annotations (record_function)";
  } else {
    out += "; annotations:";
    constexpr size_t kListed = 10;
    for (size_t k = 0; k < names.size() && k < kListed; ++k)
      out += std::string(k ? ", '" : " '") + std::string(t.str(names[k].first)) + "' x" +
             std::to_string(names[k].second);
    if (names.size() > kListed) out += " and " + std::to_string(names.size() - kListed) + " more";
  }
  return out + "; --annotation \"\" takes the whole trace";
}

std::string missing_step(const Trace& t, const StepMarkers& m, int64_t step) {
  std::string name = m.source == StepSource::kProfilerStep ? "ProfilerStep#" : "#";
  return "no step " + name + std::to_string(step) + " (" + window_choices(t, m) + ")";
}

std::string missing_instance(const Trace& t, const StepMarkers& m, const CriticalPathOptions& o,
                             size_t found) {
  return "no instance " + std::to_string(o.instance) + " of an annotation matching '" +
         o.annotation + "' (" + std::to_string(found) + " found; " + window_choices(t, m) + ")";
}

bool is_allocation_call(std::string_view name) {
  for (std::string_view p :
       {"cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaMallocHost", "cudaFreeHost", "cuMemAlloc",
        "cuMemFree", "hipMalloc", "hipFree", "hipHostMalloc", "hipHostFree"})
    if (name.starts_with(p)) return true;
  return false;
}

// "what to change", from the path's split: the part that dominates and what shortens it.
std::vector<std::string> recommend(const CriticalPathResult& r,
                                   const std::vector<CriticalPathEvent>& events) {
  std::vector<std::string> out;
  if (r.path_ns <= 0) return out;
  auto share = [&](int64_t v) { return static_cast<double>(v) / static_cast<double>(r.path_ns); };
  auto pct = [&](int64_t v) {
    return format_percent(share(v)) + " (" + format_duration_ns(static_cast<double>(v)) + ")";
  };
  auto top_of = [&](const char* bound, bool (*pick)(std::string_view)) -> const CriticalPathEvent* {
    for (const CriticalPathEvent& e : events)  // by time, longest first
      if (e.bound_by == bound && (pick == nullptr || pick(e.name))) return &e;
    return nullptr;
  };
  int64_t alloc_ns = 0, memcpy_ns = 0;
  for (const CriticalPathEvent& e : events) {
    if (e.bound_by == "cpu_bound" && is_allocation_call(e.name)) alloc_ns += e.ns;
    if (e.bound_by == "gpu_compute_bound" && e.name.starts_with("Memcpy")) memcpy_ns += e.ns;
  }
  if (share(alloc_ns) >= 0.10) {
    const CriticalPathEvent* a = top_of("cpu_bound", is_allocation_call);
    out.push_back("allocations on the critical path: " + std::string(a ? a->name : "cudaMalloc") +
                  " and other allocator calls take " + pct(alloc_ns) +
                  " of it: keep PyTorch's caching allocator on (no "
                  "PYTORCH_NO_CUDA_MEMORY_CACHING, no torch.cuda.empty_cache() in the loop) and "
                  "preallocate buffers once, outside the step");
  }
  int64_t cpu = r.cpu_bound_ns - alloc_ns;
  if (share(cpu) >= 0.5) {
    const CriticalPathEvent* c = top_of("cpu_bound", [](std::string_view n) {
      return !is_allocation_call(n) && !n.empty() && !n.starts_with("critical_path_");
    });
    out.push_back("CPU-bound: host work is " + pct(cpu) + " of the path" +
                  (c ? " (longest: " + c->name + ", " + pct(c->ns) + ")" : std::string()) +
                  ", the GPU waits for Python and kernel launches: capture the step in a CUDA "
                  "graph (torch.compile(mode=\"reduce-overhead\") or torch.cuda.graphs), fuse "
                  "small ops (torch.compile), or give each launch more work (larger batch)");
  }
  if (share(r.launch_overhead_ns) >= 0.10)
    out.push_back("kernel launch overhead is " + pct(r.launch_overhead_ns) +
                  " of the path: kernels start late after their launch on an idle GPU; CUDA "
                  "graphs remove the per-kernel launch cost, fusion (torch.compile) launches "
                  "fewer kernels");
  if (share(r.kernel_kernel_overhead_ns) >= 0.10)
    out.push_back("gaps between kernels on a stream are " + pct(r.kernel_kernel_overhead_ns) +
                  " of the path: many short kernels back to back; fuse them (torch.compile) or "
                  "replay them as a CUDA graph");
  if (share(memcpy_ns) >= 0.10)
    out.push_back("host-device copies are " + pct(memcpy_ns) +
                  " of the path: copy from pinned memory with non_blocking=True, overlap copies "
                  "with compute on another stream, or keep the data on the GPU");
  if (share(r.gpu_compute_ns - memcpy_ns) >= 0.5) {
    const CriticalPathEvent* k = top_of("gpu_compute_bound", [](std::string_view n) {
      return !n.starts_with("Memcpy") && !n.starts_with("Memset");
    });
    out.push_back("GPU compute-bound: kernels are " + pct(r.gpu_compute_ns - memcpy_ns) +
                  " of the path" + (k ? " (longest: " + k->name + ", " + pct(k->ns) + ")" : "") +
                  ": the step is as fast as its kernels; speed them up (bf16/TF32, fused "
                  "kernels such as FlashAttention, shapes that fill the GPU), host-side changes "
                  "will not shorten it");
  }
  if (share(r.gpu_comm_ns) >= 0.20)
    out.push_back("communication is " + pct(r.gpu_comm_ns) +
                  " of the path: overlap it with compute (DDP bucket size, FSDP prefetch) or "
                  "send less (gradient compression, larger steps)");
  return out;
}

// One GPU event of the window: its launch and what orders it.
struct GpuItem {
  int32_t ev;
  int32_t runtime;  // evs index of its launch
  int64_t sort_by;
  bool sync;
  int64_t stream;
  int32_t device;
};

struct Node {
  int64_t ts;
  uint32_t ev;
  bool start;
};

// The window's events, their start/end nodes and the edges between them (HTA's graph).
struct CpGraph {
  std::vector<Ev> evs;
  std::vector<int64_t> ev_corr;  // per event: its correlation, -1 none
  std::vector<GpuItem> gpu;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::map<std::pair<uint32_t, uint32_t>, size_t> edge_index;

  void add_edge(uint32_t u, uint32_t v, CpEdgeType type, bool zero, int32_t ev) {
    if (u == v) return;
    int64_t w = (type == CpEdgeType::kDependency || type == CpEdgeType::kSyncDependency || zero)
                    ? 0
                    : nodes[v].ts - nodes[u].ts;
    auto [it, fresh] = edge_index.try_emplace({u, v}, edges.size());
    if (fresh)
      edges.push_back({u, v, type, w, ev});
    else
      edges[it->second] = {u, v, type, w, ev};  // networkx keeps the last edge added
  }
};

// ---- the steps a caller may pick, and the step the window is (if any) ----
void list_steps(const Trace& t, const StepMarkers& markers, CriticalPathResult& res) {
  const SliceTable& s = t.slices;
  const std::vector<size_t>& step_slices = markers.slices;
  res.steps_total = step_slices.size();
  for (size_t k = 0; k < step_slices.size() && k < kCriticalPathMaxListedSteps; ++k) {
    size_t i = step_slices[k];
    std::string_view name = t.str(s.name[i]);
    res.steps.push_back({markers.numbers[k], std::string(name), s.ts[i], s.dur[i]});
  }
}

// ---- the window: the chosen step, or the chosen instance of the annotation ----
// False (with res.window_missing and res.message set) when the chosen one is not in the trace.
bool choose_window(const Trace& t, const StepMarkers& markers, const CriticalPathOptions& o,
                   CriticalPathResult& res, int64_t& wb, int64_t& we) {
  const SliceTable& s = t.slices;
  const std::vector<size_t>& step_slices = markers.slices;
  wb = INT64_MIN, we = INT64_MAX;
  if (o.step >= 0) {
    auto nit = std::find(markers.numbers.begin(), markers.numbers.end(), o.step);
    auto it = step_slices.begin() + (nit - markers.numbers.begin());
    if (it == step_slices.end()) {
      res.window_missing = true;
      res.annotation = markers.source == StepSource::kProfilerStep
                           ? "ProfilerStep#" + std::to_string(o.step)
                           : "step #" + std::to_string(o.step);
      res.instance = 0;
      res.message = missing_step(t, markers, o.step);
      return false;
    }
    wb = us_start(s.ts[*it]);
    we = us_end(s.end(*it));
    res.window_name = std::string(t.str(s.name[*it]));
    res.annotation = res.window_name;  // the text names the step as an annotation of its own
    res.instance = 0;
    res.step = o.step;
  } else if (!o.annotation.empty()) {
    std::vector<std::tuple<int64_t, int64_t, size_t>> inst;  // start, end, slice
    for (size_t i = 0; i < s.size(); ++i)
      if (t.str(s.name[i]).find(o.annotation) != std::string_view::npos)
        inst.emplace_back(us_start(s.ts[i]), us_end(s.end(i)), i);
    std::sort(inst.begin(), inst.end());
    if (o.instance >= inst.size()) {
      res.window_missing = true;
      res.message = missing_instance(t, markers, o, inst.size());
      return false;
    }
    wb = std::get<0>(inst[o.instance]);
    we = std::get<1>(inst[o.instance]);
    res.window_name = std::string(t.str(s.name[std::get<2>(inst[o.instance])]));
    if (auto n = step_number(res.window_name)) res.step = *n;
  }
  res.window_begin_ns = wb == INT64_MIN ? t.begin_ns() : wb;
  res.window_end_ns = we == INT64_MAX ? t.end_ns() : we;
  return true;
}

// ---- events: CPU ops and runtime calls in the window; GPU events whose launch is ----
void collect_window_events(const Trace& t, const DependencyGraph& graph, int64_t wb, int64_t we,
                           CpGraph& g) {
  const SliceTable& s = t.slices;
  std::unordered_map<int64_t, int32_t> runtime_by_corr;  // correlation -> evs index
  for (const DepHostCall& h : graph.host_calls()) {
    size_t i = h.slice;
    int64_t ts = us_start(s.ts[i]), end = us_end(s.end(i));
    if (ts < wb || ts > we || end <= ts) continue;
    if (h.runtime && h.corr >= 0) runtime_by_corr[h.corr] = static_cast<int32_t>(g.evs.size());
    g.evs.push_back(Ev{static_cast<uint32_t>(i), false, ts, end});
    g.ev_corr.push_back(h.corr == kNoCorrelation ? -1 : h.corr);
  }
  for (const DepGpuEvent& e : graph.gpu_events()) {
    auto it = runtime_by_corr.find(e.corr);
    if (e.corr < 0 || it == runtime_by_corr.end()) continue;
    size_t i = e.slice;
    int64_t ts = us_start(s.ts[i]);
    int64_t end = std::max(ts, us_end(s.end(i)));
    g.gpu.push_back({static_cast<int32_t>(g.evs.size()), it->second, e.sync ? end : ts, e.sync,
                     e.stream, e.device});
    g.evs.push_back(Ev{static_cast<uint32_t>(i), true, ts, end});
    g.ev_corr.push_back(e.corr);
  }
}

// ---- nodes: a start and an end per event, in time order ----
void build_nodes(CpGraph& g) {
  std::vector<Ev>& evs = g.evs;
  std::vector<Node>& nodes = g.nodes;
  nodes.reserve(2 * evs.size());
  for (uint32_t k = 0; k < evs.size(); ++k) {
    nodes.push_back({evs[k].ts, k, true});
    nodes.push_back({evs[k].end, k, false});
  }
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const Node& a, const Node& b) { return a.ts < b.ts; });
  for (uint32_t n = 0; n < nodes.size(); ++n)
    (nodes[n].start ? evs[nodes[n].ev].start_node : evs[nodes[n].ev].end_node) = n;
}

// ---- CPU: per thread, walk the call stack of node events ----
void add_cpu_edges(const Trace& t, CpGraph& g) {
  const SliceTable& s = t.slices;
  const std::vector<Ev>& evs = g.evs;
  const std::vector<Node>& nodes = g.nodes;
  static const char* const kBlocking[] = {"cudaDeviceSynchronize",
                                          "cudaStreamSynchronize",
                                          "cudaEventQuery",
                                          "cudaEventSynchronize",
                                          "cudaMemcpy",
                                          "cudaMemcpyAsync"};
  auto blocking = [&](uint32_t ev) {
    std::string_view n = t.str(s.name[evs[ev].slice]);
    for (const char* b : kBlocking)
      if (n == b) return true;
    return false;
  };
  std::map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t k = 0; k < evs.size(); ++k)
    if (!evs[k].gpu) by_track[s.track[evs[k].slice]].push_back(k);
  for (auto& [track, ks] : by_track) {
    std::stable_sort(ks.begin(), ks.end(), [&](uint32_t a, uint32_t b) {
      return evs[a].ts != evs[b].ts ? evs[a].ts < evs[b].ts : evs[a].end > evs[b].end;
    });
    std::vector<uint32_t> stack;
    int32_t last_node = -1, last_top = -1, last_parent = -1;
    auto attribute = [&](uint32_t u, uint32_t v, int32_t parent) -> int32_t {
      if (nodes[u].start) return static_cast<int32_t>(nodes[u].ev);
      if (!nodes[v].start) return static_cast<int32_t>(nodes[v].ev);
      return parent;
    };
    auto exit_top = [&]() {
      uint32_t ev = stack.back();
      stack.pop_back();
      uint32_t end = evs[ev].end_node;
      if (last_node >= 0) {
        int32_t attr = attribute(static_cast<uint32_t>(last_node), end, last_parent);
        g.add_edge(static_cast<uint32_t>(last_node), end, CpEdgeType::kOperatorKernel, blocking(ev),
                   attr);
      }
      if (stack.empty()) {
        last_node = -1;
        last_top = static_cast<int32_t>(end);
      } else {
        last_node = static_cast<int32_t>(end);
        last_parent = static_cast<int32_t>(stack.back());
      }
    };
    for (uint32_t ev : ks) {
      while (!stack.empty() && evs[stack.back()].end <= evs[ev].ts) exit_top();
      uint32_t start = evs[ev].start_node;
      if (stack.empty() && last_top >= 0)
        g.add_edge(static_cast<uint32_t>(last_top), start, CpEdgeType::kDependency, false, -1);
      int32_t parent = stack.empty() ? -1 : static_cast<int32_t>(stack.back());
      if (last_node >= 0) {
        int32_t attr = attribute(static_cast<uint32_t>(last_node), start, last_parent);
        g.add_edge(static_cast<uint32_t>(last_node), start, CpEdgeType::kOperatorKernel, false,
                   attr);
      }
      last_node = static_cast<int32_t>(start);
      last_parent = parent;
      stack.push_back(ev);
    }
    while (!stack.empty()) exit_top();
  }
}

// Queue length per stream (HTA TraceCounters): +1 at each launch, -1 at each GPU event's
// start, over the whole trace's launches whose GPU event is in the window.
void stream_queue_lengths(const CpGraph& g, std::vector<int64_t>& q_at_launch,
                          std::vector<int64_t>& q_at_kernel) {
  const std::vector<GpuItem>& gpu = g.gpu;
  const std::vector<Ev>& evs = g.evs;
  std::map<std::pair<int32_t, int64_t>, std::vector<std::tuple<int64_t, int, size_t>>> q;
  for (size_t k = 0; k < gpu.size(); ++k) {
    if (gpu[k].sync) continue;
    q[{gpu[k].device, gpu[k].stream}].emplace_back(evs[gpu[k].runtime].ts, +1, k);
    q[{gpu[k].device, gpu[k].stream}].emplace_back(evs[gpu[k].ev].ts, -1, k);
  }
  q_at_launch.assign(gpu.size(), 0);
  q_at_kernel.assign(gpu.size(), 0);
  for (auto& [key, v] : q) {
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    int64_t len = 0;
    for (auto& [ts, d, k] : v) {
      len += d;
      (d > 0 ? q_at_launch : q_at_kernel)[k] = len;
    }
  }
}

// What the GPU edges phase keeps while it walks the GPU events in order.
struct GpuWalk {
  std::vector<size_t> launch_order;  // launches in time order, for event-record lookups
  std::map<std::pair<int32_t, int64_t>, int32_t> last_on_stream;  // -> end node
  std::unordered_map<int32_t, int32_t> kernel_sync;               // dest gpu item -> src gpu item

  int32_t previous_launch(const CpGraph& g, int32_t device, int64_t stream, int64_t ts) const {
    int32_t found = -1;
    for (size_t k : launch_order) {
      if (g.evs[g.gpu[k].runtime].ts > ts) break;
      if (g.gpu[k].device == device && g.gpu[k].stream == stream) found = static_cast<int32_t>(k);
    }
    return found;
  }
};

// A synchronization event (stream, context or event sync, stream wait): the edges it adds now
// (to its runtime call's end), or the launch it makes wait (walk.kernel_sync).
void add_sync_event_edges(const Trace& t, const DependencyGraph& graph, const GpuItem& it,
                          CpGraph& g, GpuWalk& walk) {
  const SliceTable& s = t.slices;
  const std::vector<Ev>& evs = g.evs;
  const std::vector<GpuItem>& gpu = g.gpu;
  uint32_t ev = static_cast<uint32_t>(it.ev);
  std::string_view name = t.str(s.name[evs[ev].slice]);
  uint32_t runtime_end = evs[it.runtime].end_node;
  if (name == "Stream Sync" || name == "Context Sync") {
    for (auto& [key, node] : walk.last_on_stream)
      if (name == "Context Sync" || (key.first == it.device && key.second == it.stream))
        g.add_edge(static_cast<uint32_t>(node), runtime_end, CpEdgeType::kSyncDependency, false,
                   -1);
  } else if (name == "Event Sync" || name == "Stream Wait Event") {
    const std::unordered_map<int64_t, uint32_t>& record_by_corr = graph.event_records();
    const Arg* rec = t.slice_arg(evs[ev].slice, "wait_on_cuda_event_record_corr_id");
    const Arg* ws = t.slice_arg(evs[ev].slice, "wait_on_stream");
    // Plain values, not optionals: GCC 12 read the optional's value as maybe uninitialized.
    bool has_rc = false;
    int64_t rc = -1;
    if (rec)
      if (auto v = rec->as_int()) {
        has_rc = true;
        rc = *v;
      }
    auto wstream = ws ? ws->as_int() : std::nullopt;
    auto r = has_rc ? record_by_corr.find(rc) : record_by_corr.end();
    if (!has_rc || !wstream || r == record_by_corr.end()) return;
    int32_t src = walk.previous_launch(g, it.device, *wstream, us_start(s.ts[r->second]));
    if (src < 0) return;
    if (name == "Event Sync") {
      g.add_edge(evs[gpu[src].ev].end_node, runtime_end, CpEdgeType::kSyncDependency, false, -1);
    } else {
      // The next launch on this thread and stream after cudaStreamWaitEvent waits on src.
      uint32_t wait_call = evs[it.runtime].slice;
      int32_t dest = -1;
      for (size_t d : walk.launch_order)
        if (evs[gpu[d].runtime].ts >= evs[it.runtime].ts && gpu[d].stream == it.stream &&
            s.track[evs[gpu[d].runtime].slice] == s.track[wait_call]) {
          dest = static_cast<int32_t>(d);
          break;
        }
      if (dest >= 0) walk.kernel_sync[dest] = src;
    }
  }
}

// ---- GPU: launches, stream order, synchronization ----
void add_gpu_edges(const Trace& t, const DependencyGraph& graph, const CriticalPathOptions& o,
                   CpGraph& g) {
  const std::vector<Ev>& evs = g.evs;
  const std::vector<GpuItem>& gpu = g.gpu;
  const std::vector<Node>& nodes = g.nodes;
  std::vector<int64_t> q_at_launch, q_at_kernel;
  stream_queue_lengths(g, q_at_launch, q_at_kernel);
  GpuWalk walk;
  for (size_t k = 0; k < gpu.size(); ++k)
    if (!gpu[k].sync) walk.launch_order.push_back(k);
  std::sort(walk.launch_order.begin(), walk.launch_order.end(),
            [&](size_t a, size_t b) { return evs[gpu[a].runtime].ts < evs[gpu[b].runtime].ts; });
  std::vector<size_t> order(gpu.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return gpu[a].sort_by < gpu[b].sort_by; });
  for (size_t k : order) {
    const GpuItem& it = gpu[k];
    uint32_t ev = static_cast<uint32_t>(it.ev);
    if (it.sync) {
      add_sync_event_edges(t, graph, it, g, walk);
      continue;
    }
    g.add_edge(evs[ev].start_node, evs[ev].end_node, CpEdgeType::kOperatorKernel, false,
               static_cast<int32_t>(ev));
    std::pair<int32_t, int64_t> key{it.device, it.stream};
    auto last = walk.last_on_stream.find(key);
    int32_t sync_end = -1;
    if (auto ks = walk.kernel_sync.find(static_cast<int32_t>(k)); ks != walk.kernel_sync.end()) {
      sync_end = static_cast<int32_t>(evs[gpu[ks->second].ev].end_node);
      g.add_edge(static_cast<uint32_t>(sync_end), evs[ev].start_node, CpEdgeType::kSyncDependency,
                 false, -1);
      walk.kernel_sync.erase(ks);
    }
    int64_t launch_ts = evs[it.runtime].ts;
    bool launch_added = false;
    if (q_at_launch[k] == 1 && q_at_kernel[k] == 0 &&
        (last == walk.last_on_stream.end() || nodes[last->second].ts < launch_ts) &&
        (sync_end < 0 || nodes[sync_end].ts < launch_ts)) {
      g.add_edge(evs[it.runtime].start_node, evs[ev].start_node, CpEdgeType::kKernelLaunchDelay,
                 false, -1);
      launch_added = true;
    } else if (last != walk.last_on_stream.end() &&
               (sync_end < 0 || nodes[sync_end].ts < nodes[last->second].ts)) {
      g.add_edge(static_cast<uint32_t>(last->second), evs[ev].start_node,
                 CpEdgeType::kKernelKernelDelay, false,
                 static_cast<int32_t>(nodes[last->second].ev));
    }
    if (o.zero_weight_launch_edges && !launch_added)
      g.add_edge(evs[it.runtime].start_node, evs[ev].start_node, CpEdgeType::kKernelLaunchDelay,
                 true, -1);
    walk.last_on_stream[key] = static_cast<int32_t>(evs[ev].end_node);
  }
}

// ---- longest path in the DAG (Kahn order, then dynamic programming) ----
// The path's edges in order, and its length in path_ns; nullopt when the graph has a cycle.
std::optional<std::vector<uint32_t>> longest_path(const CpGraph& g, int64_t& path_ns) {
  const std::vector<Edge>& edges = g.edges;
  size_t n = g.nodes.size();
  std::vector<std::vector<uint32_t>> out(n);
  std::vector<uint32_t> indeg(n, 0);
  for (uint32_t k = 0; k < edges.size(); ++k) {
    out[edges[k].u].push_back(k);
    ++indeg[edges[k].v];
  }
  std::vector<uint32_t> topo;
  topo.reserve(n);
  for (uint32_t v = 0; v < n; ++v)
    if (!indeg[v]) topo.push_back(v);
  for (size_t h = 0; h < topo.size(); ++h)
    for (uint32_t k : out[topo[h]])
      if (--indeg[edges[k].v] == 0) topo.push_back(edges[k].v);
  if (topo.size() != n) return std::nullopt;
  std::vector<int64_t> dist(n, 0);
  std::vector<int32_t> via(n, -1);  // edge that reached the node's best distance
  for (uint32_t u : topo)
    for (uint32_t k : out[u]) {
      const Edge& e = edges[k];
      if (dist[u] + e.weight > dist[e.v] || (via[e.v] < 0 && dist[u] + e.weight >= dist[e.v])) {
        dist[e.v] = dist[u] + e.weight;
        via[e.v] = static_cast<int32_t>(k);
      }
    }
  uint32_t best = 0;
  for (uint32_t v = 0; v < n; ++v)
    if (dist[v] > dist[best]) best = v;
  std::vector<uint32_t> path_edges;
  for (uint32_t v = best; via[v] >= 0; v = edges[via[v]].u)
    path_edges.push_back(static_cast<uint32_t>(via[v]));
  std::reverse(path_edges.begin(), path_edges.end());
  path_ns = dist[best];
  return path_edges;
}

// The synchronization edges of the graph, each marked whether the path takes it.
void list_syncs(const Trace& t, const CpGraph& g, const std::vector<bool>& edge_on_path,
                CriticalPathResult& res) {
  const SliceTable& s = t.slices;
  for (uint32_t k = 0; k < g.edges.size(); ++k) {
    const Edge& e = g.edges[k];
    if (e.type != CpEdgeType::kSyncDependency) continue;
    const Ev& a = g.evs[g.nodes[e.u].ev];
    const Ev& b = g.evs[g.nodes[e.v].ev];
    res.syncs.push_back(CriticalPathSync{
        std::string(t.str(s.name[a.slice])), std::string(t.str(s.name[b.slice])),
        g.ev_corr[g.nodes[e.u].ev], g.ev_corr[g.nodes[e.v].ev], b.gpu, edge_on_path[k]});
  }
}

// Each path edge's bound (CPU, GPU compute or communication, launch or kernel-kernel overhead),
// the totals per bound, the weighted edges in path order, and the time per event.
void attribute_path(const Trace& t, const CpGraph& g, const std::vector<uint32_t>& path_edges,
                    CriticalPathResult& res) {
  const SliceTable& s = t.slices;
  const std::vector<Edge>& edges = g.edges;
  const std::vector<Node>& nodes = g.nodes;
  std::vector<bool> on_path_ev(g.evs.size(), false);
  std::map<std::pair<std::string, std::string>, CriticalPathEvent> by_event;
  auto mark = [&](uint32_t node) { on_path_ev[nodes[node].ev] = true; };
  if (!path_edges.empty()) mark(edges[path_edges[0]].u);
  for (uint32_t k : path_edges) {
    const Edge& e = edges[k];
    mark(e.v);
    std::string bound;
    std::string name, category;
    if (e.type == CpEdgeType::kKernelKernelDelay) {
      bound = "gpu_kernel_kernel_overhead";
      res.kernel_kernel_overhead_ns += e.weight;
    } else if (e.type == CpEdgeType::kKernelLaunchDelay) {
      bound = "gpu_kernel_launch_overhead";
      res.launch_overhead_ns += e.weight;
    } else if (e.type == CpEdgeType::kOperatorKernel && e.ev >= 0) {
      const Ev& ev = g.evs[e.ev];
      name = std::string(t.str(s.name[ev.slice]));
      category = std::string(t.str(s.cat[ev.slice]));
      if (!ev.gpu) {
        bound = "cpu_bound";
        res.cpu_bound_ns += e.weight;
      } else if (is_comm_kernel(name)) {
        bound = "gpu_communication_bound";
        res.gpu_comm_ns += e.weight;
      } else {
        bound = "gpu_compute_bound";
        res.gpu_compute_ns += e.weight;
      }
    } else if (e.type == CpEdgeType::kOperatorKernel) {
      bound = "cpu_bound";  // a gap inside a top-level op with no enclosing node event
      res.cpu_bound_ns += e.weight;
    }
    if (e.weight > 0) {
      res.path.push_back(CriticalPathStep{cp_edge_type_name(e.type), name, category, bound,
                                          nodes[e.u].ts, e.weight, res.path.size() + 1});
      CriticalPathEvent& agg =
          by_event[{name.empty() ? std::string(cp_edge_type_name(e.type)) : name, bound}];
      agg.name = name.empty() ? std::string(cp_edge_type_name(e.type)) : name;
      agg.bound_by = bound;
      ++agg.edges;
      agg.ns += e.weight;
    }
  }
  res.path_events = static_cast<uint64_t>(std::count(on_path_ev.begin(), on_path_ev.end(), true));
  for (auto& [k, v] : by_event) res.top_events.push_back(v);
  std::sort(res.top_events.begin(), res.top_events.end(),
            [](const auto& a, const auto& b) { return a.ns > b.ns; });
}

// The listed events, path edges and syncs cut to the options' sizes.
void trim_lists(const CriticalPathOptions& o, CriticalPathResult& res) {
  if (res.top_events.size() > o.top) res.top_events.resize(o.top);
  if (res.path.size() > o.max_listed) {
    // The longest edges (earlier first among equals), back in path order.
    res.path_weighted_total = res.path.size();
    std::stable_sort(
        res.path.begin(), res.path.end(),
        [](const CriticalPathStep& a, const CriticalPathStep& b) { return a.ns > b.ns; });
    res.path.resize(o.max_listed);
    std::sort(
        res.path.begin(), res.path.end(),
        [](const CriticalPathStep& a, const CriticalPathStep& b) { return a.index < b.index; });
  }
  if (res.syncs.size() > o.max_listed) {
    res.syncs_total = res.syncs.size();
    std::stable_partition(res.syncs.begin(), res.syncs.end(),
                          [](const CriticalPathSync& y) { return y.on_path; });
    res.syncs.resize(o.max_listed);
  }
}

}  // namespace

CriticalPathResult analyze_critical_path(const Trace& t, const CriticalPathOptions& o,
                                         const DependencyGraph* graph) {
  CriticalPathResult res;
  // The trace's graph (its events, launch and sync links, step windows), else one built here.
  std::optional<DependencyGraph> own_graph;
  if (graph == nullptr || &graph->trace() != &t || graph->step_annotation() != o.step_annotation)
    graph = &own_graph.emplace(t, o.step_annotation);
  res.annotation = o.annotation;
  res.instance = o.instance;
  res.trace_begin_ns = t.begin_ns();
  const StepMarkers& markers = graph->markers();
  list_steps(t, markers, res);
  int64_t wb = INT64_MIN, we = INT64_MAX;
  if (!choose_window(t, markers, o, res, wb, we)) return res;
  CpGraph g;
  res.has_sync_events = graph->has_sync_events();
  collect_window_events(t, *graph, wb, we, g);
  if (g.evs.empty()) {
    res.message = "no CPU ops, runtime calls or GPU events in the window";
    return res;
  }
  build_nodes(g);
  add_cpu_edges(t, g);
  add_gpu_edges(t, *graph, o, g);
  res.nodes = g.nodes.size();
  res.edges = g.edges.size();
  for (Edge& e : g.edges) {
    if (e.weight < 0 && e.weight >= -1000) e.weight = 0;  // HTA: ignore -1 us (ns rounding)
    ++res.edges_by_type[static_cast<int>(e.type)];
  }
  int64_t path_ns = 0;
  std::optional<std::vector<uint32_t>> path_edges = longest_path(g, path_ns);
  if (!path_edges) {
    res.message = "the dependency graph has a cycle (negative edge weights or overlapping events)";
    return res;
  }
  res.path_ns = path_ns;
  res.path_edges = path_edges->size();
  res.path_nodes = path_edges->empty() ? 1 : path_edges->size() + 1;
  std::vector<bool> edge_on_path(g.edges.size(), false);
  for (uint32_t k : *path_edges) edge_on_path[k] = true;
  list_syncs(t, g, edge_on_path, res);
  attribute_path(t, g, *path_edges, res);
  res.recommendations = recommend(res, res.top_events);
  trim_lists(o, res);
  return res;
}

std::optional<std::string> critical_path_unavailable(const Trace& t, const CriticalPathOptions& o) {
  const SliceTable& s = t.slices;
  StringId cpu_op = t.strings.find("cpu_op"), rt = t.strings.find("cuda_runtime"),
           drv = t.strings.find("cuda_driver");
  bool events = false;
  for (size_t i = 0; i < s.size() && !events; ++i)
    events = t.is_gpu_track(s.track[i]) || s.cat[i] == cpu_op || s.cat[i] == rt || s.cat[i] == drv;
  if (!events)
    return std::string(
        "no CPU ops, runtime calls or GPU events in this trace: the critical path needs a "
        "PyTorch profiler (Kineto) trace");
  StepMarkers markers = step_markers(t, o.step_annotation);
  if (o.step >= 0) {
    for (int64_t n : markers.numbers)
      if (n == o.step) return std::nullopt;
    return missing_step(t, markers, o.step);
  }
  if (o.annotation.empty()) return std::nullopt;
  size_t found = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (t.str(s.name[i]).find(o.annotation) != std::string_view::npos) ++found;
  if (o.instance < found) return std::nullopt;
  return missing_instance(t, markers, o, found);
}

}  // namespace mlprof
