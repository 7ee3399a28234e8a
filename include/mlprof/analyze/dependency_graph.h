// The dependency graph of a trace, built once per trace (AnalysisSet::dependency_graph()) and
// read by both the critical path (`mlprof critical-path`, HTA's rules) and the step replay that
// prices `bottlenecks`' findings. Its vertices are the trace's host calls, GPU ops and sync
// events; the links between them (a launch call -> its GPU op by correlation, a GPU op's stream
// and device, the stream or event record a sync waits on, cudaEventRecord calls) and the step
// windows are resolved here, once. Two edge sets are derived from them and differ on purpose:
//   * the replay's (replay(): the whole trace in ns, a node at every host slice boundary, launch
//     and stream-order weights, inferred cross-stream waits, host waits), built on first use;
//   * HTA's (analyze_critical_path: a start and an end node per event, times in whole
//     microseconds, top-level op order, launch edges only onto an idle stream), built for one
//     window at a time, because which launch and dependency edges exist depends on the window's
//     events (queue lengths, what is top level).
// docs/analysis.md "Replay model" and "Critical path" describe both.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlprof/analyze/gpu_events.h"
#include "mlprof/analyze/steps.h"
#include "mlprof/trace.h"

namespace mlprof {

class StepModel;

// A correlation id that the slice does not have (no "correlation" arg, or not an integer).
inline constexpr int64_t kNoCorrelation = INT64_MIN;
// A sync event that names no stream it waits for.
inline constexpr int64_t kNoStream = INT64_MIN;

// A CPU op or runtime/driver call on a host track (what HTA's graph has on the CPU side).
struct DepHostCall {
  uint32_t slice = 0;
  int64_t corr = kNoCorrelation;
  bool runtime = false;  // cuda_runtime / cuda_driver (a launch, a sync), not a cpu_op
};

// A slice on a GPU track (not a gpu_user_annotation range) or a cuda_sync event wherever Kineto
// put it (Event Sync and Context Sync come with tid -1, not on a stream track).
struct DepGpuEvent {
  uint32_t slice = 0;
  int64_t corr = kNoCorrelation;
  bool sync = false;
  int64_t stream = 0;  // its track's stream; a sync's "stream" arg where it has one
  int32_t device = 0;  // its track's device; a sync's "device" arg where it has one
  // A sync: the stream the host waits for (Event Sync's wait_on_stream, else its "stream" arg).
  int64_t waited_stream = kNoStream;
};

class DependencyGraph {
 public:
  // The trace is borrowed (it must outlive the graph). `step_annotation` picks the step windows
  // (steps.h step_markers).
  explicit DependencyGraph(const Trace& trace, std::string_view step_annotation = {});
  ~DependencyGraph();
  DependencyGraph(const DependencyGraph&) = delete;
  DependencyGraph& operator=(const DependencyGraph&) = delete;

  const Trace& trace() const { return *trace_; }
  const std::string& step_annotation() const { return step_annotation_; }
  const StepMarkers& markers() const { return markers_; }
  // Host calls and GPU/sync events, each in slice order.
  const std::vector<DepHostCall>& host_calls() const { return host_calls_; }
  const std::vector<DepGpuEvent>& gpu_events() const { return gpu_events_; }
  bool has_sync_events() const { return has_sync_events_; }
  // GPU ops (kernels, copies, sets) with their launch call (gpu_events.h), sorted by (ts, end).
  const GpuEvents& gpu_ops() const { return gpu_ops_; }
  // cudaEventRecord calls by correlation (the last one in slice order).
  const std::unordered_map<int64_t, uint32_t>& event_records() const { return event_records_; }
  // Where the host waits, by the correlation of the sync event: the stream it waits for.
  const std::unordered_map<int64_t, int64_t>& sync_streams() const { return sync_streams_; }
  // The replay's edge set, built on the first call (thread-safe) and kept.
  const StepModel& replay() const;

 private:
  const Trace* trace_;
  std::string step_annotation_;
  StepMarkers markers_;
  std::vector<DepHostCall> host_calls_;
  std::vector<DepGpuEvent> gpu_events_;
  bool has_sync_events_ = false;
  GpuEvents gpu_ops_;
  std::unordered_map<int64_t, uint32_t> event_records_;
  std::unordered_map<int64_t, int64_t> sync_streams_;
  mutable std::once_flag replay_once_;
  mutable std::unique_ptr<StepModel> replay_;
};

}  // namespace mlprof
