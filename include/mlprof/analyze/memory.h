// `mlprof memory`: allocator activity from Kineto `[memory]` events and mlprof's memory events:
// allocated/reserved over time per device, the peak and the op that reached it, allocations never
// freed, fragmentation (reserved but unallocated), and per-op allocation counts and bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof {

struct MemoryOptions {
  size_t timeline_points = 1000;  // downsampled timeline length per device (0 = no timeline)
  size_t top_unfreed = 20;        // largest never-freed allocations listed per device
  // Largest allocations listed per device, freed or not, with when they were freed: the rows the
  // report's memory view filters by a selected time range (the TensorBoard plugin's table).
  size_t top_allocations = 2000;
  size_t top_ops = 30;  // per-op rows kept (by bytes allocated)
};

struct MemoryPoint {
  int64_t ts_ns = 0;
  int64_t allocated = 0;
  int64_t reserved = -1;  // -1 when the source did not record it
};

struct UnfreedAllocation {
  int64_t ts_ns = 0;
  int64_t offset_ns = 0;  // ts_ns relative to the start of the trace (what reports print)
  uint64_t addr = 0;
  int64_t bytes = 0;
  std::string op;  // innermost enclosing slice ("" when none)
};

// One allocation and, when the trace frees it, when.
struct AllocationRecord {
  int64_t offset_ns = 0;  // allocated at, relative to the start of the trace
  bool freed = false;
  int64_t freed_offset_ns = 0;  // when freed (valid when `freed`)
  uint64_t addr = 0;
  int64_t bytes = 0;
  std::string op;  // innermost enclosing slice ("" when none)
};

struct DeviceMemory {
  std::string device;  // "CPU", "CUDA:0", "other:3"
  int8_t device_type = 0;
  int16_t device_id = -1;
  uint64_t events = 0, allocs = 0, frees = 0;
  int64_t bytes_allocated = 0, bytes_freed = 0;
  // Totals come from the events' Total Allocated / Total Reserved; when the source did not record
  // them, allocated is the running sum of Bytes (starting at 0 at the first event).
  bool allocated_reconstructed = false;
  bool has_reserved = false;
  int64_t peak_allocated = 0;
  int64_t peak_ts_ns = 0;
  int64_t peak_offset_ns = 0;  // relative to the start of the trace (what reports print)
  std::string peak_op;         // innermost op enclosing the allocation that reached the peak
  std::string peak_context;    // its enclosing slices (not Python frames), outermost first, " > "
  int64_t peak_reserved = -1;
  int64_t final_allocated = 0, final_reserved = -1;
  // Fragmentation: reserved - allocated (bytes the caching allocator holds but does not use).
  int64_t max_unused_reserved = 0;
  double fragmentation_at_peak_reserved = 0;  // (reserved - allocated) / reserved there
  uint64_t unfreed_count = 0;
  int64_t unfreed_bytes = 0;
  std::vector<UnfreedAllocation> unfreed;     // largest first, cut to top_unfreed
  uint64_t allocations_total = 0;             // allocation events of the device
  std::vector<AllocationRecord> allocations;  // largest first, cut to top_allocations
  std::vector<MemoryPoint> timeline;          // downsampled: per time bucket, its peak point
  // A huge CUDA memory snapshot's device is loaded downsampled (memory_snapshot_to_trace): its
  // events are per-bucket lowest/highest points standing for this many entries (0: not so).
  // Peaks and the end state are exact; allocs/frees/bytes count the points' net changes.
  uint64_t downsampled_from_entries = 0;
};

struct OpMemory {
  std::string op;  // innermost enclosing slice name, "(no op)" when none
  uint64_t allocs = 0, frees = 0;
  int64_t bytes_allocated = 0, bytes_freed = 0;
  uint64_t unfreed_count = 0;  // allocations made by this op never freed in the trace
  int64_t unfreed_bytes = 0;
};

struct MemoryResult {
  uint64_t events = 0;
  std::vector<DeviceMemory> devices;
  std::vector<OpMemory> ops;  // by bytes allocated, descending
};

MemoryResult analyze_memory(const Trace& trace, const MemoryOptions& options = {});

// Allocated bytes per memory event (the recorded total, or the running sum per device when the
// source did not record totals). Shared with the leak analysis.
std::vector<int64_t> memory_allocated_totals(const Trace& trace);

// "CPU", "CUDA:0"...
std::string memory_device_label(int8_t device_type, int16_t device_id);

}  // namespace mlprof
