#include "mlprof/analyze/flame.h"

#include <algorithm>
#include <unordered_map>

#include "mlprof/analyze/kernel_class.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/analyze/summary.h"
#include "mlprof/analyze/timeline.h"

namespace mlprof {
namespace {

// Builds the tree: one frame per distinct (parent frame, name). Names are keyed by StringId for
// slices and by a synthetic key for threads and streams, so merging never compares strings.
class FlameTreeBuilder {
 public:
  explicit FlameTreeBuilder(const Trace& trace) : trace_(trace) {
    FlameFrame root;
    root.name = "all";
    graph_.frames.push_back(std::move(root));
  }

  uint32_t child(uint32_t parent, uint64_t key, std::string_view name) {
    uint64_t k = (static_cast<uint64_t>(parent) << 33) ^ key;
    auto [it, inserted] = index_.try_emplace(k, 0);
    if (inserted) {
      it->second = static_cast<uint32_t>(graph_.frames.size());
      FlameFrame f;
      f.name = std::string(name);
      f.parent = static_cast<int32_t>(parent);
      graph_.frames.push_back(std::move(f));
      graph_.frames[parent].children.push_back(it->second);
    }
    return it->second;
  }
  uint32_t named_child(uint32_t parent, StringId name) {
    return child(parent, name, trace_.str(name));
  }
  // Synthetic frames (threads, streams, "CPU", "GPU") use keys above every StringId.
  uint32_t synthetic_child(uint32_t parent, uint32_t tag, std::string_view name) {
    return child(parent, (uint64_t{1} << 32) | tag, name);
  }

  // Slice frames, with step slices merged into one frame per step-name prefix when asked.
  uint32_t slice_child(uint32_t parent, StringId name, bool merge_steps) {
    std::string_view n = trace_.str(name);
    if (merge_steps && step_number(n)) {
      size_t hash = n.find('#');
      std::string merged = hash == std::string_view::npos ? std::string(n) + " (all steps)"
                                                          : std::string(n.substr(0, hash)) + "#*";
      auto [it, inserted] = merged_keys_.try_emplace(merged, 0xFFFF0000u + merged_keys_.size());
      return synthetic_child(parent, it->second, merged);
    }
    return named_child(parent, name);
  }

  FlameGraph& graph() { return graph_; }

 private:
  const Trace& trace_;
  FlameGraph graph_;
  std::unordered_map<uint64_t, uint32_t> index_;
  std::unordered_map<std::string, uint32_t> merged_keys_;
};

// The CPU slice that launched each GPU slice (-1 none).
std::vector<int32_t> launchers(const Trace& trace) {
  const SliceTable& s = trace.slices;
  const size_t n = s.size();
  std::vector<int32_t> launcher(n, -1);
  for (size_t k = 0; k < trace.flows.size(); ++k) {
    int32_t src = trace.flows.src_slice[k], dst = trace.flows.dst_slice[k];
    if (src < 0 || dst < 0) continue;
    if (!trace.is_gpu_track(s.track[dst]) || trace.is_gpu_track(s.track[src])) continue;
    if (launcher[dst] < 0) launcher[dst] = src;
  }
  return launcher;
}

// Synthetic frames' totals from their children, the CPU and GPU totals, the depth, and each
// frame's children longest first.
void finish_frames(FlameGraph& g, const std::vector<uint8_t>& synthetic) {
  // Frames are created parent first, so a reverse sweep sees children before parents.
  for (size_t i = g.frames.size(); i-- > 0;) {
    if (!synthetic[i]) continue;
    int64_t sum = 0;
    for (uint32_t c : g.frames[i].children) sum += g.frames[c].total_ns;
    g.frames[i].total_ns = sum;
  }
  for (uint32_t c : g.frames[0].children) {
    if (g.frames[c].name == "CPU") g.cpu_ns = g.frames[c].total_ns;
    if (g.frames[c].name == "GPU") g.gpu_ns = g.frames[c].total_ns;
  }
  std::vector<uint32_t> depth(g.frames.size(), 0);
  for (size_t i = 1; i < g.frames.size(); ++i) {
    depth[i] = depth[g.frames[i].parent] + 1;
    g.max_depth = std::max(g.max_depth, depth[i]);
  }
  for (FlameFrame& f : g.frames) {
    std::stable_sort(f.children.begin(), f.children.end(), [&](uint32_t a, uint32_t c) {
      return g.frames[a].total_ns > g.frames[c].total_ns;
    });
  }
}

}  // namespace

FlameGraph build_flame_graph(const Trace& trace, const FlameOptions& options) {
  FlameTreeBuilder b(trace);
  const SliceTable& s = trace.slices;
  const size_t n = s.size();
  std::vector<int32_t> frame_of_slice(n, -1);
  std::vector<uint8_t> synthetic(1, 1);  // per frame: totals come from children

  constexpr uint32_t kCpuTag = 0xFFFFFFF0u, kGpuTag = 0xFFFFFFF1u;
  // Kineto's own "PyTorch Profiler (0)" span (category Trace) covers the whole recording on a
  // thread of its own: not CPU time of the program, so not a frame (it doubled the CPU total).
  const StringId cat_trace = trace.strings.find(kProfilerSpanCategory);
  auto profiler_span = [&](uint32_t i) { return s.cat[i] == cat_trace && s.depth[i] == 0; };
  int32_t cpu_root = -1;
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
    if (trace.tracks[t].kind != TrackKind::kThread) continue;
    uint32_t begin = trace.track_slice_begin[t], end = trace.track_slice_begin[t + 1];
    bool any = false;
    for (uint32_t i = begin; i < end && !any; ++i) any = !profiler_span(i);
    if (!any) continue;
    if (cpu_root < 0) cpu_root = static_cast<int32_t>(b.synthetic_child(0, kCpuTag, "CPU"));
    uint32_t base = static_cast<uint32_t>(cpu_root);
    if (options.split_threads) base = b.synthetic_child(base, t, trace.track_label(t));
    for (uint32_t i = begin; i < end; ++i) {
      if (profiler_span(i)) continue;
      int32_t p = s.parent[i];
      uint32_t parent_frame = p >= 0 && frame_of_slice[p] >= 0 ? frame_of_slice[p] : base;
      uint32_t f = b.slice_child(parent_frame, s.name[i], options.merge_steps);
      frame_of_slice[i] = static_cast<int32_t>(f);
      FlameFrame& fr = b.graph().frames[f];
      fr.total_ns += s.dur[i];
      fr.self_ns += s.self[i];
      fr.count += 1;
      b.graph().slices += 1;
    }
  }
  synthetic.resize(b.graph().frames.size(), 0);
  if (cpu_root >= 0) {
    synthetic[cpu_root] = 1;
    for (uint32_t c : b.graph().frames[cpu_root].children)
      if (options.split_threads) synthetic[c] = 1;
  }

  if (options.include_gpu) {
    std::vector<int32_t> launcher = launchers(trace);
    int32_t gpu_root = -1;
    std::unordered_map<uint32_t, uint32_t> gpu_copy_of_cpu;  // CPU frame -> its copy under GPU
    std::vector<uint32_t> path;
    for (uint32_t t = 0; t < trace.tracks.size(); ++t) {
      if (!trace.is_gpu_track(t)) continue;
      uint32_t begin = trace.track_slice_begin[t], end = trace.track_slice_begin[t + 1];
      for (uint32_t i = begin; i < end; ++i) {
        // GPU work only: annotations are ranges around work and syncs are waits (the GPU
        // analyses exclude both); a sync that starts inside a kernel nests under it.
        if (!is_gpu_work_slice(trace, i)) continue;
        if (gpu_root < 0) {
          gpu_root = static_cast<int32_t>(b.synthetic_child(0, kGpuTag, "GPU"));
          synthetic.resize(b.graph().frames.size(), 0);
        }
        uint32_t parent_frame = static_cast<uint32_t>(gpu_root);
        path.clear();
        int32_t l = launcher[i];
        if (l >= 0 && frame_of_slice[l] >= 0) {
          // Copy the launching op's CPU path (thread frame down to the launch call).
          for (int32_t f = frame_of_slice[l]; f > 0 && f != cpu_root;
               f = b.graph().frames[f].parent)
            path.push_back(static_cast<uint32_t>(f));
          for (auto it = path.rbegin(); it != path.rend(); ++it) {
            auto found = gpu_copy_of_cpu.find(*it);
            uint32_t copy;
            if (found != gpu_copy_of_cpu.end()) {
              copy = found->second;
            } else {
              std::string name = b.graph().frames[*it].name;
              copy = b.synthetic_child(parent_frame, 0x80000000u | *it, name);
              gpu_copy_of_cpu.emplace(*it, copy);
            }
            parent_frame = copy;
          }
        } else {
          parent_frame = b.synthetic_child(parent_frame, t, trace.track_label(t));
          // Enclosing GPU annotations, outermost first.
          path.clear();
          for (int32_t p = s.parent[i]; p >= 0; p = s.parent[p])
            if (gpu_work_kind(trace.str(s.cat[p]), trace.str(s.name[p])) ==
                GpuWorkKind::kAnnotation)
              path.push_back(p);
          for (auto it = path.rbegin(); it != path.rend(); ++it)
            parent_frame = b.named_child(parent_frame, s.name[*it]);
        }
        uint32_t f = b.named_child(parent_frame, s.name[i]);
        synthetic.resize(b.graph().frames.size(), 0);
        FlameGraph& g = b.graph();
        g.frames[f].self_ns += s.dur[i];
        g.frames[f].count += 1;
        g.slices += 1;
        for (int32_t a = static_cast<int32_t>(f); a > 0 && a != gpu_root; a = g.frames[a].parent)
          g.frames[a].total_ns += s.dur[i];
      }
    }
    if (gpu_root >= 0) synthetic[gpu_root] = 1;
  }

  FlameGraph& g = b.graph();
  synthetic.resize(g.frames.size(), 0);
  finish_frames(g, synthetic);
  return std::move(g);
}

std::vector<std::string> flame_path(const FlameGraph& graph, uint32_t frame) {
  std::vector<std::string> path;
  for (int32_t f = static_cast<int32_t>(frame); f > 0; f = graph.frames[f].parent)
    path.push_back(graph.frames[f].name);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace mlprof
