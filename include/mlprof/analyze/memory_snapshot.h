// `mlprof memory SNAPSHOT`: the caching allocator's view from a CUDA memory snapshot.
// State: reserved vs allocated vs requested, block states, fragmentation per segment, stream and
// pool, live bytes by allocation stack. History (the trace ring buffer): the active-memory
// timeline replayed as pytorch.org/memory_viz does (+size at alloc, -size at free_completed,
// starting from what must already have been live), its peak and the stacks live there, and
// each OOM with what held memory at that moment.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlprof/memory_snapshot.h"

namespace mlprof {

struct SnapshotOptions {
  size_t top = 30;                // rows per ranking (stacks, segments)
  size_t timeline_points = 1000;  // replayed timeline, downsampled (bucket maxima)
  size_t frames_shown = 6;        // frames kept per stack row
};

// Memory grouped by the stack that allocated it.
struct StackBytes {
  std::string site;                 // innermost frame, file basename: "module.py:1357:convert"
  std::vector<std::string> frames;  // innermost first, cut to frames_shown
  int64_t bytes = 0;
  uint64_t blocks = 0;
};

// Reserved memory of one stream or pool, and how much of it is cached but unused.
struct SnapshotGroup {
  std::string name;  // "GPU 0 stream 0", "GPU 0 pool (1, 0)"
  int32_t device = 0;
  int64_t stream = 0;
  int64_t pool_a = 0, pool_b = 0;
  uint64_t segments = 0, blocks = 0;
  int64_t reserved = 0, allocated = 0, requested = 0, inactive = 0, awaiting_free = 0;
  int64_t largest_inactive = 0;
  // inactive / reserved: cached but unused share. External fragmentation:
  // 1 - largest_inactive / inactive (0 = the free bytes are one block).
  double unused_fraction = 0, fragmentation = 0;
};

struct SnapshotSegmentRow {
  int32_t device = 0;
  uint64_t address = 0;
  int64_t stream = 0;
  bool large = true, expandable = false, private_pool = false;
  int64_t total = 0, allocated = 0, inactive = 0, largest_inactive = 0;
  uint32_t blocks = 0, inactive_blocks = 0;
  double fragmentation = 0;
  std::string site;  // innermost frame of the segment's allocation ("" when none)
};

struct ReplayPoint {
  uint64_t index = 0;  // trace entry index (within the device)
  int64_t time_us = -1;
  int64_t active = 0, reserved = 0;
};

struct SnapshotOom {
  uint64_t index = 0;
  int64_t time_us = -1;
  int64_t requested = 0;    // bytes the failed allocation asked for
  int64_t device_free = 0;  // bytes the driver still reported free
  int64_t stream = 0;
  std::string site;                  // where the failed allocation came from
  int64_t active = 0, reserved = 0;  // replayed at that moment
  std::vector<StackBytes> holders;   // live allocations then, by stack, largest first
};

struct SnapshotReplay {
  int32_t device = 0;
  uint64_t entries = 0;
  uint64_t action_counts[kSnapshotActionCount] = {};
  int64_t alloc_bytes = 0, free_requested_bytes = 0, free_completed_bytes = 0;
  int64_t segment_alloc_bytes = 0, segment_free_bytes = 0;
  bool has_time = false, time_monotonic = true;
  int64_t first_time_us = -1, last_time_us = -1;
  int64_t min_time_us = -1;  // earliest (times need not be monotonic)
  uint64_t frees_without_alloc = 0, blocks_not_in_trace = 0;
  int64_t start_active = 0, end_active = 0, peak_active = 0;
  int64_t peak_index = -1;  // entry that reached the peak; -1 when the start was the peak
  int64_t peak_time_us = -1;
  int64_t start_reserved = 0, peak_reserved = 0, end_reserved = 0;
  uint64_t live_at_peak_blocks = 0;
  std::vector<StackBytes> live_at_peak;  // by stack, largest first
  std::vector<SnapshotOom> ooms;
  std::vector<ReplayPoint> timeline;
};

struct SnapshotResult {
  std::string source, format;
  std::string layout;  // "frames" or "history (PyTorch 2.0)"
  uint64_t segments = 0, blocks = 0;
  uint64_t large_segments = 0, small_segments = 0, expandable_segments = 0,
           private_pool_segments = 0;
  uint64_t blocks_by_state[4] = {};  // BlockState order
  int64_t bytes_by_state[4] = {};
  int64_t reserved = 0, allocated = 0, active = 0, requested = 0;
  int64_t largest_segment = 0, largest_inactive = 0;
  double unused_fraction = 0, fragmentation = 0;
  std::vector<SnapshotGroup> streams;  // per (device, stream)
  std::vector<SnapshotGroup> pools;    // per (device, pool id) when segment_pool_id is recorded
  std::vector<SnapshotSegmentRow> fragmented_segments;  // by inactive bytes, largest first
  std::vector<StackBytes> live_by_site;   // active_allocated blocks by innermost frame
  std::vector<StackBytes> live_by_stack;  // ... by whole stack
  std::vector<SnapshotReplay> devices;
  std::vector<std::pair<std::string, std::string>> allocator_settings;
  uint64_t annotations = 0;
  // Earliest time_us of any trace entry or annotation (-1 without times): what the text's
  // "+s" times count from, the start of the trace the snapshot loads as.
  int64_t start_time_us = -1;
  std::vector<std::string> recommendations;
};

SnapshotResult analyze_memory_snapshot(const MemorySnapshot& snapshot,
                                       const SnapshotOptions& options = {});

const char* block_state_name(BlockState s);

}  // namespace mlprof
