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
  std::vector<int64_t> pids;
  std::vector<std::string> notes;  // one line each, for the user
};

// Reads every mem.*.bin file in `dir`. `maps_fallback` holds /proc/PID/maps text sampled by
// mlprof while a process ran, for processes that died without writing their own.
Status add_memory_captures(const std::string& dir, TraceBuilder& builder,
                           const std::unordered_map<int64_t, std::string>& maps_fallback,
                           MemoryCaptureStats& stats);

}  // namespace mlprof
