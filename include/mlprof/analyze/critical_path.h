// `mlprof critical-path`: the longest dependency chain through one step (or annotation), after
// Holistic Trace Analysis' critical path analysis (hta/analyzers/critical_path_analysis.py):
// a node at the start and end of every CPU op / runtime call / GPU event, edges for
// operator spans and nesting, top-level op order, kernel launch delay (only when the stream was
// idle at the launch), kernel-kernel order on a stream, and synchronization (stream, context,
// event sync: GPU -> CPU; stream wait event: GPU -> GPU). The longest path's time splits into
// CPU-bound, GPU compute, GPU communication, launch overhead and kernel-kernel overhead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

class DependencyGraph;

struct CriticalPathOptions {
  std::string annotation = "ProfilerStep";  // substring of an annotation's name; "" = all
  size_t instance = 0;                      // which occurrence (by start time)
  // >= 0: the window is the host step ProfilerStep#step (exact number, as `mlprof steps` counts
  // steps) instead of an annotation instance; `annotation` and `instance` are then ignored.
  int64_t step = -1;
  // The iterations `step` numbers (steps.h step_markers): "" ProfilerStep#N, else the engine's
  // annotation; a regex: the user's --step-annotation.
  std::string step_annotation;
  // HTA adds a zero-weight launch -> kernel edge for every kernel whose launch delay is not
  // on the graph (its tests set CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1).
  bool zero_weight_launch_edges = true;
  size_t top = 20;
  // Path edges and synchronization edges listed at most (the report's size budget: one step of
  // a big trace has 1e5 path edges, 24 MiB of JSON). Past it, the longest path edges are kept
  // in path order, and the syncs on the path first; the result says how many there were.
  size_t max_listed = SIZE_MAX;
};

// The options with the set's --step-annotation where they name none (one step model for all).
inline CriticalPathOptions with_step_annotation(CriticalPathOptions o, const std::string& a) {
  if (o.step_annotation.empty()) o.step_annotation = a;
  return o;
}

enum class CpEdgeType : uint8_t {
  kOperatorKernel,     // span of an op / kernel, or between nested ops
  kDependency,         // consecutive top-level CPU ops (weight 0)
  kKernelLaunchDelay,  // launch call start -> kernel start
  kKernelKernelDelay,  // previous kernel end -> kernel start on one stream
  kSyncDependency,     // GPU -> CPU or GPU -> GPU synchronization (weight 0)
};
const char* cp_edge_type_name(CpEdgeType t);

struct CriticalPathEvent {  // events the path's time is attributed to, merged by name
  std::string name;
  std::string bound_by;  // cpu_bound, gpu_compute_bound, ...
  uint64_t edges = 0;
  int64_t ns = 0;
};

struct CriticalPathStep {  // one edge of the path, in order
  std::string type;
  std::string event;     // attributed event name ("" for weightless edges)
  std::string category;  // its trace category (cpu_op, cuda_runtime, kernel, ...); "" for delays
  std::string bound_by;
  int64_t ts_ns = 0, ns = 0;
  uint64_t index = 0;  // 1-based position among the path's weighted edges
};

struct CriticalPathSync {  // a synchronization edge of the graph (on the path or not)
  std::string from, to;    // event names: a GPU event -> the CPU call that waited / a GPU event
  int64_t from_correlation = -1, to_correlation = -1;
  bool gpu_to_gpu = false;
  bool on_path = false;
};

// One host step of the trace (as `mlprof steps` lists them): a window a caller may pick.
struct CriticalPathStepWindow {
  int64_t number = 0;  // N of ProfilerStep#N
  std::string name;
  int64_t begin_ns = 0, dur_ns = 0;
};
// Steps listed in a result at most (the first ones in time order); steps_total says how many
// there are.
inline constexpr size_t kCriticalPathMaxListedSteps = 500;

struct CriticalPathResult {
  std::string message;          // set when no analysis was possible (no annotation, no events)
  bool window_missing = false;  // no such step / annotation instance (message says which)
  int64_t step = -1;            // the window's step number when it is a host step, else -1
  std::string annotation;
  size_t instance = 0;      // which occurrence of the annotation
  std::string window_name;  // the annotation slice analyzed (e.g. "ProfilerStep#3"); "" = trace
  int64_t window_begin_ns = 0, window_end_ns = 0;
  int64_t trace_begin_ns = 0;  // the trace's start: what the text's "+s" times count from
  uint64_t nodes = 0, edges = 0;
  uint64_t edges_by_type[5] = {};
  uint64_t path_nodes = 0, path_edges = 0, path_events = 0;
  int64_t path_ns = 0;
  bool has_sync_events = false;  // cuda_sync events present (else HTA warns: inaccurate)
  // Time on the path by what bounds it.
  int64_t cpu_bound_ns = 0, gpu_compute_ns = 0, gpu_comm_ns = 0;
  int64_t launch_overhead_ns = 0, kernel_kernel_overhead_ns = 0;
  std::vector<CriticalPathEvent> top_events;  // by time on the path
  std::vector<CriticalPathStep> path;         // every weighted edge, in time order
  std::vector<CriticalPathSync> syncs;        // every synchronization edge
  // When max_listed cut the lists: how many weighted path edges / syncs there were (else 0).
  size_t path_weighted_total = 0, syncs_total = 0;
  std::vector<CriticalPathStepWindow> steps;  // the trace's steps, the first listed ones
  size_t steps_total = 0;
  // What to change, from the split (allocations, CPU-bound, launch / kernel-kernel overhead,
  // copies, GPU compute, communication): one line each, the dominant parts only.
  std::vector<std::string> recommendations;
};

// `graph`: the trace's dependency graph (dependency_graph.h) when the caller has one built for
// this trace and options.step_annotation; else one is built here.
CriticalPathResult analyze_critical_path(const Trace& trace,
                                         const CriticalPathOptions& options = {},
                                         const DependencyGraph* graph = nullptr);

// Why there is no critical path for `options`' window, or nullopt when there is one to compute:
// a trace without CPU ops, runtime calls or GPU events (a memory snapshot, a compile log), or
// no such step / annotation instance (the message lists the steps and annotations the trace
// has). The same message analyze_critical_path gives.
std::optional<std::string> critical_path_unavailable(const Trace& trace,
                                                     const CriticalPathOptions& options = {});

}  // namespace mlprof
