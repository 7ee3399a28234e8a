// MemorySnapshot -> Trace, so timeline, report and serve show a snapshot like any trace: the
// allocator trace replayed as CUDA memory events with running totals, its other actions as
// instants, record_function annotations as slices.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "mlprof/memory_snapshot.h"
#include "trace/snapshot_devices.h"

namespace mlprof {

namespace {

// The category and arg names, interned (in this order) once.
struct SnapshotKeys {
  StringId cat, k_size, k_addr, k_stream, k_free, k_text, k_stack;

  explicit SnapshotKeys(TraceBuilder& b)
      : cat(b.intern("cuda_memory_snapshot")),
        k_size(b.intern("size")),
        k_addr(b.intern("addr")),
        k_stream(b.intern("stream")),
        k_free(b.intern("device_free")),
        k_text(b.intern("text")),
        k_stack(b.intern("innermost frame")) {}
};

// Snapshot stack ids -> trace stack ids, each added on first use.
class SnapshotStacks {
 public:
  SnapshotStacks(TraceBuilder& b, const MemorySnapshot& s) : b_(b), s_(s) {}
  uint32_t operator()(uint32_t st) {
    if (!st) return 0;
    auto [it, fresh] = stack_map_.try_emplace(st, 0);
    if (fresh) {
      std::vector<StringId> frames;
      for (size_t k = 0; k < s_.stack_size(st); ++k) frames.push_back(b_.intern(s_.frame(st, k)));
      it->second = b_.add_stack(frames);
    }
    return it->second;
  }

 private:
  TraceBuilder& b_;
  const MemorySnapshot& s_;
  std::unordered_map<uint32_t, uint32_t> stack_map_;
};

// One device's allocator trace as memory events, counters and instants.
class DeviceReplay {
 public:
  DeviceReplay(TraceBuilder& b, const MemorySnapshot& s, const SnapshotKeys& k,
               SnapshotStacks& stacks, const SnapshotDevice& dev, int64_t t_first)
      : b_(b), s_(s), k_(k), stacks_(stacks), dr_(dev.range) {
    uint32_t proc = b.process(dr_.device);
    b.trace().processes[proc].name =
        b.intern("CUDA memory snapshot, GPU " + std::to_string(dr_.device));
    track_ = b.thread_track(proc, 0);
    b.trace().tracks[track_].name = b.intern("caching allocator");
    active_series_ = b.counter_series(proc, b.intern("active bytes (replayed)"));
    reserved_series_ = b.counter_series(proc, b.intern("reserved bytes"));
    SnapshotReplayStart start = snapshot_replay_start(s, dev);
    active_ = start.active;
    reserved_ = start.reserved;
    last_ts_ = (t_first >= 0 ? t_first : 0) * 1000;
    b.add_counter(active_series_, last_ts_, static_cast<double>(active_));
    b.add_counter(reserved_series_, last_ts_, static_cast<double>(reserved_));
    // A huge trace keeps per bucket of entries only its lowest and highest point (exact totals,
    // the peak included, address 0 = not pairable), so the Trace stays bounded whatever the
    // snapshot's size; the allocator view (analyze_memory_snapshot) replays every entry.
    n_ = dr_.end - dr_.begin;
    per_bucket_ = n_ <= kSnapshotTraceFullEntries
                      ? 0
                      : (n_ + kSnapshotTraceFullEntries / 2 - 1) / (kSnapshotTraceFullEntries / 2);
    emitted_ = start.active;
  }

  void run() {
    s_.trace.for_each(dr_.begin, dr_.end, [&](size_t i, const SnapshotTraceEntry& e) {
      int64_t ts = e.time_us >= 0 ? e.time_us * 1000 : last_ts_ + 1000;
      last_ts_ = ts;
      switch (e.action) {
        case SnapshotAction::kAlloc:
        case SnapshotAction::kFreeCompleted:
          memory_entry(i, e, ts);
          break;
        case SnapshotAction::kFreeRequested:
          break;  // counted at free_completed
        default:
          other_entry(e, ts);
      }
    });
    flush();
    if (per_bucket_ && last_.active != emitted_) emit(last_);  // the end state too
    if (per_bucket_ || instants_left_out_) {
      b_.trace().meta.extra.emplace_back(
          "mlprof_snapshot_downsampled_gpu" + std::to_string(dr_.device),
          "{\"entries\": " + std::to_string(n_) +
              ", \"entries_per_bucket\": " + std::to_string(per_bucket_) +
              ", \"memory_events\": " + std::to_string(memory_events_) +
              ", \"instants_left_out\": " + std::to_string(instants_left_out_) + "}");
    }
  }

 private:
  struct Point {
    size_t idx;
    int64_t ts, active, reserved;
    uint32_t stack;
  };

  void emit(const Point& p) {
    b_.add_memory(track_, p.ts, 0, p.active - emitted_, DeviceType::kCuda,
                  static_cast<int16_t>(dr_.device), p.active, p.reserved, stacks_(p.stack));
    b_.add_counter(active_series_, p.ts, static_cast<double>(p.active));
    emitted_ = p.active;
    ++memory_events_;
  }

  void flush() {
    if (!open_bucket_) return;
    const Point& first = lo_.idx <= hi_.idx ? lo_ : hi_;
    const Point& second = lo_.idx <= hi_.idx ? hi_ : lo_;
    emit(first);
    if (second.idx != first.idx) emit(second);
    open_bucket_ = false;
  }

  // An allocation or a completed free: a memory event, or a point of its bucket.
  void memory_entry(size_t i, const SnapshotTraceEntry& e, int64_t ts) {
    int64_t delta = e.action == SnapshotAction::kAlloc ? e.size : -e.size;
    active_ += delta;
    if (!per_bucket_) {
      b_.add_memory(track_, ts, e.addr, delta, DeviceType::kCuda, static_cast<int16_t>(dr_.device),
                    active_, reserved_, stacks_(e.stack));
      b_.add_counter(active_series_, ts, static_cast<double>(active_));
      ++memory_events_;
      return;
    }
    size_t k = (i - dr_.begin) / per_bucket_;
    if (open_bucket_ && k != bucket_) flush();
    Point p{i, ts, active_, reserved_, e.stack};
    last_ = p;
    if (!open_bucket_) {
      lo_ = hi_ = p;
      bucket_ = k;
      open_bucket_ = true;
    } else if (active_ < lo_.active) {
      lo_ = p;
    } else if (active_ > hi_.active) {
      hi_ = p;
    }
  }

  // Segment, OOM, snapshot and annotate entries: the reserved total and an instant.
  void other_entry(const SnapshotTraceEntry& e, int64_t ts) {
    bool segment =
        e.action >= SnapshotAction::kSegmentAlloc && e.action <= SnapshotAction::kSegmentUnmap;
    if (e.action == SnapshotAction::kSegmentAlloc || e.action == SnapshotAction::kSegmentMap)
      reserved_ += e.size;
    if (e.action == SnapshotAction::kSegmentFree || e.action == SnapshotAction::kSegmentUnmap)
      reserved_ -= e.size;
    // Instants (segment, OOM, snapshot, annotate) are few in real snapshots; past the
    // bound only OOMs are kept (reserved still follows every segment entry).
    if (instants_ >= kSnapshotTraceFullEntries && e.action != SnapshotAction::kOom) {
      ++instants_left_out_;
      return;
    }
    ++instants_;
    if (segment) b_.add_counter(reserved_series_, ts, static_cast<double>(reserved_));
    uint32_t mark = b_.args_mark();
    b_.arg_int(k_.k_size, e.size);
    if (e.action == SnapshotAction::kOom)
      b_.arg_int(k_.k_free, static_cast<int64_t>(e.addr));
    else
      b_.arg_uint(k_.k_addr, e.addr);
    b_.arg_int(k_.k_stream, e.stream);
    if (e.text) b_.arg_string(k_.k_text, b_.intern(s_.str(e.text)));
    if (e.stack) b_.arg_string(k_.k_stack, b_.intern(s_.frame(e.stack, 0)));
    b_.add_instant(track_, ts, b_.intern(snapshot_action_name(e.action)), k_.cat,
                   b_.args_since(mark));
  }

  TraceBuilder& b_;
  const MemorySnapshot& s_;
  const SnapshotKeys& k_;
  SnapshotStacks& stacks_;
  const SnapshotDeviceRange& dr_;
  uint32_t track_ = 0, active_series_ = 0, reserved_series_ = 0;
  int64_t active_ = 0, reserved_ = 0, last_ts_ = 0;
  size_t n_ = 0, per_bucket_ = 0;
  Point lo_{}, hi_{}, last_{};
  bool open_bucket_ = false;
  size_t bucket_ = 0;
  int64_t emitted_ = 0;
  uint64_t memory_events_ = 0, instants_ = 0, instants_left_out_ = 0;
};

// record_function ranges (external_annotations): START/END pairs per name, as slices.
void add_annotations(TraceBuilder& b, const MemorySnapshot& s, StringId cat) {
  std::unordered_map<uint64_t, std::vector<int64_t>> open;
  for (const SnapshotAnnotation& a : s.annotations) {
    uint32_t proc = b.process(a.device);
    uint32_t track = b.thread_track(proc, 1);
    b.trace().tracks[track].name = b.intern("record_function");
    uint64_t key = static_cast<uint64_t>(a.device) << 32 | a.name;
    if (a.start) {
      open[key].push_back(a.time_us);
    } else if (!open[key].empty()) {
      int64_t t0 = open[key].back();
      open[key].pop_back();
      b.add_slice(track, t0 * 1000, std::max<int64_t>(0, a.time_us - t0) * 1000,
                  b.intern(s.str(a.name)), cat);
    }
  }
}

}  // namespace

Trace memory_snapshot_to_trace(const MemorySnapshot& s) {
  TraceBuilder b;
  const SnapshotKeys keys(b);
  SnapshotStacks stacks(b, s);
  // Entries without time_us sit 1 us apart from the first timed one (or from 0).
  int64_t t_first = -1;
  s.trace.for_each([&](size_t, const SnapshotTraceEntry& e) {
    if (e.time_us >= 0) t_first = e.time_us;
    return t_first < 0;
  });
  for (const SnapshotDevice& dev : snapshot_devices_with_segments(s))
    DeviceReplay(b, s, keys, stacks, dev, t_first).run();
  add_annotations(b, s, keys.cat);
  Trace t = std::move(b).finish();
  t.meta.source = s.source;
  t.meta.format = "cuda-memory-snapshot";
  return t;
}

}  // namespace mlprof
