// A CUDA caching-allocator snapshot (`torch.cuda.memory._dump_snapshot`, pickle or its JSON
// twin) in compact form: segments, blocks, the allocator trace ring buffer and the stacks they
// point at. Records are reduced to fixed-size structs while the file streams in, so a
// multi-GB snapshot costs tens of bytes per trace entry, not a Python object graph.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/string_pool.h"
#include "mlprof/trace.h"

namespace mlprof {

enum class BlockState : uint8_t { kActiveAllocated, kActiveAwaitingFree, kInactive, kOther };

struct SnapshotBlock {
  uint64_t address = 0;
  int64_t size = 0;            // rounded size the allocator handed out
  int64_t requested_size = 0;  // what the caller asked for
  BlockState state = BlockState::kOther;
  uint32_t stack = 0;  // StackId of its allocation (0 = none recorded)
};

struct SnapshotSegment {
  int32_t device = 0;
  uint64_t address = 0;
  int64_t total_size = 0;  // reserved bytes (one cudaMalloc or expandable segment)
  int64_t allocated_size = 0, active_size = 0, requested_size = 0;
  int64_t stream = 0;
  bool large = true;  // segment_type "large" (requests over 1 MB) or "small"
  bool expandable = false;
  bool has_pool = false;           // segment_pool_id present
  int64_t pool_a = 0, pool_b = 0;  // (0, 0) = the default pool
  uint32_t stack = 0;
  uint32_t blocks_begin = 0, blocks_count = 0;  // into MemorySnapshot::blocks, address order
  bool private_pool() const { return has_pool && (pool_a != 0 || pool_b != 0); }
};

enum class SnapshotAction : uint8_t {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kOom,
  kSnapshot,
  kAnnotate,
  kOther,
};
inline constexpr int kSnapshotActionCount = 11;
const char* snapshot_action_name(SnapshotAction a);

struct SnapshotTraceEntry {
  uint64_t addr = 0;  // for kOom PyTorch stores the bytes the driver reported free here
  int64_t size = 0;
  int64_t time_us = -1;  // -1 when the format has no time_us
  int64_t stream = 0;
  uint32_t stack = 0;
  StringId text = 0;  // user_metadata of annotate entries, the action of kOther
  int16_t device = 0;
  SnapshotAction action = SnapshotAction::kOther;
};

// The allocator trace of every device, device by device, each in recorded (oldest first)
// order, encoded as it streams in: a header byte (action, which optional fields follow), then
// varints of the time and address deltas from the entry before, the size, and the stream, stack
// and text when present (about 12 bytes an entry, against 48 for SnapshotTraceEntry and ~100
// for the Python dict). Kept in 1 MiB blocks that never move (no doubling copies). Read
// sequentially with a Cursor over one device's range or the whole trace.
class SnapshotTrace {
 public:
  struct Part {  // one device's entries
    int32_t device = 0;
    size_t begin = 0, end = 0;  // entry indices over the whole trace
    std::vector<std::unique_ptr<uint8_t[]>> blocks;
    std::vector<uint32_t> used;  // bytes used in each block
  };
  // Appends to the part being written (one per source list; device set later).
  class Writer {
   public:
    void add(const SnapshotTraceEntry& e);
    size_t size() const { return count_; }

   private:
    friend class SnapshotTrace;
    Part part_;
    size_t count_ = 0;
    uint64_t prev_addr_ = 0;
    int64_t prev_time_ = 0, prev_stream_ = 0;
  };
  class Cursor {  // entries [begin, end) in order
   public:
    bool next(SnapshotTraceEntry& out);

   private:
    friend class SnapshotTrace;
    const SnapshotTrace* t_ = nullptr;
    size_t part_ = 0, block_ = 0, pos_ = 0, index_ = 0, end_ = 0;
    uint64_t prev_addr_ = 0;
    int64_t prev_time_ = 0, prev_stream_ = 0;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<Part>& parts() const { return parts_; }
  uint64_t encoded_bytes() const;
  // [begin, end) must start where a part starts (a device's range, or 0) and may end anywhere.
  Cursor cursor(size_t begin, size_t end) const;
  Cursor cursor() const { return cursor(0, size_); }
  // Calls fn(index, entry) for entries [begin, end) in order; fn may return false to stop.
  template <class F>
  void for_each(size_t begin, size_t end, F&& fn) const {
    Cursor c = cursor(begin, end);
    SnapshotTraceEntry e;
    for (size_t i = begin; c.next(e); ++i) {
      if constexpr (std::is_same_v<decltype(fn(i, e)), bool>) {
        if (!fn(i, e)) return;
      } else {
        fn(i, e);
      }
    }
  }
  template <class F>
  void for_each(F&& fn) const {
    for_each(0, size_, std::forward<F>(fn));
  }
  // Adds a written part as the entries of `device` (parts must come in device order).
  void add_part(Writer&& w, int32_t device);
  // Tests: a trace from plain entries (device order).
  static SnapshotTrace from_entries(const std::vector<SnapshotTraceEntry>& entries);

 private:
  std::vector<Part> parts_;
  size_t size_ = 0;
};

struct SnapshotAnnotation {  // external_annotations (record_function START/END)
  StringId name = 0;
  bool start = true;
  int32_t device = 0;
  int64_t time_us = 0;
};

struct MemorySnapshot {
  std::string source;
  std::string format;  // "pickle" or "json"
  StringPool strings;  // frames ("filename:line:name") and other text
  // Stacks: id -> frames (innermost first), id 0 = none recorded.
  std::vector<uint32_t> stack_begin{0}, stack_count{0};
  std::vector<StringId> frames;
  std::vector<SnapshotSegment> segments;
  std::vector<SnapshotBlock> blocks;
  // Every device's trace, device by device, each in recorded (oldest first) order.
  SnapshotTrace trace;
  std::vector<SnapshotAnnotation> annotations;
  // allocator_settings: key -> value as JSON text.
  std::vector<std::pair<std::string, std::string>> allocator_settings;
  bool legacy_block_history = false;  // PyTorch 2.0 layout: block frames/address in history[0]
  uint64_t top_level_keys_ignored = 0;

  std::string_view str(StringId id) const { return strings.get(id); }
  size_t stack_size(uint32_t stack) const { return stack_count[stack]; }
  std::string_view frame(uint32_t stack, size_t i) const {
    return strings.get(frames[stack_begin[stack] + i]);
  }
};

// True when the file (gzip or not) starts like a snapshot: a pickle, or a JSON object whose
// first key is "segments" / "device_traces".
bool is_memory_snapshot_file(const std::string& path);

// Reads a snapshot file (.pickle, .json, either gzipped). Errors are one line naming the file.
Result<MemorySnapshot> load_memory_snapshot(const std::string& path);
// The same from memory (tests, fuzzing).
Result<MemorySnapshot> load_memory_snapshot_buffer(std::string_view bytes, const std::string& name);

// memory_viz's "Active Memory Timeline" start for one device: bytes that must have been live
// before the trace began (frees with no earlier alloc, plus active_allocated blocks of the
// segment dump not allocated by the trace), and the reserved bytes before the trace (segment
// bytes of the dump minus the trace's net segment_alloc/map). `entries` is that device's range.
struct SnapshotReplayStart {
  int64_t active = 0;
  int64_t reserved = 0;
  uint64_t frees_without_alloc = 0;
  uint64_t blocks_not_in_trace = 0;
};
SnapshotReplayStart snapshot_replay_start(const MemorySnapshot& snapshot, int32_t device,
                                          size_t entries_begin, size_t entries_end);
// [begin, end) of each device's entries in MemorySnapshot::trace, with the device ids: devices
// that have segments or trace entries, ascending.
struct SnapshotDeviceRange {
  int32_t device = 0;
  size_t begin = 0, end = 0;
};
std::vector<SnapshotDeviceRange> snapshot_devices(const MemorySnapshot& snapshot);

// The snapshot as a Trace: one GPU memory track per device with the trace replayed as memory
// events (+size at alloc, -size at free_completed; totals = replayed active bytes and reserved
// segment bytes), instants for oom/segment/snapshot/annotate entries and record_function ranges
// as slices. Entries without time_us are placed 1 us apart. A device with more than
// kSnapshotTraceFullEntries entries is downsampled so the Trace stays bounded: per bucket of
// entries (kSnapshotTraceFullEntries / 2 buckets) its lowest and highest replayed point as
// memory events with address 0 (their totals exact, the peak among them), and instants past
// kSnapshotTraceFullEntries other than OOMs left out; meta.extra says so
// ("mlprof_snapshot_downsampled_gpuN"). The allocator view replays every entry either way.
inline constexpr size_t kSnapshotTraceFullEntries = size_t{1} << 18;
Trace memory_snapshot_to_trace(const MemorySnapshot& snapshot);

}  // namespace mlprof
