// The traces of a served directory grouped by the job they are from, so that the dashboard's
// Ranks view compares the ranks of one job only (issue 28 item 6). A trace belongs to a job by
// its distributedInfo: the world size, the rank ids (one job has each rank once) and the start
// time (a job's ranks start within `window_ns` of its first one). A trace with a rank but no
// world size joins jobs of unknown size (-1). Traces without a rank are unrelated: listed, never
// analysed as ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlprof::serve {

struct RankTraceInfo {
  std::string name;
  int32_t rank = -1;        // distributedInfo.rank, else the file name's (-1 when neither)
  int32_t world_size = -1;  // distributedInfo.world_size (-1 when absent)
  int64_t begin_ns = 0;     // the trace's first event, as recorded
};

struct RankGroup {
  int32_t world_size = -1;
  int64_t begin_ns = 0;        // earliest start of its traces
  std::vector<size_t> traces;  // indexes into the input, in input order
};

struct RankGrouping {
  std::vector<RankGroup> groups;                          // most traces first, then earliest
  std::vector<std::pair<size_t, std::string>> unrelated;  // (index, why)
};

// Ranks of one job start their profiles close together: 10 minutes apart at most.
constexpr int64_t kJobStartWindowNs = 600'000'000'000;

RankGrouping group_rank_traces(const std::vector<RankTraceInfo>& traces,
                               int64_t window_ns = kJobStartWindowNs);

}  // namespace mlprof::serve
