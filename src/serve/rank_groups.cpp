#include "serve/rank_groups.h"

#include <algorithm>
#include <numeric>

namespace mlprof::serve {

RankGrouping group_rank_traces(const std::vector<RankTraceInfo>& traces, int64_t window_ns) {
  RankGrouping out;
  std::vector<size_t> order(traces.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // By start time, so a job's ranks join the group its earliest rank opened.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return traces[a].begin_ns < traces[b].begin_ns; });
  for (size_t i : order) {
    const RankTraceInfo& t = traces[i];
    if (t.rank < 0) {
      out.unrelated.emplace_back(i, "no distributedInfo (rank and world size)");
      continue;
    }
    // A rank without a world size (older Kineto) joins the jobs of unknown size (-1).
    if (t.world_size > 0 && t.rank >= t.world_size) {
      out.unrelated.emplace_back(i, "distributedInfo rank " + std::to_string(t.rank) +
                                        " is not below its world size " +
                                        std::to_string(t.world_size));
      continue;
    }
    // The first group of the same world size that started within the window and does not have
    // this rank yet; else a new job.
    RankGroup* home = nullptr;
    for (RankGroup& g : out.groups) {
      if (g.world_size != t.world_size || t.begin_ns - g.begin_ns > window_ns) continue;
      bool taken = std::any_of(g.traces.begin(), g.traces.end(),
                               [&](size_t k) { return traces[k].rank == t.rank; });
      if (!taken) {
        home = &g;
        break;
      }
    }
    if (home == nullptr) {
      out.groups.push_back(RankGroup{t.world_size, t.begin_ns, {}});
      home = &out.groups.back();
    }
    home->traces.push_back(i);
  }
  // In the input's (the listing's) order, as `mlprof ranks DIR` reads a folder of one job.
  for (RankGroup& g : out.groups) std::sort(g.traces.begin(), g.traces.end());
  std::stable_sort(out.groups.begin(), out.groups.end(),
                   [](const RankGroup& a, const RankGroup& b) {
                     return a.traces.size() != b.traces.size() ? a.traces.size() > b.traces.size()
                                                               : a.begin_ns < b.begin_ns;
                   });
  std::sort(out.unrelated.begin(), out.unrelated.end());
  return out;
}

}  // namespace mlprof::serve
