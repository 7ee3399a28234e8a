// Turns the malloc tracker's per-process files of one `mlprof run` into Trace rows: memory
// events (bytes negative on free, running heap total, symbolized stack id), one process per
// file, one track per thread, and a slice per process lifetime.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

struct MemoryCaptureStats {
  size_t files = 0;
  size_t processes_exited = 0;  // the rest were killed or exec'd (their tail may be missing)
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t unmatched_frees = 0;  // frees of blocks allocated before tracking started
  uint64_t stacks = 0;
  uint64_t truncated_bytes = 0;
  uint64_t raw_bytes = 0;     // size of the raw files read
  uint64_t dropped = 0;       // events the trackers did not write (--max-raw reached, no memory)
  uint64_t out_of_order = 0;  // events of a thread earlier than its previous one (sink mode)
  // What trackers counted but could not record (their file could not be created or written:
  // EMFILE, ENOSPC, EFBIG), from their status symlinks.
  uint64_t lost_allocations = 0;
  uint64_t lost_frees = 0;
  size_t processes_without_file = 0;
  uint64_t reopened = 0;  // times programs closed a tracker's descriptor (reopened, no loss)
  std::vector<int64_t> pids;
  std::vector<std::string> notes;  // one line each, for the user
};

// Receives a capture's events instead of memory rows: mlprof run's bounded post-processing
// (HeapStream), whose memory follows the live blocks, not the events. Events come in one time
// order across every process (ties: file order, then position in the file), as a stable sort of
// the rows by time would give them.
class MemoryEventSink {
 public:
  virtual ~MemoryEventSink() = default;
  // Before the first event: its time and the last one's; trace stack ids are below `stacks`.
  virtual void begin(int64_t first_ts, int64_t last_ts, size_t stacks) = 0;
  virtual void alloc(uint32_t process, uint32_t track, int64_t ts, uint64_t addr, uint64_t bytes,
                     uint32_t stack) = 0;
  virtual void free(uint32_t process, uint32_t track, int64_t ts, uint64_t addr) = 0;
};

// Reads every mem.*.bin file in `dir`. `maps_fallback` holds /proc/PID/maps text sampled by
// mlprof while a process ran, for processes that died without writing their own. With a sink,
// the events go to it (stats.allocations and frees then count the raw events) and the trace gets
// the processes, threads, stacks and lifetimes but no memory rows; the raw files' pages are
// released as the merge passes them.
Status add_memory_captures(const std::string& dir, TraceBuilder& builder,
                           const std::unordered_map<int64_t, std::string>& maps_fallback,
                           MemoryCaptureStats& stats, MemoryEventSink* sink = nullptr);

}  // namespace mlprof
