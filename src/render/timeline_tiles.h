// Level-of-detail tiles of the timeline for `mlprof serve`: the slices of a window [t0, t1) at a
// pixel width, so the browser holds what one screen shows, never the whole trace. Per lane and
// drawing row, a slice at least one pixel wide is sent as it is; a run of narrower slices whose
// gaps are under a pixel is merged into one mark with its slice count and busy time (the sum of
// its slices' durations). A window narrow enough that nothing merges gets the exact slices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analyze/timeline.h"
#include "mlprof/trace.h"

namespace mlprof {

// Per slice of the timeline's lanes: its drawing row (timeline_display_depths, as the encoded
// events) and the latest end of the lane's slices up to it (a binary search finds the first slice
// reaching into a window). Built once per trace.
struct TimelineTileIndex {
  std::vector<uint16_t> depth;   // by slice index (slices of tracks without a lane: 0)
  std::vector<int64_t> max_end;  // by slice index, running max within the slice's track
  std::vector<uint16_t> rows;    // per lane of TimelineResult::lanes
};
TimelineTileIndex build_timeline_tile_index(const Trace& trace, const TimelineResult& r);

// Bounds of a tile request: px in [1, kMaxTilePixels], t0 < t1.
constexpr uint32_t kMaxTilePixels = 16384;

// The tile as JSON, times in ns relative to r.begin_ns:
//   {"begin_ns", "t0", "t1", "px", "ns_per_px", "exact", "slices", "runs", "names": [...],
//    "lanes": [{"name", "gpu", "pid", "tid", "rows", "total_slices",
//               "slices": [[ts, dur, row, name], ...],
//               "runs": [[ts, end, row, count, busy_ns], ...]}]}
// "slices"/"runs" at the top count the tile's items; a lane's slices and runs together hold every
// slice of the lane that overlaps [t0, t1) (ts < t1 and ts + dur > t0) exactly once.
std::string timeline_tile_json(const Trace& trace, const TimelineResult& r,
                               const TimelineTileIndex& index, int64_t t0, int64_t t1, uint32_t px);

}  // namespace mlprof
