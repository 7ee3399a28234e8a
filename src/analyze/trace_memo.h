// Tables the analyses derive from a Trace's columns (the GPU event table, ...), built once per
// AnalysisSet and shared: a report runs a dozen analyses that each need the same table, and
// building it in every one of them was most of their time on big traces (issue 33).
//
// The set installs its memo (TraceMemoScope) on the thread that computes a result; the builders
// (shared_gpu_events, ...) look it up with TraceMemo::current() and build without sharing when
// there is none (an analysis called outside a set). An entry is keyed by trace, table and an
// optional extra pointer (an input result of the same set), tagged with the trace's layout stamp
// (column sizes and addresses) and rebuilt when that changed. Thread-safe: analyses computed in
// parallel that ask for the same entry wait for one build.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "mlprof/trace.h"

namespace mlprof {

// The tables kept, one key each.
enum class MemoTable : uint8_t {
  kGpuEvents,     // collect_gpu_events(trace)
  kGpuEventsHta,  // collect_gpu_events(trace, {.hta_compatible = true})
  kModeledCalls,  // collect_modeled_calls(trace, graphs)
};

class TraceMemo {
 public:
  // The entry (trace, table, extra), or build() stored under it.
  template <typename T, typename Build>
  std::shared_ptr<const T> get(const Trace& trace, MemoTable table, const void* extra,
                               Build&& build) {
    std::shared_ptr<const void> v = get_erased(
        trace, table, extra,
        [&]() -> std::shared_ptr<const void> { return std::make_shared<const T>(build()); });
    return std::static_pointer_cast<const T>(v);
  }

  // The memo of the set computing on this thread, or null.
  static TraceMemo* current();

 private:
  friend class TraceMemoScope;
  struct Slot {
    std::mutex mu;
    uint64_t stamp = 0;
    std::shared_ptr<const void> value;
  };
  std::shared_ptr<const void> get_erased(const Trace& trace, MemoTable table, const void* extra,
                                         const std::function<std::shared_ptr<const void>()>& build);
  std::mutex mu_;
  std::map<std::tuple<const Trace*, MemoTable, const void*>, std::shared_ptr<Slot>> slots_;
};

// While alive, TraceMemo::current() on this thread is `memo` (nested scopes restore the outer one).
class TraceMemoScope {
 public:
  explicit TraceMemoScope(TraceMemo& memo);
  ~TraceMemoScope();
  TraceMemoScope(const TraceMemoScope&) = delete;
  TraceMemoScope& operator=(const TraceMemoScope&) = delete;

 private:
  TraceMemo* outer_;
};

// The GPU event table (collect_gpu_events) and the modeled calls (collect_modeled_calls), from
// the memo of the set computing on this thread, else built for this caller alone. The analyses
// that only read them take these instead of a copy.
struct GpuEvents;
struct GpuEventsOptions;
struct ModeledCalls;
struct GraphsResult;
std::shared_ptr<const GpuEvents> shared_gpu_events(const Trace& trace);
std::shared_ptr<const GpuEvents> shared_gpu_events(const Trace& trace,
                                                   const GpuEventsOptions& options);
std::shared_ptr<const ModeledCalls> shared_modeled_calls(const Trace& trace,
                                                         const GraphsResult* graphs = nullptr);

}  // namespace mlprof
