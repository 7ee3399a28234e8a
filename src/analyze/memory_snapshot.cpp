#include "mlprof/analyze/memory_snapshot.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace/snapshot_devices.h"

namespace mlprof {

const char* block_state_name(BlockState s) {
  switch (s) {
    case BlockState::kActiveAllocated:
      return "active_allocated";
    case BlockState::kActiveAwaitingFree:
      return "active_awaiting_free";
    case BlockState::kInactive:
      return "inactive";
    default:
      return "other";
  }
}

namespace {

std::string short_frame(std::string_view f) {
  // "dir/file.py:12:name" -> "file.py:12:name" (Windows paths too).
  size_t colon = f.find(':', f.size() > 2 && f[1] == ':' ? 2 : 0);  // skip a drive letter
  std::string_view path = colon == std::string_view::npos ? f : f.substr(0, colon);
  size_t slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? f : f.substr(slash + 1));
}

// PyTorch's memory_viz hides these frames (MemoryViz.js frameFilter): its own unwinder and
// the interpreter's plumbing, never where a program allocated.
bool omitted_frame(std::string_view f) {
  size_t colon = f.find(':', f.size() > 2 && f[1] == ':' ? 2 : 0);
  std::string_view file = colon == std::string_view::npos ? f : f.substr(0, colon);
  size_t name_at = colon == std::string_view::npos ? 0 : f.find(':', colon + 1);
  std::string_view name = name_at == std::string_view::npos ? f : f.substr(name_at + 1);
  for (std::string_view fn : {"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp",
                              "_start", "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"})
    if (name.find(fn) != std::string_view::npos) return true;
  for (std::string_view fl : {"core/boxing", "/Register", "/Redispatch", "pythonrun.c",
                              "Modules/main.c", "Objects/call.c", "Objects/methodobject.c",
                              "pycore_ceval.h", "ceval.c", "cpython/abstract.h"})
    if (file.find(fl) != std::string_view::npos) return true;
  return false;
}

bool python_frame(std::string_view f) {
  size_t colon = f.find(':', f.size() > 2 && f[1] == ':' ? 2 : 0);
  return colon != std::string_view::npos && f.substr(0, colon).ends_with(".py");
}

// The allocator's and tensor factories' own C++ frames: where every allocation passes.
bool allocator_frame(std::string_view f) {
  for (std::string_view fn :
       {"CachingAllocator", "c10::", "at::detail::empty", "at::empty", "at::native::empty",
        "at::_ops::empty", "at::TensorBase::", "at::native::resize", "at::_ops::resize"})
    if (f.find(fn) != std::string_view::npos) return true;
  return false;
}

// Where a block was allocated: the innermost Python frame when the stack has one (a stack
// recorded with context="all" starts in the allocator's C++), else the innermost frame
// memory_viz would show that is not the allocator's own.
std::string site_of(const MemorySnapshot& s, uint32_t stack) {
  if (!stack) return "<no frames>";
  size_t n = s.stack_size(stack), shown = n, caller = n;
  for (size_t i = 0; i < n; ++i) {
    std::string_view f = s.frame(stack, i);
    if (python_frame(f)) return short_frame(f);
    if (omitted_frame(f)) continue;
    if (shown == n) shown = i;
    if (caller == n && !allocator_frame(f)) caller = i;
  }
  return short_frame(s.frame(stack, caller != n ? caller : shown != n ? shown : 0));
}

// Sums bytes per stack (or per innermost frame) and returns the largest `top` rows.
class StackTally {
 public:
  StackTally(const MemorySnapshot& s, bool by_site) : s_(s), by_site_(by_site) {}
  void add(uint32_t stack, int64_t bytes) {
    uint64_t key = stack;
    if (by_site_) {
      key = stack ? site_key(stack) : 0;
    }
    auto& e = sums_[key];
    if (!e.blocks) e.stack = stack;
    e.bytes += bytes;
    ++e.blocks;
  }
  std::vector<StackBytes> top(size_t n, size_t frames_shown) const {
    std::vector<const Entry*> rows;
    for (const auto& [k, e] : sums_) rows.push_back(&e);
    std::sort(rows.begin(), rows.end(), [](const Entry* a, const Entry* b) {
      return a->bytes != b->bytes ? a->bytes > b->bytes : a->stack < b->stack;
    });
    std::vector<StackBytes> out;
    for (size_t k = 0; k < rows.size() && k < n; ++k) {
      StackBytes r;
      r.site = site_of(s_, rows[k]->stack);
      if (!by_site_ && rows[k]->stack)
        for (size_t f = 0; f < s_.stack_size(rows[k]->stack) && r.frames.size() < frames_shown; ++f)
          if (!omitted_frame(s_.frame(rows[k]->stack, f)))
            r.frames.emplace_back(s_.frame(rows[k]->stack, f));
      r.bytes = rows[k]->bytes;
      r.blocks = rows[k]->blocks;
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  struct Entry {
    uint32_t stack = 0;
    int64_t bytes = 0;
    uint64_t blocks = 0;
  };
  // Stacks with the same site are one row (the site's text, interned once per stack).
  uint64_t site_key(uint32_t stack) {
    auto it = site_by_stack_.find(stack);
    if (it != site_by_stack_.end()) return it->second;
    auto site = site_ids_.try_emplace(site_of(s_, stack), site_ids_.size() + 1).first;
    return site_by_stack_[stack] = site->second;
  }
  const MemorySnapshot& s_;
  bool by_site_;
  std::unordered_map<uint64_t, Entry> sums_;
  std::unordered_map<uint32_t, uint64_t> site_by_stack_;
  std::unordered_map<std::string, uint64_t> site_ids_;
};

void finish_group(SnapshotGroup& g) {
  g.unused_fraction = g.reserved ? static_cast<double>(g.inactive) / g.reserved : 0;
  g.fragmentation = g.inactive ? 1.0 - static_cast<double>(g.largest_inactive) / g.inactive : 0;
}

std::string human_bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (std::abs(v) >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", v, units[u]);
  return buf;
}

// Second pass: live allocations (address -> size, stack) at the peak and at each OOM.
void tally_live_at_peak_and_ooms(const MemorySnapshot& s, const SnapshotDevice& dev,
                                 const SnapshotOptions& o, SnapshotReplay& r) {
  const SnapshotDeviceRange& dr = dev.range;
  struct Live {
    int64_t size;
    uint32_t stack;
  };
  std::unordered_map<uint64_t, Live> live;
  {
    std::unordered_map<uint64_t, int> allocated_in_trace;
    s.trace.for_each(dr.begin, dr.end, [&](size_t, const SnapshotTraceEntry& e) {
      if (e.action == SnapshotAction::kAlloc) {
        allocated_in_trace[e.addr] = 1;
      } else if (e.action == SnapshotAction::kFreeCompleted && !allocated_in_trace.count(e.addr)) {
        live[e.addr] = Live{e.size, e.stack};  // live since before the trace
      } else if (e.action == SnapshotAction::kFreeCompleted) {
        allocated_in_trace.erase(e.addr);
      }
    });
    for (uint32_t j : dev.segments) {
      const SnapshotSegment& seg = s.segments[j];
      for (uint32_t b = seg.blocks_begin; b < seg.blocks_begin + seg.blocks_count; ++b) {
        const SnapshotBlock& blk = s.blocks[b];
        if (blk.state == BlockState::kActiveAllocated && !allocated_in_trace.count(blk.address) &&
            !live.count(blk.address))
          live[blk.address] = Live{blk.size, blk.stack};
      }
    }
  }
  auto tally_live = [&](std::vector<StackBytes>& out, uint64_t* count) {
    StackTally t(s, false);
    for (const auto& [addr, l] : live) t.add(l.stack, l.size);
    out = t.top(o.top, o.frames_shown);
    if (count) *count = live.size();
  };
  size_t next_oom = 0;
  if (r.peak_index < 0) tally_live(r.live_at_peak, &r.live_at_peak_blocks);
  s.trace.for_each(dr.begin, dr.end, [&](size_t i, const SnapshotTraceEntry& e) {
    int64_t idx = static_cast<int64_t>(i - dr.begin);
    if (e.action == SnapshotAction::kAlloc) live[e.addr] = Live{e.size, e.stack};
    if (e.action == SnapshotAction::kFreeCompleted) live.erase(e.addr);
    if (idx == r.peak_index) tally_live(r.live_at_peak, &r.live_at_peak_blocks);
    while (next_oom < r.ooms.size() && static_cast<int64_t>(r.ooms[next_oom].index) == idx)
      tally_live(r.ooms[next_oom++].holders, nullptr);
    return !(idx >= r.peak_index && next_oom == r.ooms.size());
  });
}

// Replays one device's trace: counts, timeline, peak; then a second pass to the peak and each
// OOM collects the allocations live there.
SnapshotReplay replay_device(const MemorySnapshot& s, const SnapshotDevice& dev,
                             const SnapshotOptions& o) {
  const SnapshotDeviceRange& dr = dev.range;
  SnapshotReplay r;
  r.device = dr.device;
  r.entries = dr.end - dr.begin;
  SnapshotReplayStart start = snapshot_replay_start(s, dev);
  r.frees_without_alloc = start.frees_without_alloc;
  r.blocks_not_in_trace = start.blocks_not_in_trace;
  r.start_active = r.peak_active = start.active;
  r.start_reserved = r.peak_reserved = start.reserved;
  int64_t active = start.active, reserved = start.reserved;
  std::vector<ReplayPoint> full_bucket;
  size_t n = r.entries;
  size_t per_bucket =
      o.timeline_points ? std::max<size_t>(1, (n + o.timeline_points - 1) / o.timeline_points) : 0;
  ReplayPoint bucket_max;
  bool bucket_open = false;
  std::vector<uint64_t> oom_indices;
  s.trace.for_each(dr.begin, dr.end, [&](size_t i, const SnapshotTraceEntry& e) {
    uint64_t idx = i - dr.begin;
    ++r.action_counts[static_cast<int>(e.action)];
    if (e.time_us >= 0) {
      if (r.has_time && e.time_us < r.last_time_us) r.time_monotonic = false;
      if (!r.has_time) r.first_time_us = r.min_time_us = e.time_us;
      r.min_time_us = std::min(r.min_time_us, e.time_us);
      r.has_time = true;
      r.last_time_us = e.time_us;
    }
    switch (e.action) {
      case SnapshotAction::kAlloc:
        r.alloc_bytes += e.size;
        active += e.size;
        break;
      case SnapshotAction::kFreeRequested:
        r.free_requested_bytes += e.size;
        break;
      case SnapshotAction::kFreeCompleted:
        r.free_completed_bytes += e.size;
        active -= e.size;
        break;
      case SnapshotAction::kSegmentAlloc:
      case SnapshotAction::kSegmentMap:
        r.segment_alloc_bytes += e.size;
        reserved += e.size;
        break;
      case SnapshotAction::kSegmentFree:
      case SnapshotAction::kSegmentUnmap:
        r.segment_free_bytes += e.size;
        reserved -= e.size;
        break;
      case SnapshotAction::kOom:
        oom_indices.push_back(idx);
        break;
      default:
        break;
    }
    if (active > r.peak_active) {
      r.peak_active = active;
      r.peak_index = static_cast<int64_t>(idx);
      r.peak_time_us = e.time_us;
    }
    r.peak_reserved = std::max(r.peak_reserved, reserved);
    if (per_bucket) {
      if (!bucket_open || active > bucket_max.active) {
        bucket_max = ReplayPoint{idx, e.time_us, active, reserved};
        bucket_open = true;
      }
      if ((idx + 1) % per_bucket == 0 || i + 1 == dr.end) {
        r.timeline.push_back(bucket_max);
        bucket_open = false;
      }
    }
    if (e.action == SnapshotAction::kOom) {
      SnapshotOom oom;
      oom.index = idx;
      oom.time_us = e.time_us;
      oom.requested = e.size;
      oom.device_free = static_cast<int64_t>(e.addr);
      oom.stream = e.stream;
      oom.site = e.stack ? site_of(s, e.stack) : "";
      oom.active = active;
      oom.reserved = reserved;
      r.ooms.push_back(std::move(oom));
    }
  });
  r.end_active = active;
  r.end_reserved = reserved;
  if (r.peak_index < 0 && oom_indices.empty()) {
    // The start was the peak: what was live then is the dump's state plus the early frees.
  }
  tally_live_at_peak_and_ooms(s, dev, o, r);
  return r;
}

// Recommendations for the usual causes: fragmentation, OOMs, no history, a wrapped ring buffer.
void recommend_snapshot(const MemorySnapshot& s, SnapshotResult& r) {
  auto setting = [&](std::string_view key) -> std::string {
    for (const auto& [k, v] : s.allocator_settings)
      if (k == key) return v;
    return "";
  };
  bool expandable = setting("expandable_segments") == "true" || r.expandable_segments > 0;
  if (r.reserved > 0 && r.unused_fraction > 0.2 && !expandable)
    r.recommendations.push_back(
        human_bytes(r.reserved - r.allocated) + " (" +
        std::to_string(static_cast<int>(r.unused_fraction * 100 + 0.5)) +
        "%) of reserved memory is cached but unused, split over " +
        std::to_string(r.blocks_by_state[static_cast<int>(BlockState::kInactive)]) +
        " free blocks (largest " + human_bytes(r.largest_inactive) +
        "): PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow instead of "
        "fragmenting");
  for (const SnapshotReplay& d : r.devices) {
    for (const SnapshotOom& oom : d.ooms)
      r.recommendations.push_back(
          "GPU " + std::to_string(d.device) + ": an allocation of " + human_bytes(oom.requested) +
          " failed (OOM at trace entry " + std::to_string(oom.index) + ") with " +
          human_bytes(oom.reserved) + " reserved, " + human_bytes(oom.active) + " active, " +
          human_bytes(oom.device_free) + " free on the device" +
          (oom.holders.empty() ? std::string()
                               : "; largest holder " + oom.holders[0].site + " (" +
                                     human_bytes(oom.holders[0].bytes) + ")"));
    if (d.entries <= 1 && r.segments > 0)
      r.recommendations.push_back(
          "GPU " + std::to_string(d.device) +
          ": the snapshot holds no allocation history (state only): call "
          "torch.cuda.memory._record_memory_history(max_entries=100000) before the run for a "
          "timeline and the stacks live at the peak");
  }
  std::string overflowed = setting("trace_alloc_overflowed");
  if (overflowed == "true")
    r.recommendations.push_back(
        "the trace ring buffer wrapped (trace_alloc_overflowed): the oldest events are lost and "
        "the replay starts mid-run; raise max_entries in _record_memory_history");
}

}  // namespace

SnapshotResult analyze_memory_snapshot(const MemorySnapshot& s, const SnapshotOptions& o) {
  SnapshotResult r;
  r.source = s.source;
  r.format = s.format;
  r.layout = s.legacy_block_history ? "history (PyTorch 2.0)" : "frames";
  r.segments = s.segments.size();
  r.blocks = s.blocks.size();
  r.allocator_settings = s.allocator_settings;
  r.annotations = s.annotations.size();
  std::map<std::pair<int32_t, int64_t>, SnapshotGroup> streams;
  std::map<std::tuple<int32_t, int64_t, int64_t>, SnapshotGroup> pools;
  StackTally by_site(s, true), by_stack(s, false);
  int64_t total_inactive = 0;
  for (const SnapshotSegment& seg : s.segments) {
    r.reserved += seg.total_size;
    r.allocated += seg.allocated_size;
    r.active += seg.active_size;
    r.requested += seg.requested_size;
    r.largest_segment = std::max(r.largest_segment, seg.total_size);
    (seg.large ? r.large_segments : r.small_segments)++;
    if (seg.expandable) ++r.expandable_segments;
    if (seg.private_pool()) ++r.private_pool_segments;
    SnapshotSegmentRow row;
    row.device = seg.device;
    row.address = seg.address;
    row.stream = seg.stream;
    row.large = seg.large;
    row.expandable = seg.expandable;
    row.private_pool = seg.private_pool();
    row.total = seg.total_size;
    row.allocated = seg.allocated_size;
    row.blocks = seg.blocks_count;
    row.site = seg.stack ? site_of(s, seg.stack) : "";
    int64_t awaiting = 0;
    for (uint32_t b = seg.blocks_begin; b < seg.blocks_begin + seg.blocks_count; ++b) {
      const SnapshotBlock& blk = s.blocks[b];
      int st = static_cast<int>(blk.state);
      ++r.blocks_by_state[st];
      r.bytes_by_state[st] += blk.size;
      if (blk.state == BlockState::kInactive) {
        row.inactive += blk.size;
        ++row.inactive_blocks;
        row.largest_inactive = std::max(row.largest_inactive, blk.size);
      } else if (blk.state == BlockState::kActiveAllocated) {
        by_site.add(blk.stack, blk.size);
        by_stack.add(blk.stack, blk.size);
      } else if (blk.state == BlockState::kActiveAwaitingFree) {
        awaiting += blk.size;
      }
    }
    row.fragmentation =
        row.inactive ? 1.0 - static_cast<double>(row.largest_inactive) / row.inactive : 0;
    total_inactive += row.inactive;
    r.largest_inactive = std::max(r.largest_inactive, row.largest_inactive);
    auto add_to = [&](SnapshotGroup& g) {
      ++g.segments;
      g.blocks += seg.blocks_count;
      g.reserved += seg.total_size;
      g.allocated += seg.allocated_size;
      g.requested += seg.requested_size;
      g.inactive += row.inactive;
      g.awaiting_free += awaiting;
      g.largest_inactive = std::max(g.largest_inactive, row.largest_inactive);
    };
    SnapshotGroup& sg = streams[{seg.device, seg.stream}];
    sg.device = seg.device;
    sg.stream = seg.stream;
    sg.name = "GPU " + std::to_string(seg.device) + " stream " + std::to_string(seg.stream);
    add_to(sg);
    if (seg.has_pool) {
      SnapshotGroup& pg = pools[{seg.device, seg.pool_a, seg.pool_b}];
      pg.device = seg.device;
      pg.pool_a = seg.pool_a;
      pg.pool_b = seg.pool_b;
      pg.name = "GPU " + std::to_string(seg.device) + " pool (" + std::to_string(seg.pool_a) +
                ", " + std::to_string(seg.pool_b) + ")" +
                (seg.private_pool() ? " private" : " default");
      add_to(pg);
    }
    if (row.inactive > 0) r.fragmented_segments.push_back(std::move(row));
  }
  r.unused_fraction = r.reserved ? static_cast<double>(total_inactive) / r.reserved : 0;
  r.fragmentation =
      total_inactive ? 1.0 - static_cast<double>(r.largest_inactive) / total_inactive : 0;
  for (auto& [k, g] : streams) finish_group(g), r.streams.push_back(g);
  for (auto& [k, g] : pools) finish_group(g), r.pools.push_back(g);
  std::sort(r.fragmented_segments.begin(), r.fragmented_segments.end(),
            [](const auto& a, const auto& b) {
              return a.inactive != b.inactive ? a.inactive > b.inactive : a.address < b.address;
            });
  if (r.fragmented_segments.size() > o.top) r.fragmented_segments.resize(o.top);
  r.live_by_site = by_site.top(o.top, o.frames_shown);
  r.live_by_stack = by_stack.top(o.top, o.frames_shown);
  for (const SnapshotDevice& dev : snapshot_devices_with_segments(s))
    r.devices.push_back(replay_device(s, dev, o));
  // Every trace entry belongs to a replayed device: its earliest time comes from the replays.
  auto earlier = [&](int64_t t) {
    if (t >= 0 && (r.start_time_us < 0 || t < r.start_time_us)) r.start_time_us = t;
  };
  for (const SnapshotReplay& d : r.devices) earlier(d.min_time_us);
  for (const SnapshotAnnotation& a : s.annotations) earlier(a.time_us);

  recommend_snapshot(s, r);
  return r;
}

}  // namespace mlprof
