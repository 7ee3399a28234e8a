// The Trace: one columnar in-memory model for everything mlprof reads or records.
//
// Every source (Chrome/Kineto JSON, the .mlprof native file, the recorder, CUPTI, malloc hooks)
// ends in this model through TraceBuilder; nothing downstream knows where the data came from.
// Times are integer nanoseconds. Names, categories and string args are interned StringIds.
// After TraceBuilder::finish() slices are sorted by (track, start, longest first) and the
// per-thread nesting (depth, parent, self time) is computed once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlprof/import_stats.h"
#include "mlprof/string_pool.h"
#include "mlprof/table_schema.h"

namespace mlprof {

// ---- tracks ---------------------------------------------------------------------------------

enum class TrackKind : uint8_t {
  kThread,     // a CPU thread (pid, tid)
  kGpuStream,  // a GPU device (pid) and stream (tid), as Kineto writes them
  kAsync,      // async (b/e) ranges of one process, keyed by category + id
};

struct Process {
  int64_t pid = 0;       // numeric id; string pids get synthetic ids below -1000000
  StringId label = 0;    // the pid as written when it was a string ("CPU functions")
  bool labeled = false;  // the pid was a string (label may be "", id 0)
  StringId name = 0;     // from process_name metadata
  int32_t sort_index = 0;
  bool is_gpu = false;                                // holds GPU streams
  std::vector<std::pair<StringId, StringId>> labels;  // process_labels and other M args
};

struct Track {
  TrackKind kind = TrackKind::kThread;
  uint32_t process = 0;  // index into Trace::processes
  int64_t pid = 0;
  int64_t tid = 0;
  StringId label = 0;    // the tid as written when it was a string ("stream 7")
  bool labeled = false;  // the tid was a string (label may be "", id 0)
  StringId name = 0;     // from thread_name metadata
  int32_t sort_index = 0;
  int32_t device = -1;  // GPU device index for GPU streams
  int64_t stream = -1;  // GPU stream id for GPU streams
};

// ---- args -----------------------------------------------------------------------------------

enum class ArgType : uint8_t { kNull, kBool, kInt, kUInt, kDouble, kString, kJson };

// kJson holds arrays and objects (and integers beyond 64 bits) as their JSON text, so no key is
// ever dropped; kUInt holds integers above INT64_MAX.
struct Arg {
  StringId key = 0;
  ArgType type = ArgType::kNull;
  union {
    int64_t i;
    uint64_t u;
    double d;
    StringId s;
    bool b;
  };
  Arg() : i(0) {}

  std::optional<int64_t> as_int() const;    // kInt, kUInt that fits, kBool, integral kDouble
  std::optional<double> as_double() const;  // any numeric type
};

struct ArgRange {
  uint32_t begin = 0;
  uint32_t count = 0;
};

// ---- event tables (columnar) ----------------------------------------------------------------
//
// Each table's columns are declared once, in its MLPROF_*_COLUMNS list:
//   X(value type, name, what it references (schema::Ref), kInput | kComputed, default)
// MLPROF_TABLE (mlprof/table_schema.h) makes the members, Table::Row (the input columns) and
// Table::for_each_column from it; the builder, the merge, the .mlprof writer/reader and the
// tests walk the columns through that, so a new column is one line here. kInput columns must
// come first in each list (the first is the table's row count).

#define MLPROF_SLICE_COLUMNS(X)                                                            \
  X(int64_t, ts, kNone, kInput, 0)  /* start, ns */                                        \
  X(int64_t, dur, kNone, kInput, 0) /* duration, ns (>= 0) */                              \
  X(uint32_t, track, kTrack, kInput, 0)                                                    \
  X(StringId, name, kString, kInput, 0)                                                    \
  X(StringId, cat, kString, kInput, 0)                                                     \
  X(uint32_t, args_begin, kArgs, kInput, 0)                                                \
  X(uint32_t, args_count, kNone, kInput, 0)                                                \
  X(int64_t, thread_ts, kNone, kInput, -1)  /* thread clock at the start (tts), -1 none */ \
  X(int64_t, thread_dur, kNone, kInput, -1) /* thread (CPU) time, ns (tdur), -1 none */    \
  X(uint16_t, depth, kNone, kComputed, 0)   /* 0 = top level on its track */               \
  X(int32_t, parent, kSlice, kComputed, -1) /* enclosing slice on the track, -1 none */    \
  X(int64_t, self, kNone, kComputed, 0)     /* dur minus the union of children's time */

struct SliceTable {
  MLPROF_TABLE(SliceTable, MLPROF_SLICE_COLUMNS)
  size_t size() const { return ts.size(); }
  int64_t end(size_t i) const { return ts[i] + dur[i]; }
};

#define MLPROF_INSTANT_COLUMNS(X)           \
  X(int64_t, ts, kNone, kInput, 0)          \
  X(uint32_t, track, kTrack, kInput, 0)     \
  X(StringId, name, kString, kInput, 0)     \
  X(StringId, cat, kString, kInput, 0)      \
  X(uint32_t, args_begin, kArgs, kInput, 0) \
  X(uint32_t, args_count, kNone, kInput, 0) \
  X(uint8_t, scope, kNone, kInput, 't') /* 't' thread, 'p' process, 'g' global */

struct InstantTable {
  MLPROF_TABLE(InstantTable, MLPROF_INSTANT_COLUMNS)
  size_t size() const { return ts.size(); }
};

// A counter series is one named value over time in one process ("GPU 0 utilization",
// "rss", "loss"). Chrome 'C' events with several args become one series per arg key.
struct CounterSeries {
  uint32_t process = 0;
  StringId name = 0;
  StringId unit = 0;
};

#define MLPROF_COUNTER_COLUMNS(X)         \
  X(int64_t, ts, kNone, kInput, 0)        \
  X(uint32_t, series, kSeries, kInput, 0) \
  X(double, value, kNone, kInput, 0)

struct CounterTable {
  MLPROF_TABLE(CounterTable, MLPROF_COUNTER_COLUMNS)
  size_t size() const { return ts.size(); }
};

// Launch -> kernel links and other flows. Endpoints are bound to the deepest enclosing slice on
// their track at finish(); -1 when no slice encloses the endpoint. dst_next = 1: the end binds
// instead the next slice that begins on its track at or after dst_ts (the outermost, if several
// begin then), as a Chrome v1 'f' event without "bp": "e" does; finish() then moves dst_ts to
// that slice's start.
#define MLPROF_FLOW_COLUMNS(X)                 \
  X(uint64_t, id, kNone, kInput, 0)            \
  X(StringId, cat, kString, kInput, 0)         \
  X(int64_t, src_ts, kNone, kInput, 0)         \
  X(int64_t, dst_ts, kNone, kInput, 0)         \
  X(uint32_t, src_track, kTrack, kInput, 0)    \
  X(uint32_t, dst_track, kTrack, kInput, 0)    \
  X(uint8_t, dst_next, kNone, kInput, 0)       \
  X(int32_t, src_slice, kSlice, kComputed, -1) \
  X(int32_t, dst_slice, kSlice, kComputed, -1)

struct FlowTable {
  MLPROF_TABLE(FlowTable, MLPROF_FLOW_COLUMNS)
  size_t size() const { return id.size(); }
};

enum class DeviceType : int8_t { kCpu = 0, kCuda = 1, kOther = 2 };

// One allocation (bytes > 0) or free (bytes < 0), as Kineto's [memory] events and mlprof's
// track_alloc/track_free record them. Totals are -1 when the source did not record them.
#define MLPROF_MEMORY_COLUMNS(X)                                                             \
  X(int64_t, ts, kNone, kInput, 0)                                                           \
  X(uint32_t, track, kTrack, kInput, 0)                                                      \
  X(uint64_t, addr, kNone, kInput, 0)                                                        \
  X(int64_t, bytes, kNone, kInput, 0)                                                        \
  X(int8_t, device_type, kNone, kInput, 0) /* DeviceType */                                  \
  X(int16_t, device_id, kNone, kInput, 0)                                                    \
  X(int64_t, total_allocated, kNone, kInput, -1)                                             \
  X(int64_t, total_reserved, kNone, kInput, -1)                                              \
  X(uint32_t, stack, kStack, kInput, 0)    /* call-stack id into Trace::stacks, 0 unknown */ \
  X(int32_t, slice, kSlice, kComputed, -1) /* innermost enclosing slice on the track */

struct MemoryTable {
  MLPROF_TABLE(MemoryTable, MLPROF_MEMORY_COLUMNS)
  size_t size() const { return ts.size(); }
};

// Call stacks (from mlprof run's malloc hooks): stack id -> its frames in Trace::stack_frames,
// innermost first. Row 0 is the empty "unknown" stack.
#define MLPROF_STACK_COLUMNS(X)                 \
  X(uint32_t, frames_begin, kFrames, kInput, 0) \
  X(uint32_t, frames_count, kNone, kInput, 0)

struct StackTable {
  MLPROF_TABLE(StackTable, MLPROF_STACK_COLUMNS)
  size_t size() const { return frames_begin.size(); }
};

#define MLPROF_STACK_FRAME_COLUMNS(X) \
  X(StringId, name, kString, kInput, 0) /* symbolized frame name */

struct StackFrameTable {
  MLPROF_TABLE(StackFrameTable, MLPROF_STACK_FRAME_COLUMNS)
  size_t size() const { return name.size(); }
};

// ---- metadata -------------------------------------------------------------------------------

struct DeviceInfo {
  int32_t id = 0;
  std::string name;
  int64_t total_global_mem = 0;
  int32_t compute_major = 0, compute_minor = 0;
  int32_t num_sms = 0;
  int32_t max_threads_per_block = 0;
  int32_t max_threads_per_sm = 0;
  int32_t regs_per_block = 0, regs_per_sm = 0;
  int32_t warp_size = 0;
  int64_t shared_mem_per_block = 0, shared_mem_per_sm = 0;
};

struct TraceMeta {
  std::string source;        // path it was read from
  std::string format;        // "kineto", "chrome", "pytorch-legacy", "mlprof"
  int64_t base_time_ns = 0;  // Kineto baseTimeNanoseconds (0 when absent)
  int32_t rank = -1;         // distributedInfo.rank
  int32_t world_size = -1;   // distributedInfo.world_size
  int32_t schema_version = -1;
  std::string display_time_unit;
  std::vector<DeviceInfo> devices;
  // Top-level keys mlprof does not interpret, as raw JSON text (kept, never dropped).
  std::vector<std::pair<std::string, std::string>> extra;
  uint64_t dropped_events = 0;  // events a recorder had to drop (never silent)
  uint64_t skipped_events = 0;  // events the importer could not use (unmatched E, bad ph)
  ImportStats import_stats;     // what the importer skipped or repaired, by kind
};

// ---- the trace ------------------------------------------------------------------------------

// The category of Kineto's own whole-recording span ("PyTorch Profiler (0)"): bookkeeping, not
// work. The trace's span, the flame graph, CPU busy time and hotspots all leave it out.
inline constexpr std::string_view kProfilerSpanCategory = "Trace";

struct MemorySnapshot;  // mlprof/memory_snapshot.h
struct CompileLog;      // mlprof/compile_log.h

class Trace {
 public:
  StringPool strings;
  std::vector<Process> processes;
  std::vector<Track> tracks;
  std::vector<Arg> args;
  SliceTable slices;
  InstantTable instants;
  std::vector<CounterSeries> counter_series;
  CounterTable counters;
  FlowTable flows;
  MemoryTable memory;
  StackTable stacks;
  StackFrameTable stack_frames;
  TraceMeta meta;
  // Computed by finish(): slices of track t are [track_slice_begin[t], track_slice_begin[t+1]).
  std::vector<uint32_t> track_slice_begin;
  // The CUDA allocator snapshot this trace was loaded from (segments, blocks and the trace ring
  // buffer the allocator view reads); null for every other source, and not kept in .mlprof files.
  std::shared_ptr<const MemorySnapshot> memory_snapshot;
  // The torch.compile structured logs this "trace" was loaded from (one file, or a TORCH_TRACE
  // directory's, one per rank, in rank order): no events, only the compile analysis applies.
  // Null for every other source, and not kept in .mlprof files.
  std::shared_ptr<const std::vector<CompileLog>> compile_logs;

  // Calls f(name, &Trace::table) for every event table, in .mlprof file order.
  template <typename F>
  static constexpr void for_each_table(F&& f) {
    f("slices", &Trace::slices);
    f("instants", &Trace::instants);
    f("counters", &Trace::counters);
    f("flows", &Trace::flows);
    f("memory", &Trace::memory);
    f("stacks", &Trace::stacks);
    f("stack_frames", &Trace::stack_frames);
  }

  std::string_view str(StringId id) const { return strings.get(id); }
  size_t event_count() const {
    return slices.size() + instants.size() + counters.size() + flows.size() + memory.size();
  }
  // First and last timestamp of any event (0, 0 for an empty trace).
  int64_t begin_ns() const { return begin_ns_; }
  int64_t end_ns() const { return end_ns_; }
  int64_t span_ns() const { return end_ns_ - begin_ns_; }

  // Args of a slice / instant, and lookup by key (keys are few per event: a linear scan).
  const Arg* slice_arg(size_t slice, std::string_view key) const;
  const Arg* instant_arg(size_t instant, std::string_view key) const;
  const Arg* find_arg(uint32_t begin, uint32_t count, std::string_view key) const;
  const Arg* find_arg(uint32_t begin, uint32_t count, StringId key) const;
  // Renders an arg value as text (numbers, strings, raw JSON).
  std::string arg_text(const Arg& a) const;

  // Deepest slice on `track` whose [ts, ts+dur] contains t, or -1.
  int32_t enclosing_slice(uint32_t track, int64_t t) const;

  bool is_gpu_track(uint32_t track) const { return tracks[track].kind == TrackKind::kGpuStream; }
  // Human-readable track label: "python (pid 12 tid 34)", "GPU 0 stream 7".
  std::string track_label(uint32_t track) const;

 private:
  friend class TraceBuilder;
  int64_t begin_ns_ = 0;
  int64_t end_ns_ = 0;
};

// ---- building -------------------------------------------------------------------------------

// Every importer and the recorder fill a Trace through this. Not thread-safe: one builder per
// thread, merged afterwards if needed.
class TraceBuilder {
 public:
  TraceBuilder();
  Trace& trace() { return trace_; }
  StringId intern(std::string_view s) { return trace_.strings.intern(s); }

  uint32_t process(int64_t pid);
  uint32_t process_labeled(std::string_view pid_label);  // string pids ("CPU functions")
  uint32_t thread_track(uint32_t process, int64_t tid);
  uint32_t thread_track_labeled(uint32_t process, std::string_view tid_label);
  uint32_t async_track(uint32_t process, StringId cat, uint64_t id);
  uint32_t counter_series(uint32_t process, StringId name);

  // Args: push them, then pass the range to the event that owns them.
  uint32_t args_mark() const { return static_cast<uint32_t>(trace_.args.size()); }
  ArgRange args_since(uint32_t mark) const {
    return ArgRange{mark, static_cast<uint32_t>(trace_.args.size()) - mark};
  }
  void arg_int(StringId key, int64_t v);
  void arg_uint(StringId key, uint64_t v);
  void arg_double(StringId key, double v);
  void arg_bool(StringId key, bool v);
  void arg_string(StringId key, StringId v);
  void arg_json(StringId key, std::string_view raw_json);
  void arg_null(StringId key);

  void add_slice(uint32_t track, int64_t ts, int64_t dur, StringId name, StringId cat,
                 ArgRange args = {});
  // Every input column of a slice (SliceTable::Row: the schema's list, with its defaults).
  void add_slice(SliceTable::Row row);
  void add_instant(uint32_t track, int64_t ts, StringId name, StringId cat, ArgRange args = {},
                   uint8_t scope = 't');
  void add_counter(uint32_t series, int64_t ts, double value);
  // Flow endpoints are (track, ts); they are bound to slices at finish().
  // dst_next: the end binds the next slice to begin on dst_track (FlowTable::dst_next).
  void add_flow(uint64_t id, StringId cat, uint32_t src_track, int64_t src_ts, uint32_t dst_track,
                int64_t dst_ts, bool dst_next = false);
  void add_memory(uint32_t track, int64_t ts, uint64_t addr, int64_t bytes, DeviceType type,
                  int16_t device_id, int64_t total_allocated = -1, int64_t total_reserved = -1,
                  uint32_t stack = 0);
  uint32_t add_stack(const std::vector<StringId>& frames_innermost_first);

  // Pre-sizes the event tables when the importer can estimate them (avoids regrowth copies).
  void reserve(size_t slices, size_t instants, size_t args, size_t flows, size_t memory);

  // Marks a track as a GPU stream (Kineto: pid = device, tid = stream).
  void mark_gpu_track(uint32_t track, int32_t device, int64_t stream);

  // Sorts, computes nesting and self time, binds flows and memory events to slices.
  Trace finish() &&;

 private:
  Trace trace_;
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.first * 0x9e3779b97f4a7c15ull ^ k.second);
    }
  };
  using PairMap = std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash>;
  std::unordered_map<int64_t, uint32_t> process_by_pid_;
  std::unordered_map<StringId, uint32_t> process_by_label_;
  PairMap thread_by_tid_;    // (process, tid)
  PairMap thread_by_label_;  // (process, label)
  PairMap async_by_id_;      // (process << 32 | cat, id)
  PairMap series_by_name_;   // (process, name)
  // One-entry caches: consecutive events usually share a pid and tid.
  int64_t last_pid_ = 0, last_tid_ = 0;
  uint32_t last_process_ = UINT32_MAX, last_track_ = UINT32_MAX, last_track_process_ = UINT32_MAX;
};

}  // namespace mlprof
