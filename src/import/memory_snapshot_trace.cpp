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

Trace memory_snapshot_to_trace(const MemorySnapshot& s) {
  TraceBuilder b;
  StringId cat = b.intern("cuda_memory_snapshot");
  StringId k_size = b.intern("size"), k_addr = b.intern("addr"), k_stream = b.intern("stream"),
           k_free = b.intern("device_free"), k_text = b.intern("text"),
           k_stack = b.intern("innermost frame");
  std::unordered_map<uint32_t, uint32_t> stack_map;
  auto trace_stack = [&](uint32_t st) -> uint32_t {
    if (!st) return 0;
    auto [it, fresh] = stack_map.try_emplace(st, 0);
    if (fresh) {
      std::vector<StringId> frames;
      for (size_t k = 0; k < s.stack_size(st); ++k) frames.push_back(b.intern(s.frame(st, k)));
      it->second = b.add_stack(frames);
    }
    return it->second;
  };
  // Entries without time_us sit 1 us apart from the first timed one (or from 0).
  int64_t t_first = -1;
  s.trace.for_each([&](size_t, const SnapshotTraceEntry& e) {
    if (e.time_us >= 0) t_first = e.time_us;
    return t_first < 0;
  });
  for (const SnapshotDevice& dev : snapshot_devices_with_segments(s)) {
    const SnapshotDeviceRange& dr = dev.range;
    uint32_t proc = b.process(dr.device);
    b.trace().processes[proc].name =
        b.intern("CUDA memory snapshot, GPU " + std::to_string(dr.device));
    uint32_t track = b.thread_track(proc, 0);
    b.trace().tracks[track].name = b.intern("caching allocator");
    uint32_t active_series = b.counter_series(proc, b.intern("active bytes (replayed)"));
    uint32_t reserved_series = b.counter_series(proc, b.intern("reserved bytes"));
    SnapshotReplayStart start = snapshot_replay_start(s, dev);
    int64_t active = start.active, reserved = start.reserved;
    int64_t last_ts = (t_first >= 0 ? t_first : 0) * 1000;
    b.add_counter(active_series, last_ts, static_cast<double>(active));
    b.add_counter(reserved_series, last_ts, static_cast<double>(reserved));
    // A huge trace keeps per bucket of entries only its lowest and highest point (exact totals,
    // the peak included, address 0 = not pairable), so the Trace stays bounded whatever the
    // snapshot's size; the allocator view (analyze_memory_snapshot) replays every entry.
    size_t n = dr.end - dr.begin;
    size_t per_bucket = n <= kSnapshotTraceFullEntries ? 0
                                                       : (n + kSnapshotTraceFullEntries / 2 - 1) /
                                                             (kSnapshotTraceFullEntries / 2);
    struct Point {
      size_t idx;
      int64_t ts, active, reserved;
      uint32_t stack;
    };
    Point lo{}, hi{}, last{};
    bool open_bucket = false;
    size_t bucket = 0;
    int64_t emitted = start.active;
    uint64_t memory_events = 0, instants = 0, instants_left_out = 0;
    auto emit = [&](const Point& p) {
      b.add_memory(track, p.ts, 0, p.active - emitted, DeviceType::kCuda,
                   static_cast<int16_t>(dr.device), p.active, p.reserved, trace_stack(p.stack));
      b.add_counter(active_series, p.ts, static_cast<double>(p.active));
      emitted = p.active;
      ++memory_events;
    };
    auto flush = [&] {
      if (!open_bucket) return;
      const Point& first = lo.idx <= hi.idx ? lo : hi;
      const Point& second = lo.idx <= hi.idx ? hi : lo;
      emit(first);
      if (second.idx != first.idx) emit(second);
      open_bucket = false;
    };
    s.trace.for_each(dr.begin, dr.end, [&](size_t i, const SnapshotTraceEntry& e) {
      int64_t ts = e.time_us >= 0 ? e.time_us * 1000 : last_ts + 1000;
      last_ts = ts;
      switch (e.action) {
        case SnapshotAction::kAlloc:
        case SnapshotAction::kFreeCompleted: {
          int64_t delta = e.action == SnapshotAction::kAlloc ? e.size : -e.size;
          active += delta;
          if (!per_bucket) {
            b.add_memory(track, ts, e.addr, delta, DeviceType::kCuda,
                         static_cast<int16_t>(dr.device), active, reserved, trace_stack(e.stack));
            b.add_counter(active_series, ts, static_cast<double>(active));
            ++memory_events;
            break;
          }
          size_t k = (i - dr.begin) / per_bucket;
          if (open_bucket && k != bucket) flush();
          Point p{i, ts, active, reserved, e.stack};
          last = p;
          if (!open_bucket) {
            lo = hi = p;
            bucket = k;
            open_bucket = true;
          } else if (active < lo.active) {
            lo = p;
          } else if (active > hi.active) {
            hi = p;
          }
          break;
        }
        case SnapshotAction::kFreeRequested:
          break;  // counted at free_completed
        default: {
          bool segment = e.action >= SnapshotAction::kSegmentAlloc &&
                         e.action <= SnapshotAction::kSegmentUnmap;
          if (e.action == SnapshotAction::kSegmentAlloc || e.action == SnapshotAction::kSegmentMap)
            reserved += e.size;
          if (e.action == SnapshotAction::kSegmentFree || e.action == SnapshotAction::kSegmentUnmap)
            reserved -= e.size;
          // Instants (segment, OOM, snapshot, annotate) are few in real snapshots; past the
          // bound only OOMs are kept (reserved still follows every segment entry).
          if (instants >= kSnapshotTraceFullEntries && e.action != SnapshotAction::kOom) {
            ++instants_left_out;
            break;
          }
          ++instants;
          if (segment) b.add_counter(reserved_series, ts, static_cast<double>(reserved));
          uint32_t mark = b.args_mark();
          b.arg_int(k_size, e.size);
          if (e.action == SnapshotAction::kOom)
            b.arg_int(k_free, static_cast<int64_t>(e.addr));
          else
            b.arg_uint(k_addr, e.addr);
          b.arg_int(k_stream, e.stream);
          if (e.text) b.arg_string(k_text, b.intern(s.str(e.text)));
          if (e.stack) b.arg_string(k_stack, b.intern(s.frame(e.stack, 0)));
          b.add_instant(track, ts, b.intern(snapshot_action_name(e.action)), cat,
                        b.args_since(mark));
        }
      }
    });
    flush();
    if (per_bucket && last.active != emitted) emit(last);  // the end state too
    if (per_bucket || instants_left_out) {
      b.trace().meta.extra.emplace_back(
          "mlprof_snapshot_downsampled_gpu" + std::to_string(dr.device),
          "{\"entries\": " + std::to_string(n) + ", \"entries_per_bucket\": " +
              std::to_string(per_bucket) + ", \"memory_events\": " + std::to_string(memory_events) +
              ", \"instants_left_out\": " + std::to_string(instants_left_out) + "}");
    }
  }
  // record_function ranges (external_annotations): START/END pairs per name, as slices.
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
  Trace t = std::move(b).finish();
  t.meta.source = s.source;
  t.meta.format = "cuda-memory-snapshot";
  return t;
}

}  // namespace mlprof
