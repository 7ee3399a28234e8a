// The report's Timeline for a directory of rank traces: the lanes of every rank (CPU threads, GPU
// streams) in one view, over a bounded window of steps, each rank's window aligned at its own
// start (ranks' clocks differ; the same step numbers are compared).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlprof/analysis_set.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

// One lane of the encoded events (render/timeline_data.cpp's format): slices of `track` that
// overlap [begin_ns, end_ns), their times minus `shift`.
struct EncodedLane {
  const Trace* trace = nullptr;
  uint32_t track = 0;
  std::string name;
  bool gpu = false;
  uint32_t max_depth = 0;
  int64_t shift = 0;
  int64_t begin_ns = 0, end_ns = 0;
};
Result<std::string> encode_lane_events(const std::vector<EncodedLane>& lanes);

// What the window holds, for the page's data (the Timeline tab says it).
struct RankTimelineWindow {
  std::vector<int32_t> ranks;  // in lane order
  std::vector<int64_t> steps;  // step numbers in the window (empty: from each trace's start)
  int64_t window_ns = 0;       // the longest rank's window
  uint64_t slices = 0;         // slices drawn, all ranks
  size_t ranks_left_out = 0;   // beyond kMaxRanks
};

inline constexpr size_t kRankTimelineMaxRanks = 8;  // traces held in memory while encoding
inline constexpr uint64_t kRankTimelineMaxSlices = 1'000'000;  // all ranks together
inline constexpr size_t kRankTimelineMaxSteps = 3;

// The encoded events of a rank set's timeline (gzip bytes), and what its window holds.
// A set made from summaries (no rank traces in memory) loads the other ranks with `load`.
Result<std::string> encode_rank_timeline(AnalysisSet& set, const RankLoader& load,
                                         RankTimelineWindow& window);

}  // namespace mlprof
