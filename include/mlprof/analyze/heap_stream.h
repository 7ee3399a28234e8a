// The heap report computed while a capture's allocations stream past, in time order, without a
// row per event: what `mlprof run --memory` uses so that its memory grows with the live blocks
// and distinct stacks, not with the number of events. Gives exactly the HeapResult that
// analyze_heap() gives on the trace holding every event, and the few memory rows that keep the
// peak and the leaks in a saved trace (the blocks live at the peak and at the end, with the
// ends of those that ended after the peak), plus the heap curve as a counter series.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mlprof/analyze/heap.h"
#include "mlprof/trace.h"

namespace mlprof {

class HeapStream {
 public:
  // first_ts / last_ts: the first and last event's time (the rate buckets span them); stacks:
  // the trace's stack ids are below it.
  HeapStream(const HeapOptions& options, int64_t first_ts, int64_t last_ts, size_t stacks);
  ~HeapStream();

  // One event, in time order. `process` and `track` index the trace's tables; `stack` is a
  // trace stack id.
  void alloc(uint32_t process, uint32_t track, int64_t ts, uint64_t addr, uint64_t bytes,
             uint32_t stack);
  void free(uint32_t process, uint32_t track, int64_t ts, uint64_t addr);  // unknown: ignored

  // Memory rows for the blocks live at the peak or at the end (bytes negative on their end),
  // and the "heap" counter series of each process (downsampled; the peak is one of its points).
  void add_rows(TraceBuilder& b) const;
  // The report; `trace` gives the stacks' frames and the processes' pids.
  HeapResult result(const Trace& trace) const;

  uint64_t events() const;
  size_t live_blocks() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace mlprof
