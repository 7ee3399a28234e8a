#include "mlprof/analyze/step_replay.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>

#include "analyze/name_rules.h"
#include "mlprof/analyze/dependency_graph.h"
#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/kernel_class.h"
#include "mlprof/analyze/steps.h"

namespace mlprof {

bool ReplayChange::empty() const {
  return !overlap_data_loading && !remove_host_waits && !remove_launch_overhead &&
         !overlap_communication && !pinned_async_copies && !free_host && faster_host_ops.empty() &&
         std::find(launch_overhead_steps.begin(), launch_overhead_steps.end(), 1) ==
             launch_overhead_steps.end() &&
         std::find(free_host_steps.begin(), free_host_steps.end(), 1) == free_host_steps.end() &&
         faster_kernels.empty() && kernel_target_ns.empty();
}

void ReplayChange::merge(const ReplayChange& o) {
  overlap_data_loading |= o.overlap_data_loading;
  remove_host_waits |= o.remove_host_waits;
  remove_launch_overhead |= o.remove_launch_overhead;
  overlap_communication |= o.overlap_communication;
  pinned_async_copies |= o.pinned_async_copies;
  free_host |= o.free_host;
  auto or_mask = [](std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    if (a.size() < b.size()) a.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i) a[i] |= b[i];
  };
  or_mask(launch_overhead_steps, o.launch_overhead_steps);
  or_mask(free_host_steps, o.free_host_steps);
  faster_host_ops.insert(faster_host_ops.end(), o.faster_host_ops.begin(), o.faster_host_ops.end());
  host_op_speedup = std::max(host_op_speedup, o.host_op_speedup);
  if (faster_kernels.size() < o.faster_kernels.size())
    faster_kernels.resize(o.faster_kernels.size());
  for (size_t i = 0; i < o.faster_kernels.size(); ++i) faster_kernels[i] |= o.faster_kernels[i];
  kernel_speedup = std::max(kernel_speedup, o.kernel_speedup);
  if (!o.kernel_target_ns.empty()) {
    // One entry per slice, the shorter target kept.
    kernel_target_ns.insert(kernel_target_ns.end(), o.kernel_target_ns.begin(),
                            o.kernel_target_ns.end());
    std::sort(kernel_target_ns.begin(), kernel_target_ns.end());
    kernel_target_ns.erase(
        std::unique(kernel_target_ns.begin(), kernel_target_ns.end(),
                    [](const auto& a, const auto& b) { return a.first == b.first; }),
        kernel_target_ns.end());
  }
}

ReplaySaving replay_saving(const ReplayTime& base, const ReplayTime& changed) {
  ReplaySaving r;
  r.saving_ns = std::max<int64_t>(0, base.total_ns - changed.total_ns);
  std::vector<int64_t> d;
  for (size_t k = 0; k < base.step_ns.size() && k < changed.step_ns.size(); ++k)
    d.push_back(base.step_ns[k] - changed.step_ns[k]);
  if (!d.empty()) {
    std::sort(d.begin(), d.end());
    r.step_min_ns = d.front();
    r.step_max_ns = d.back();
    r.step_median_ns = d[d.size() / 2];
  }
  return r;
}

namespace {

using analyze_detail::is_communication_name;
using analyze_detail::is_data_loading_name;
using analyze_detail::lower;

// A secondary host thread (autograd, a worker) that resumes after this long idle follows the
// step thread: its work starts from what the step thread did, not from a fixed clock.
constexpr int64_t kResumeGapNs = 50'000;
// A GPU op that starts this much later than its launch or its stream predecessor allows waited
// for something else: the op on another stream of the device that ended last before it.
constexpr int64_t kUnexplainedNs = 20'000;
constexpr int64_t kDefaultLaunchDelayNs = 5'000;

enum EdgeKind : uint8_t { kFixed, kHostSeg, kWaitDep, kGpuDur, kLaunch };
// kSegAnnotation: no op is open (only a step/user annotation or a Python frame, or nothing).
// kSegGlue: such a segment between two launching ones: the Python between two launches, which a
// captured CUDA graph does not run either (on an H100, 600 tiny kernels: 1.9 ms of a 7.6-7.9 ms
// step was this glue; the graph replay's step took 0.64 ms: tests/data/h100/advice/launch_*).
enum SegFlag : uint8_t {
  kSegDataLoading = 1,
  kSegLaunch = 2,
  kSegDispatch = 4,
  kSegAnnotation = 8,
  kSegGlue = 16
};
constexpr int64_t kCopyClockSlackNs = 100'000;
enum WaitKind : uint8_t { kWaitSync = 0, kWaitCopy = 1, kWaitPageable = 2 };

struct Seg {
  int64_t dur = 0;
  int64_t wait_part = 0;  // the part of dur spent waiting for the GPU (removed with the waits)
  StringId owner = 0;     // innermost enclosing slice's name (kNoOwner: none)
  uint8_t flags = 0;
};
constexpr StringId kNoOwner = UINT32_MAX;
constexpr uint32_t kNoOp = UINT32_MAX;

struct Op {
  int64_t dur = 0;
  StringId name = 0;
  uint32_t slice = 0;
  bool comm = false, pageable = false;
};

struct InEdge {
  uint32_t from;
  EdgeKind kind;
  uint8_t wait_kind;
  int64_t w;
  uint32_t ref;  // seg or op index
};

// An edge before the edges are grouped by their head: 24 bytes (an InEdge beside its head took
// 32; a big trace has millions of them, issue 33).
struct RawEdge {
  int64_t w;
  uint32_t to, from, ref;
  EdgeKind kind;
  uint8_t wait_kind;
};

bool is_copy_call(std::string_view n) {
  return n.find("Memcpy") != std::string_view::npos || n.find("Memset") != std::string_view::npos;
}

struct StreamOps {
  std::vector<uint32_t> ops;        // in start order
  std::vector<int64_t> launch_key;  // prefix max of launch time (or start)
};

// Typical launch delay per device: the median over ops launched onto an idle stream.
std::unordered_map<int32_t, int64_t> typical_launch_delays(
    const std::map<std::pair<int32_t, int64_t>, StreamOps>& streams,
    const std::vector<const GpuEvent*>& evs) {
  std::unordered_map<int32_t, int64_t> typical;
  std::unordered_map<int32_t, std::vector<int64_t>> delays;
  for (const auto& [key, so] : streams)
    for (size_t k = 0; k < so.ops.size(); ++k) {
      const GpuEvent& e = *evs[so.ops[k]];
      if (e.launch < 0) continue;
      int64_t prev_end = k ? evs[so.ops[k - 1]]->end : INT64_MIN;
      // Delays past kUnexplainedNs waited for something else (another stream): not launch cost.
      if (prev_end <= e.launch_ts && e.ts >= e.launch_ts && e.ts - e.launch_ts <= kUnexplainedNs)
        delays[key.first].push_back(e.ts - e.launch_ts);
    }
  for (auto& [dev, d] : delays) {
    std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
    typical[dev] = d[d.size() / 2];
  }
  return typical;
}

// Flags as kSegGlue each annotation-only segment of segs[begin..] between two launching ones.
void mark_glue(std::vector<Seg>& segs, size_t begin) {
  constexpr uint8_t kLaunching = kSegLaunch | kSegDispatch;
  for (size_t j = begin + 1; j + 1 < segs.size(); ++j)
    if ((segs[j].flags & (kSegAnnotation | kSegDataLoading)) == kSegAnnotation &&
        (segs[j - 1].flags & kLaunching) && (segs[j + 1].flags & kLaunching))
      segs[j].flags |= kSegGlue;
}

// A blocking copy call waits for its own copy (linked by correlation), even where the GPU clock
// puts the copy's end a little after the call's (on an H100, 4 of 5 256 MiB pageable copies
// ended 10-14 us after their cudaMemcpyAsync returned): that skew, else 0. Only a copy that ran
// inside the call: one that started after it returned was not waited for, and may wait for later
// host work itself.
int64_t copy_end_skew(int64_t copy_ts, int64_t copy_end, int64_t call_ts, int64_t call_end) {
  bool inside = copy_ts > call_ts && copy_ts + kCopyClockSlackNs < call_end;
  return inside && copy_end > call_end && copy_end - call_end <= kCopyClockSlackNs
             ? copy_end - call_end
             : 0;
}

}  // namespace

// A host thread of the model: its slice boundaries are its nodes, the times between them its
// segments.
struct HostThread {
  uint32_t track;
  uint32_t node_base, seg_base;
  std::vector<int64_t> times;
};

// What the phases of building a StepModel share: the host threads, the GPU ops by stream, and
// the edges before they are ordered.
struct StepBuild {
  const DependencyGraph& g;
  const Trace& t;
  const SliceTable& s;
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;  // host slices per thread
  std::vector<HostThread> threads;                               // the step thread first
  std::unordered_map<uint32_t, size_t> thread_of_track;
  std::vector<RawEdge> raw;
  uint32_t gbase = 0;                  // the first GPU op's node
  std::vector<uint32_t> op_by_launch;  // per slice: the GPU op it launched last, or kNoOp
  std::map<std::pair<int32_t, int64_t>, StreamOps> streams;
  std::vector<const GpuEvent*> evs;

  explicit StepBuild(const DependencyGraph& graph)
      : g(graph), t(graph.trace()), s(graph.trace().slices) {}
  void add(uint32_t from, uint32_t to, EdgeKind kind, int64_t w, uint32_t ref,
           uint8_t wait_kind = 0) {
    raw.push_back({w, to, from, ref, kind, wait_kind});
  }
  // The node of `track`'s slice boundary at `time`, or -1.
  int64_t host_node(uint32_t track, int64_t time) const {
    auto it = thread_of_track.find(track);
    if (it == thread_of_track.end()) return -1;
    const HostThread& th = threads[it->second];
    auto p = std::lower_bound(th.times.begin(), th.times.end(), time);
    if (p == th.times.end() || *p != time) return -1;
    return th.node_base + static_cast<uint32_t>(p - th.times.begin());
  }
  // The step thread's latest node at or before `time` (a resume point for other threads).
  int64_t main_before(int64_t time) const {
    const HostThread& main_th = threads.front();
    auto p = std::upper_bound(main_th.times.begin(), main_th.times.end(), time);
    if (p == main_th.times.begin()) return -1;
    return main_th.node_base + static_cast<uint32_t>(p - main_th.times.begin() - 1);
  }
};

struct StepModel::Impl {
  std::vector<int64_t> ts;  // per node: the recorded time
  std::vector<uint32_t> order;
  std::vector<uint32_t> in_begin;
  std::vector<InEdge> in;
  std::vector<Seg> segs;
  std::vector<Op> ops;
  std::vector<uint32_t> op_end;   // node of each op's end
  std::vector<int32_t> op_step;   // step the op belongs to (-1 none)
  std::vector<int32_t> seg_step;  // step whose host window the segment starts in (-1 none)
  std::vector<uint32_t> step_start, step_end;
  StepSource source = StepSource::kNone;
  uint32_t first_node = 0;
  bool usable = false;

  // The phases of the constructor, in order.
  void add_host_threads(StepBuild& b, const std::vector<uint32_t>& tracks,
                        const std::vector<uint8_t>& launching);
  void add_host_edges(StepBuild& b);
  void add_gpu_ops(StepBuild& b, const GpuEvents& ge);
  void add_gpu_edges(StepBuild& b);
  void add_host_waits(StepBuild& b);
  void assign_steps(StepBuild& b, const std::vector<size_t>& steps);
  void order_nodes(std::vector<RawEdge>& raw);
};

StepModel::~StepModel() = default;
StepModel::StepModel(StepModel&&) noexcept = default;
StepModel& StepModel::operator=(StepModel&&) noexcept = default;
bool StepModel::usable() const { return impl_->usable; }
bool StepModel::has_gpu() const { return !impl_->ops.empty(); }
size_t StepModel::steps() const { return impl_->step_start.size(); }
StepSource StepModel::source() const { return impl_->source; }
size_t StepModel::nodes() const { return impl_->ts.size(); }
size_t StepModel::edges() const { return impl_->in.size(); }

StepModel::StepModel(const Trace& t, std::string_view step_annotation)
    : StepModel(DependencyGraph(t, step_annotation)) {}

// ---- host threads: every slice boundary a node, the time between two a segment ----
void StepModel::Impl::add_host_threads(StepBuild& b, const std::vector<uint32_t>& tracks,
                                       const std::vector<uint8_t>& launching) {
  Impl& m = *this;
  const Trace& t = b.t;
  const SliceTable& s = b.s;
  // Ops a CUDA graph replays without their host side: ATen ops and runtime/driver calls.
  StringId cpu_op_cat = t.strings.find("cpu_op"), rt_cat = t.strings.find("cuda_runtime"),
           drv_cat = t.strings.find("cuda_driver");
  std::vector<int8_t> dl_memo(t.strings.size(), -1), launch_memo(t.strings.size(), -1);
  for (uint32_t track : tracks) {
    std::vector<uint32_t>& v = b.by_track[track];
    std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) {
      return s.ts[a] != s.ts[b] ? s.ts[a] < s.ts[b] : s.dur[a] > s.dur[b];
    });
    HostThread th{
        track, static_cast<uint32_t>(m.ts.size()), static_cast<uint32_t>(m.segs.size()), {}};
    th.times.reserve(2 * v.size());
    for (uint32_t i : v) {
      th.times.push_back(s.ts[i]);
      th.times.push_back(s.ts[i] + s.dur[i]);
    }
    std::sort(th.times.begin(), th.times.end());
    th.times.erase(std::unique(th.times.begin(), th.times.end()), th.times.end());
    for (int64_t x : th.times) m.ts.push_back(x);
    // Segments: the innermost open slice owns each.
    struct Open {
      uint32_t slice;
      int64_t end;
      bool dl;
    };
    std::vector<Open> stack;
    int dl_open = 0;
    size_t next = 0;
    for (size_t j = 0; j + 1 < th.times.size(); ++j) {
      int64_t tj = th.times[j];
      while (!stack.empty() && stack.back().end <= tj) {
        dl_open -= stack.back().dl;
        stack.pop_back();
      }
      for (; next < v.size() && s.ts[v[next]] <= tj; ++next) {
        uint32_t i = v[next];
        if (s.ts[i] + s.dur[i] <= tj) continue;
        int8_t& d = dl_memo[s.name[i]];
        if (d < 0) {
          std::string_view n = t.str(s.name[i]);
          d = is_data_loading_name(lower(n)) ? 1 : 0;  // DataLoader#..., data_load
        }
        stack.push_back({i, s.ts[i] + s.dur[i], d == 1});
        dl_open += d;
      }
      Seg g;
      g.dur = th.times[j + 1] - tj;
      g.owner = stack.empty() ? kNoOwner : s.name[stack.back().slice];
      if (dl_open > 0) g.flags |= kSegDataLoading;
      if (!stack.empty()) {
        int8_t& l = launch_memo[s.name[stack.back().slice]];
        if (l < 0) {
          std::string_view n = t.str(s.name[stack.back().slice]);
          l = n.find("Launch") != std::string_view::npos ? 1 : 0;
        }
        if (l == 1) g.flags |= kSegLaunch;
        StringId oc = s.cat[stack.back().slice];
        bool op = oc == cpu_op_cat || oc == rt_cat || oc == drv_cat;
        if (op && launching[stack.back().slice]) g.flags |= kSegDispatch;
        if (!op) g.flags |= kSegAnnotation;
      } else {
        g.flags |= kSegAnnotation;
      }
      m.segs.push_back(g);
    }
    mark_glue(m.segs, th.seg_base);
    b.thread_of_track[track] = b.threads.size();
    b.threads.push_back(std::move(th));
  }
}

// Host segments in order on each thread; other threads resume from the step thread after a gap.
void StepModel::Impl::add_host_edges(StepBuild& b) {
  Impl& m = *this;
  const std::vector<HostThread>& threads = b.threads;
  for (size_t k = 0; k < threads.size(); ++k) {
    const HostThread& th = threads[k];
    for (size_t j = 0; j + 1 < th.times.size(); ++j) {
      uint32_t seg = th.seg_base + static_cast<uint32_t>(j);
      uint32_t to = th.node_base + static_cast<uint32_t>(j + 1);
      if (k > 0 && m.segs[seg].owner == kNoOwner && m.segs[seg].dur > kResumeGapNs) {
        int64_t from = b.main_before(th.times[j + 1]);
        if (from >= 0) {
          b.add(static_cast<uint32_t>(from), to, kFixed, th.times[j + 1] - m.ts[from], 0);
          continue;
        }
      }
      b.add(th.node_base + static_cast<uint32_t>(j), to, kHostSeg, 0, seg);
    }
    if (k > 0 && !th.times.empty()) {
      int64_t from = b.main_before(th.times[0]);
      if (from >= 0)
        b.add(static_cast<uint32_t>(from), th.node_base, kFixed, th.times[0] - m.ts[from], 0);
    }
  }
}

// ---- GPU ops: duration, launch, stream order, waits on other streams ----
void StepModel::Impl::add_gpu_ops(StepBuild& b, const GpuEvents& ge) {
  Impl& m = *this;
  const Trace& t = b.t;
  const SliceTable& s = b.s;
  b.gbase = static_cast<uint32_t>(m.ts.size());
  b.op_by_launch.assign(s.size(), kNoOp);
  for (const GpuEvent& e : ge.events) {
    if (e.kind == GpuWorkKind::kSync || e.kind == GpuWorkKind::kAnnotation) continue;
    uint32_t o = static_cast<uint32_t>(m.ops.size());
    std::string_view name = t.str(s.name[e.slice]);
    Op op;
    op.dur = std::max<int64_t>(0, e.end - e.ts);
    op.name = s.name[e.slice];
    op.slice = e.slice;
    op.comm = e.type == KernelType::kCommunication || is_communication_name(lower(name));
    op.pageable =
        (e.kind == GpuWorkKind::kMemcpy || name.starts_with("Memcpy")) && is_pageable_memcpy(name);
    m.ops.push_back(op);
    b.evs.push_back(&e);
    m.ts.push_back(e.ts);
    m.ts.push_back(e.ts + op.dur);
    if (e.launch >= 0) b.op_by_launch[static_cast<size_t>(e.launch)] = o;
    StreamOps& so = b.streams[{e.device, e.stream}];
    int64_t key = e.launch >= 0 ? e.launch_ts : e.ts;
    so.launch_key.push_back(so.launch_key.empty() ? key : std::max(so.launch_key.back(), key));
    so.ops.push_back(o);
  }
  m.op_end.resize(m.ops.size());
  for (uint32_t o = 0; o < m.ops.size(); ++o) m.op_end[o] = b.gbase + 2 * o + 1;
}

// GPU edges: duration, launch (its typical delay when queued), stream order, other streams.
void StepModel::Impl::add_gpu_edges(StepBuild& b) {
  Impl& m = *this;
  const SliceTable& s = b.s;
  const std::vector<const GpuEvent*>& evs = b.evs;
  const uint32_t gbase = b.gbase;
  std::unordered_map<int32_t, int64_t> typical = typical_launch_delays(b.streams, evs);
  // Ends per device, for "the op on another stream that ended last before this one started".
  std::unordered_map<int32_t, std::vector<std::pair<int64_t, uint32_t>>> ends;
  for (uint32_t o = 0; o < m.ops.size(); ++o) ends[evs[o]->device].emplace_back(evs[o]->end, o);
  for (auto& [dev, v] : ends) std::sort(v.begin(), v.end());
  auto other_stream_end = [&](uint32_t o, int64_t not_before) -> int64_t {
    const GpuEvent& e = *evs[o];
    auto& v = ends[e.device];
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(e.ts, UINT32_MAX));
    for (int look = 0; look < 16 && it != v.begin(); ++look) {
      --it;
      if (it->first < not_before) break;
      if (evs[it->second]->stream != e.stream) return it->second;
    }
    return -1;
  };
  for (auto& [key, so] : b.streams) {
    int64_t tdelay = typical.count(key.first) ? typical[key.first] : kDefaultLaunchDelayNs;
    for (size_t k = 0; k < so.ops.size(); ++k) {
      uint32_t o = so.ops[k];
      const GpuEvent& e = *evs[o];
      uint32_t sn = gbase + 2 * o, en = sn + 1;
      b.add(sn, en, kGpuDur, 0, o);
      int64_t prev_end = k ? evs[so.ops[k - 1]]->end : INT64_MIN;
      uint32_t prev_node = k ? gbase + 2 * so.ops[k - 1] + 1 : 0;
      int64_t launch_node = e.launch >= 0 ? b.host_node(s.track[static_cast<size_t>(e.launch)],
                                                        s.ts[static_cast<size_t>(e.launch)])
                                          : -1;
      if (launch_node >= 0) {
        int64_t delay = std::max<int64_t>(0, e.ts - e.launch_ts);
        bool queued = k && prev_end > e.launch_ts;
        int64_t lw = queued ? std::min(delay, tdelay) : delay;
        int64_t sw = queued ? std::max<int64_t>(0, e.ts - prev_end) : 0;
        int64_t unexplained = queued ? sw : delay;
        if (unexplained > kUnexplainedNs) {
          int64_t x = other_stream_end(o, queued ? prev_end : e.launch_ts);
          if (x >= 0) {
            b.add(gbase + 2 * static_cast<uint32_t>(x) + 1, sn, kFixed, e.ts - evs[x]->end, 0);
            if (queued)
              sw = 0;
            else
              lw = std::min(delay, tdelay);
          }
        }
        b.add(static_cast<uint32_t>(launch_node), sn, kLaunch, lw, o);
        if (k) b.add(prev_node, sn, kFixed, sw, 0);
      } else if (k) {
        int64_t gap = std::max<int64_t>(0, e.ts - prev_end);
        if (gap > kUnexplainedNs) {
          int64_t x = other_stream_end(o, prev_end);
          if (x >= 0) {
            b.add(gbase + 2 * static_cast<uint32_t>(x) + 1, sn, kFixed, e.ts - evs[x]->end, 0);
            gap = 0;
          }
        }
        b.add(prev_node, sn, kFixed, gap, 0);
      }
    }
  }
}

// ---- host waits: syncs wait for the streams' last ops, blocking copies for their own ----
void StepModel::Impl::add_host_waits(StepBuild& b) {
  Impl& m = *this;
  const Trace& t = b.t;
  const SliceTable& s = b.s;
  const std::vector<const GpuEvent*>& evs = b.evs;
  const std::unordered_map<int64_t, int64_t>& sync_stream = b.g.sync_streams();  // corr -> stream
  StringId k_corr = t.strings.find("correlation");
  std::vector<int8_t> call_memo(t.strings.size(), -1);  // 0 none, 1 device, 2 stream/event, 3 copy
  for (const HostThread& th : b.threads) {
    for (uint32_t i : b.by_track[th.track]) {
      int8_t& cm = call_memo[s.name[i]];
      if (cm < 0) {
        std::string_view n = t.str(s.name[i]);
        cm = analyze_detail::is_device_sync_call_name(n) ? 1
             : analyze_detail::is_host_sync_call_name(n) ? 2
             : is_copy_call(n)                           ? 3
                                                         : 0;
      }
      if (cm == 0) continue;
      int64_t cts = s.ts[i], cend = s.ts[i] + s.dur[i];
      std::vector<uint32_t> deps;
      uint8_t wk = kWaitSync;
      if (cm == 3) {
        uint32_t op = b.op_by_launch[i];
        if (op == kNoOp) continue;
        deps.push_back(op);
        wk = m.ops[op].pageable ? kWaitPageable : kWaitCopy;
      } else {
        int64_t only_stream = INT64_MIN;
        if (cm == 2 && k_corr != StringPool::kNotFound) {
          const Arg* c = t.find_arg(s.args_begin[i], s.args_count[i], k_corr);
          if (auto cv = c ? c->as_int() : std::nullopt)
            if (auto f = sync_stream.find(*cv); f != sync_stream.end()) only_stream = f->second;
        }
        for (auto& [key, so] : b.streams) {
          if (only_stream != INT64_MIN && key.second != only_stream) continue;
          auto p = std::upper_bound(so.launch_key.begin(), so.launch_key.end(), cts);
          if (p == so.launch_key.begin()) continue;
          deps.push_back(so.ops[static_cast<size_t>(p - so.launch_key.begin() - 1)]);
        }
      }
      int64_t end_node = b.host_node(th.track, cend);
      if (end_node <= static_cast<int64_t>(th.node_base)) continue;
      uint32_t seg = th.seg_base + static_cast<uint32_t>(end_node - th.node_base - 1);
      int64_t seg_start = cend - m.segs[seg].dur;
      int64_t latest = INT64_MIN;
      for (uint32_t o : deps) {
        int64_t oe = evs[o]->ts + m.ops[o].dur;
        // The recorded skew stays on the edge (negative) so the unchanged replay stays exact.
        int64_t skew = cm == 3 ? copy_end_skew(evs[o]->ts, oe, cts, cend) : 0;
        oe -= skew;
        if (oe <= cts || oe > cend) continue;  // already done, or not what the call waited for
        b.add(m.op_end[o], static_cast<uint32_t>(end_node), kWaitDep, cend - oe - skew, 0, wk);
        latest = std::max(latest, oe);
      }
      if (latest != INT64_MIN)
        m.segs[seg].wait_part = std::max(
            m.segs[seg].wait_part, std::clamp<int64_t>(latest - seg_start, 0, m.segs[seg].dur));
    }
  }
}

// ---- steps: the ProfilerStep slices; each GPU op belongs to the step it was launched in ----
void StepModel::Impl::assign_steps(StepBuild& b, const std::vector<size_t>& steps) {
  Impl& m = *this;
  const SliceTable& s = b.s;
  const std::vector<const GpuEvent*>& evs = b.evs;
  const HostThread& main_th = b.threads.front();
  std::vector<int64_t> step_ts;
  for (size_t i : steps) {
    int64_t a = b.host_node(s.track[i], s.ts[i]), z = b.host_node(s.track[i], s.ts[i] + s.dur[i]);
    if (a < 0 || z < 0) continue;
    m.step_start.push_back(static_cast<uint32_t>(a));
    m.step_end.push_back(static_cast<uint32_t>(z));
    step_ts.push_back(s.ts[i]);
  }
  m.op_step.assign(m.ops.size(), -1);
  if (steps.empty() && !main_th.times.empty()) {
    // One window: the step thread's first to last slice boundary, extended to the GPU work
    // launched (from any thread) while it ran; GPU work with no launch link counts when it
    // starts inside it. Other threads' work outside it does not hold its end.
    int64_t lo = main_th.times.front(), hi = main_th.times.back();
    m.step_start.push_back(main_th.node_base);
    m.step_end.push_back(main_th.node_base + static_cast<uint32_t>(main_th.times.size() - 1));
    for (uint32_t o = 0; o < m.ops.size(); ++o) {
      int64_t key = evs[o]->launch >= 0 ? evs[o]->launch_ts : evs[o]->ts;
      if (key >= lo && key <= hi) m.op_step[o] = 0;
    }
  }
  if (!step_ts.empty()) {
    int64_t last_end = m.ts[m.step_end.back()];
    for (uint32_t o = 0; o < m.ops.size(); ++o) {
      int64_t key = evs[o]->launch >= 0 ? evs[o]->launch_ts : evs[o]->ts;
      auto p = std::upper_bound(step_ts.begin(), step_ts.end(), key);
      if (p == step_ts.begin() || key > last_end) continue;
      m.op_step[o] = static_cast<int32_t>(p - step_ts.begin() - 1);
    }
  }
  // Host segments by the step window they start in (any thread: a step's autograd thread too).
  m.seg_step.assign(m.segs.size(), -1);
  if (!m.step_start.empty()) {
    std::vector<std::pair<int64_t, int64_t>> win;  // host windows, in time order
    for (size_t k = 0; k < m.step_start.size(); ++k)
      win.emplace_back(m.ts[m.step_start[k]], m.ts[m.step_end[k]]);
    for (const HostThread& th : b.threads)
      for (size_t j = 0; j + 1 < th.times.size(); ++j) {
        auto p = std::upper_bound(win.begin(), win.end(), std::make_pair(th.times[j], INT64_MAX));
        if (p == win.begin()) continue;
        --p;
        if (th.times[j] < p->second)
          m.seg_step[th.seg_base + j] = static_cast<int32_t>(p - win.begin());
      }
  }
}

// ---- CSR of incoming edges (backward edges dropped), then a topological order ----
void StepModel::Impl::order_nodes(std::vector<RawEdge>& raw) {
  Impl& m = *this;
  size_t n = m.ts.size();
  m.in_begin.assign(n + 1, 0);
  size_t kept = 0;
  for (RawEdge& r : raw) {
    if (m.ts[r.from] > m.ts[r.to] || r.from == r.to) {
      r.to = UINT32_MAX;
      continue;
    }
    ++m.in_begin[r.to + 1];
    ++kept;
  }
  for (size_t v = 0; v < n; ++v) m.in_begin[v + 1] += m.in_begin[v];
  m.in.resize(kept);
  std::vector<uint32_t> fill(m.in_begin.begin(), m.in_begin.end() - 1);
  std::vector<uint32_t> indeg(n, 0);
  std::vector<uint32_t> out_begin(n + 1, 0);
  for (const RawEdge& r : raw) {
    if (r.to == UINT32_MAX) continue;
    m.in[fill[r.to]++] = InEdge{r.from, r.kind, r.wait_kind, r.w, r.ref};
    ++indeg[r.to];
    ++out_begin[r.from + 1];
  }
  std::vector<uint32_t>().swap(fill);
  for (size_t v = 0; v < n; ++v) out_begin[v + 1] += out_begin[v];
  std::vector<uint32_t> out(kept);
  std::vector<uint32_t> ofill(out_begin.begin(), out_begin.end() - 1);
  for (const RawEdge& r : raw)
    if (r.to != UINT32_MAX) out[ofill[r.from]++] = r.to;
  std::vector<RawEdge>().swap(raw);  // the edges are in m.in now
  std::vector<uint32_t>().swap(ofill);
  m.order.reserve(n);
  for (uint32_t v = 0; v < n; ++v)
    if (!indeg[v]) m.order.push_back(v);
  for (size_t h = 0; h < m.order.size(); ++h)
    for (uint32_t k = out_begin[m.order[h]]; k < out_begin[m.order[h] + 1]; ++k)
      if (--indeg[out[k]] == 0) m.order.push_back(out[k]);
  if (m.order.size() < n) {  // equal-time cycles (bad data): the rest in time order
    std::vector<uint32_t> rest;
    for (uint32_t v = 0; v < n; ++v)
      if (indeg[v]) rest.push_back(v);
    std::stable_sort(rest.begin(), rest.end(),
                     [&](uint32_t a, uint32_t b) { return m.ts[a] < m.ts[b]; });
    m.order.insert(m.order.end(), rest.begin(), rest.end());
  }
}

StepModel::StepModel(const DependencyGraph& g) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  StepBuild b(g);
  const Trace& t = b.t;
  const SliceTable& s = b.s;
  std::unordered_map<uint32_t, std::vector<uint32_t>>& by_track = b.by_track;
  StringId sync_cat = t.strings.find("cuda_sync");
  StringId gpu_ann = t.strings.find("gpu_user_annotation");
  StringId span_cat = t.strings.find(kProfilerSpanCategory);
  StringId mtia_cat = t.strings.find("mtia_ccp_events");  // accelerator work on host-like tracks
  // The host slices per thread (not syncs, GPU annotations, the profiler's span, MTIA work).
  for (size_t i = 0; i < s.size(); ++i) {
    if (t.is_gpu_track(s.track[i]) || s.dur[i] < 0) continue;
    StringId c = s.cat[i];
    if (c == sync_cat || c == gpu_ann || c == span_cat || c == mtia_cat) continue;
    by_track[s.track[i]].push_back(static_cast<uint32_t>(i));
  }
  if (by_track.empty()) return;
  const GpuEvents& ge = g.gpu_ops();
  // Slices that launch GPU work, and their ancestors: what a CUDA graph captures.
  std::vector<uint8_t> launching(s.size(), 0);
  for (const GpuEvent& e : ge.events)
    for (int64_t i = e.launch; i >= 0 && !launching[static_cast<size_t>(i)];
         i = s.parent[static_cast<size_t>(i)])
      launching[static_cast<size_t>(i)] = 1;
  // The windows: the step model's iterations (ProfilerStep#N, an engine's iteration annotation,
  // --step-annotation), else one window on the step thread (the TensorBoard plugin's rule).
  const StepMarkers& markers = g.markers();
  const std::vector<size_t>& steps = markers.slices;
  m.source = steps.empty() ? StepSource::kTraceSpan : markers.source;
  uint32_t main_track = 0;
  if (!steps.empty()) {
    main_track = s.track[steps.front()];
  } else {
    // The thread that launches the most GPU work, else the one with the most slices: a thread
    // that only waits or sleeps (a profiler's own thread, a watchdog) is not the step.
    std::unordered_map<uint32_t, size_t> launches;
    for (const GpuEvent& e : ge.events)
      if (e.launch >= 0) ++launches[s.track[static_cast<size_t>(e.launch)]];
    std::pair<size_t, size_t> most{0, 0};
    for (auto& [track, v] : by_track) {
      auto l = launches.find(track);
      std::pair<size_t, size_t> key{l == launches.end() ? 0 : l->second, v.size()};
      if (key > most || (key == most && track < main_track)) {
        most = key;
        main_track = track;
      }
    }
  }
  std::vector<uint32_t> tracks;
  for (auto& [track, v] : by_track) tracks.push_back(track);
  std::sort(tracks.begin(), tracks.end(), [&](uint32_t a, uint32_t b) {
    return (a == main_track) != (b == main_track) ? a == main_track : a < b;
  });
  m.add_host_threads(b, tracks, launching);
  std::vector<uint8_t>().swap(launching);
  // Every node's in-edges, at most a few per node: reserved once (growing the vector by doubling
  // held the old and the new copy at once, the largest transient of the model on big traces).
  b.raw.reserve(m.ts.size() + b.threads.size() + 4 * ge.events.size() + 64);
  m.add_host_edges(b);
  m.add_gpu_ops(b, ge);
  m.add_gpu_edges(b);
  m.add_host_waits(b);
  m.assign_steps(b, steps);
  m.order_nodes(b.raw);
  m.first_node = b.threads.front().node_base;
  m.usable = true;
}

ReplayTime StepModel::replay(const ReplayChange& c) const {
  const Impl& m = *impl_;
  ReplayTime r;
  if (!m.usable) return r;
  std::vector<uint8_t> faster_host;
  if (!c.faster_host_ops.empty()) {
    StringId hi = 0;
    for (StringId id : c.faster_host_ops) hi = std::max(hi, id);
    faster_host.assign(static_cast<size_t>(hi) + 1, 0);
    for (StringId id : c.faster_host_ops) faster_host[id] = 1;
  }
  auto in_mask = [](const std::vector<uint8_t>& mask, int32_t step) {
    return step >= 0 && static_cast<size_t>(step) < mask.size() && mask[step] != 0;
  };
  auto seg_w = [&](uint32_t si) -> int64_t {
    const Seg& g = m.segs[si];
    int32_t st = m.seg_step[si];
    if (c.free_host || in_mask(c.free_host_steps, st)) return 0;
    if ((g.flags & kSegDataLoading) && c.overlap_data_loading) return 0;
    if ((g.flags & (kSegLaunch | kSegDispatch | kSegGlue)) &&
        (c.remove_launch_overhead || in_mask(c.launch_overhead_steps, st)))
      return 0;
    int64_t w = g.dur - g.wait_part;
    if (g.owner < faster_host.size() && faster_host[g.owner])
      w = static_cast<int64_t>(static_cast<double>(w) / c.host_op_speedup);
    return w;
  };
  auto op_w = [&](const Op& o) -> int64_t {
    if (o.comm && c.overlap_communication) return 0;
    double w = static_cast<double>(o.dur);
    const int64_t* target = nullptr;
    if (!c.kernel_target_ns.empty()) {
      auto it = std::lower_bound(
          c.kernel_target_ns.begin(), c.kernel_target_ns.end(), o.slice,
          [](const std::pair<uint32_t, int64_t>& x, uint32_t sl) { return x.first < sl; });
      if (it != c.kernel_target_ns.end() && it->first == o.slice) target = &it->second;
    }
    // A pinned copy with a priced target (the link's bandwidth) takes that; else half.
    if (o.pageable && c.pinned_async_copies && target == nullptr) w /= 2;
    if (o.name < c.faster_kernels.size() && c.faster_kernels[o.name]) w /= c.kernel_speedup;
    if (target != nullptr) w = std::min(w, static_cast<double>(*target));
    return static_cast<int64_t>(w);
  };
  std::vector<int64_t> tv(m.ts);
  for (uint32_t v : m.order) {
    uint32_t b = m.in_begin[v], e = m.in_begin[v + 1];
    if (b == e) continue;
    int64_t best = INT64_MIN;
    for (uint32_t k = b; k < e; ++k) {
      const InEdge& x = m.in[k];
      int64_t w;
      switch (x.kind) {
        case kHostSeg:
          w = seg_w(x.ref);
          break;
        case kWaitDep:
          if (c.remove_host_waits || (c.pinned_async_copies && x.wait_kind == kWaitPageable))
            continue;
          w = x.w;
          break;
        case kGpuDur:
          w = op_w(m.ops[x.ref]);
          break;
        case kLaunch:
          w = c.remove_launch_overhead || in_mask(c.launch_overhead_steps, m.op_step[x.ref]) ? 0
                                                                                             : x.w;
          break;
        default:
          w = x.w;
      }
      best = std::max(best, tv[x.from] + w);
    }
    if (best != INT64_MIN) tv[v] = best;
  }
  // Step completion: its host end, or the end of the GPU work it launched, whichever is later.
  size_t ns = m.step_start.size();
  if (ns == 0) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t x : tv) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    r.total_ns = hi - lo;
    r.step_ns = {r.total_ns};
    return r;
  }
  std::vector<int64_t> done(ns);
  for (size_t k = 0; k < ns; ++k) done[k] = tv[m.step_end[k]];
  for (size_t o = 0; o < m.ops.size(); ++o)
    if (m.op_step[o] >= 0)
      done[static_cast<size_t>(m.op_step[o])] =
          std::max(done[static_cast<size_t>(m.op_step[o])], tv[m.op_end[o]]);
  int64_t prev = tv[m.step_start[0]];
  int64_t start = prev;
  for (size_t k = 0; k < ns; ++k) {
    int64_t d = std::max(done[k], prev);
    r.step_ns.push_back(d - prev);
    prev = d;
  }
  r.total_ns = prev - start;
  return r;
}

bool StepModel::baseline_exact() const {
  const Impl& m = *impl_;
  if (!m.usable || m.step_start.empty()) return m.usable;
  // The recorded steps' completions, from the recorded node times: the unchanged replay must
  // give the same ones.
  size_t ns = m.step_start.size();
  std::vector<int64_t> done(ns);
  for (size_t k = 0; k < ns; ++k) done[k] = m.ts[m.step_end[k]];
  for (size_t o = 0; o < m.ops.size(); ++o)
    if (m.op_step[o] >= 0)
      done[static_cast<size_t>(m.op_step[o])] =
          std::max(done[static_cast<size_t>(m.op_step[o])], m.ts[m.op_end[o]]);
  ReplayTime a = replay();
  int64_t prev = m.ts[m.step_start[0]];
  for (size_t k = 0; k < ns; ++k) {
    int64_t d = std::max(done[k], prev);
    if (a.step_ns[k] != d - prev) return false;
    prev = d;
  }
  return true;
}

}  // namespace mlprof
