// What-if replay of a trace's steps: the replay's edge set of the trace's dependency graph
// (dependency_graph.h: host threads in order, launch -> GPU op, stream order, cross-stream waits,
// host waits on the GPU), built once per trace with the graph, and replayed with a change applied
// to measure the new step time. `bottlenecks` prices its findings with it: a finding's saving is
// the replayed step-time difference, so a host sync behind a busy GPU saves ~0. docs/analysis.md
// "Replay model" explains the rules and where they can be wrong.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

class DependencyGraph;

// One change to the step; several may be set at once (the combined replay ORs them).
struct ReplayChange {
  bool overlap_data_loading = false;  // host time inside DataLoader / data_load spans -> 0
  bool remove_host_waits = false;     // syncs and blocking copies no longer wait for the GPU
  // CUDA graphs: ATen ops' and runtime calls' host time (dispatch, launches) and the launch ->
  // kernel delay -> 0; Python around them and data loading stay.
  bool remove_launch_overhead = false;
  bool overlap_communication = false;  // communication kernels cost the step nothing
  bool pinned_async_copies = false;    // pageable copies 2x faster, and the host goes on
  bool free_host = false;              // all host work outside waits -> 0 (a bound)
  // The same two changes limited to some windows (a mask over the replayed steps; empty: none):
  // launch overhead removed in iterations that would replay a captured graph, host time -> 0 in
  // the iterations a serving finding names (decode iterations dominated by host time).
  std::vector<uint8_t> launch_overhead_steps;
  std::vector<uint8_t> free_host_steps;
  // Host ops (by name id) whose self time becomes host_op_speedup times shorter.
  std::vector<StringId> faster_host_ops;
  double host_op_speedup = 2;
  // GPU kernels (mask over name ids; empty = none) that run kernel_speedup times faster.
  std::vector<uint8_t> faster_kernels;
  double kernel_speedup = 2;
  // GPU kernels (by slice) that take at most this long: a roofline target (roofline.h's
  // kernel_roofline). Sorted by slice, one entry per slice.
  std::vector<std::pair<uint32_t, int64_t>> kernel_target_ns;

  bool empty() const;
  void merge(const ReplayChange& other);
};

struct ReplayTime {
  int64_t total_ns = 0;          // first step's start to the last step's completion
  std::vector<int64_t> step_ns;  // per step (completion to completion)
};

struct ReplaySaving {
  int64_t saving_ns = 0;                                         // total, >= 0
  int64_t step_min_ns = 0, step_median_ns = 0, step_max_ns = 0;  // per-step spread
};
ReplaySaving replay_saving(const ReplayTime& base, const ReplayTime& changed);

class StepModel {
 public:
  // Builds the graph of the whole trace (O(n log n)). Its windows are the step model's
  // iterations (step_markers(trace, step_annotation): ProfilerStep#N, vLLM/SGLang iterations, a
  // user-named annotation); a trace with none has one window, the step thread's span extended to
  // the GPU work launched in it. A trace without host slices gives an empty model (usable() false).
  explicit StepModel(const Trace& trace, std::string_view step_annotation = {});
  // The same, from the vertices and links of a graph already built (its trace and step windows).
  explicit StepModel(const DependencyGraph& graph);
  ~StepModel();
  StepModel(StepModel&&) noexcept;
  StepModel& operator=(StepModel&&) noexcept;

  bool usable() const;
  bool has_gpu() const;       // GPU ops in the graph
  size_t steps() const;       // windows replayed (1 for a trace without iterations)
  StepSource source() const;  // where the windows come from (kTraceSpan: the one window)
  size_t nodes() const;
  size_t edges() const;
  // The unchanged replay reproduces every node's time (a check of the graph's construction).
  bool baseline_exact() const;
  ReplayTime replay(const ReplayChange& change = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlprof
