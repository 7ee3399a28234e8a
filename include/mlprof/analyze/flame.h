// Flame graph: slices merged by call path into a tree of frames with total and self time.
//
// CPU frames come from the nesting of slices on each thread (TraceBuilder::finish computed it).
// GPU work is attached under the CPU op that launched it (Trace::flows src_slice -> dst_slice),
// in a separate "GPU" subtree so that each subtree sums one kind of time: CPU frames weigh CPU
// time, GPU frames weigh kernel time by launching call path (the view nsys and PyTorch's
// export_stacks give). Unlaunched GPU work sits under "GPU" -> stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

struct FlameOptions {
  bool include_gpu = true;    // add the GPU subtree when the trace has GPU tracks
  bool split_threads = true;  // one frame per thread under "CPU" (else threads merge)
  // "ProfilerStep#12" -> "ProfilerStep#*": a flame graph aggregates identical stacks, and step
  // numbers would make every step's stacks distinct (120 steps = 120 copies of the tree).
  bool merge_steps = true;
};

struct FlameFrame {
  std::string name;
  int64_t total_ns = 0;            // summed duration of the slices at this path
  int64_t self_ns = 0;             // total minus time covered by child frames
  uint64_t count = 0;              // slices merged into this frame (0 for synthetic frames)
  int32_t parent = -1;             // index into FlameGraph::frames, -1 for the root
  std::vector<uint32_t> children;  // sorted by total, largest first
};

struct FlameGraph {
  // frames[0] is the root "all"; its children are "CPU" and (with GPU work) "GPU".
  std::vector<FlameFrame> frames;
  int64_t cpu_ns = 0;   // total of the CPU subtree
  int64_t gpu_ns = 0;   // total of the GPU subtree
  uint64_t slices = 0;  // slices placed in the graph
  uint32_t max_depth = 0;
};

FlameGraph build_flame_graph(const Trace& trace, const FlameOptions& options = {});

// Path of frame names from the root's child down to `frame` (the root itself is left out).
std::vector<std::string> flame_path(const FlameGraph& graph, uint32_t frame);

}  // namespace mlprof
