// Helpers over the MemorySnapshot model shared by the importer (snapshot -> Trace) and the
// analysis (replay), so neither stage depends on the other.
#include "mlprof/memory_snapshot.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace mlprof {

const char* snapshot_action_name(SnapshotAction a) {
  static const char* const kNames[] = {
      "alloc",        "free_requested", "free_completed", "segment_alloc",
      "segment_free", "segment_map",    "segment_unmap",  "oom",
      "snapshot",     "annotate",       "other"};
  return kNames[static_cast<int>(a)];
}

std::vector<SnapshotDeviceRange> snapshot_devices(const MemorySnapshot& s) {
  std::set<int32_t> ids;
  for (const SnapshotSegment& seg : s.segments) ids.insert(seg.device);
  for (const SnapshotTraceEntry& e : s.trace) ids.insert(e.device);
  std::vector<SnapshotDeviceRange> out;
  for (int32_t d : ids) {
    SnapshotDeviceRange r;
    r.device = d;
    auto lo = std::lower_bound(s.trace.begin(), s.trace.end(), d,
                               [](const SnapshotTraceEntry& e, int32_t v) { return e.device < v; });
    auto hi = std::upper_bound(s.trace.begin(), s.trace.end(), d,
                               [](int32_t v, const SnapshotTraceEntry& e) { return v < e.device; });
    r.begin = static_cast<size_t>(lo - s.trace.begin());
    r.end = static_cast<size_t>(hi - s.trace.begin());
    out.push_back(r);
  }
  return out;
}

SnapshotReplayStart snapshot_replay_start(const MemorySnapshot& s, int32_t device, size_t begin,
                                          size_t end) {
  SnapshotReplayStart out;
  std::unordered_set<uint64_t> live;
  int64_t net_segments = 0;
  for (size_t i = begin; i < end; ++i) {
    const SnapshotTraceEntry& e = s.trace[i];
    switch (e.action) {
      case SnapshotAction::kAlloc:
        live.insert(e.addr);
        break;
      case SnapshotAction::kFreeCompleted:
        if (!live.erase(e.addr)) {
          out.active += e.size;
          ++out.frees_without_alloc;
        }
        break;
      case SnapshotAction::kSegmentAlloc:
      case SnapshotAction::kSegmentMap:
        net_segments += e.size;
        break;
      case SnapshotAction::kSegmentFree:
      case SnapshotAction::kSegmentUnmap:
        net_segments -= e.size;
        break;
      default:
        break;
    }
  }
  int64_t reserved = 0;
  for (const SnapshotSegment& seg : s.segments) {
    if (seg.device != device) continue;
    reserved += seg.total_size;
    for (uint32_t b = seg.blocks_begin; b < seg.blocks_begin + seg.blocks_count; ++b) {
      const SnapshotBlock& blk = s.blocks[b];
      if (blk.state == BlockState::kActiveAllocated && !live.count(blk.address)) {
        out.active += blk.size;
        ++out.blocks_not_in_trace;
      }
    }
  }
  out.reserved = std::max<int64_t>(0, reserved - net_segments);
  return out;
}

}  // namespace mlprof
