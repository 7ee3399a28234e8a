#include "render/rank_timeline.h"

#include <algorithm>
#include <climits>
#include <memory>

namespace mlprof {

namespace {

struct RankView {
  const Trace* trace = nullptr;
  int32_t rank = 0;
  const StepsResult* steps = nullptr;
  const TimelineResult* timeline = nullptr;
  int64_t begin = 0, end = 0;  // the window on this rank's clock
};

// [begin, end) of steps first..first+count-1 on one rank, by step number; false when the rank
// lacks one of them.
bool step_window(const StepsResult& s, const std::vector<int64_t>& numbers, int64_t& begin,
                 int64_t& end) {
  begin = INT64_MAX;
  end = INT64_MIN;
  for (int64_t n : numbers) {
    auto it = std::find_if(s.steps.begin(), s.steps.end(),
                           [&](const StepInfo& st) { return st.number == n; });
    if (it == s.steps.end()) return false;
    begin = std::min(begin, it->begin_ns);
    end = std::max(end, it->begin_ns + it->dur_ns);
  }
  return begin < end;
}

uint64_t slices_in(const RankView& v) {
  uint64_t n = 0;
  const SliceTable& s = v.trace->slices;
  for (const TimelineLane& l : v.timeline->lanes)
    for (uint32_t i = v.trace->track_slice_begin[l.track];
         i < v.trace->track_slice_begin[l.track + 1]; ++i)
      n += s.ts[i] < v.end && s.end(i) > v.begin;
  return n;
}

}  // namespace

Result<std::string> encode_rank_timeline(AnalysisSet& set, const RankLoader& load,
                                         RankTimelineWindow& window) {
  std::vector<const Trace*> traces = set.rank_traces();
  std::vector<Trace> loaded;  // a set of summaries: the other ranks, reloaded here
  if (traces.empty()) {
    const std::string& focus_source = set.trace().meta.source;
    std::vector<const RankStats*> others;
    for (const RankStats& r : set.ranks().ranks)
      if (r.source != focus_source) others.push_back(&r);
    std::sort(others.begin(), others.end(),
              [](const RankStats* a, const RankStats* b) { return a->rank < b->rank; });
    if (others.size() + 1 > kRankTimelineMaxRanks) {
      window.ranks_left_out = others.size() + 1 - kRankTimelineMaxRanks;
      others.resize(kRankTimelineMaxRanks - 1);
    }
    loaded.reserve(others.size());
    for (const RankStats* r : others) {
      if (!load) break;
      Result<Trace> t = load(r->source);
      if (!t) {
        ++window.ranks_left_out;
        continue;
      }
      if (t->meta.rank < 0) t->meta.rank = r->rank;
      loaded.push_back(std::move(t.value()));
    }
    traces.push_back(&set.trace());
    for (const Trace& t : loaded) traces.push_back(&t);
  }
  // Ranks drawn: the one analyzed in depth, then the others in rank order, at most kMaxRanks.
  std::vector<const Trace*> order(traces.begin(), traces.end());
  auto rank_of = [&](const Trace* t) {
    return t->meta.rank >= 0
               ? t->meta.rank
               : static_cast<int32_t>(std::find(traces.begin(), traces.end(), t) - traces.begin());
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Trace* a, const Trace* b) { return rank_of(a) < rank_of(b); });
  if (order.size() > kRankTimelineMaxRanks) {
    auto focus = std::find(order.begin(), order.end(), &set.trace());
    std::vector<const Trace*> kept(order.begin(), order.begin() + kRankTimelineMaxRanks);
    if (focus - order.begin() >= static_cast<ptrdiff_t>(kRankTimelineMaxRanks))
      kept.back() = *focus;
    window.ranks_left_out = order.size() - kept.size();
    order = std::move(kept);
  }
  // Each rank through the analysis stage (the focus rank's results are the set's own).
  std::vector<std::unique_ptr<AnalysisSet>> own;
  std::vector<RankView> views;
  for (const Trace* t : order) {
    RankView v;
    v.trace = t;
    v.rank = rank_of(t);
    if (t == &set.trace()) {
      v.steps = &set.steps();
      v.timeline = &set.timeline();
    } else {
      own.push_back(std::make_unique<AnalysisSet>(*t, set.options()));  // the set's options
      v.steps = &own.back()->steps();
      v.timeline = &own.back()->timeline();
    }
    views.push_back(v);
  }
  // The window: up to kMaxSteps steps of the focus rank (the same step numbers on every rank,
  // each aligned at its own start), fewer while the slices exceed the budget; without steps,
  // each trace from its start, as long as the shortest budget allows.
  const StepsResult& focus_steps = set.steps();
  size_t want = std::min(kRankTimelineMaxSteps, focus_steps.steps.size());
  for (; want > 0; --want) {
    std::vector<int64_t> numbers;
    for (size_t k = 0; k < want; ++k) numbers.push_back(focus_steps.steps[k].number);
    bool all = true;
    uint64_t total = 0;
    for (RankView& v : views) {
      if (!step_window(*v.steps, numbers, v.begin, v.end)) {
        all = false;
        break;
      }
      total += slices_in(v);
    }
    if (all && (total <= kRankTimelineMaxSlices || want == 1)) {
      window.steps = numbers;
      break;
    }
  }
  if (window.steps.empty()) {
    for (RankView& v : views) {
      v.begin = v.timeline->begin_ns;
      v.end = v.timeline->end_ns;
    }
  }
  uint64_t total = 0;
  for (const RankView& v : views) total += slices_in(v);
  if (total > kRankTimelineMaxSlices) {  // still too many: cut every window to the same share
    double keep = static_cast<double>(kRankTimelineMaxSlices) / static_cast<double>(total);
    for (RankView& v : views)
      v.end = v.begin + static_cast<int64_t>(static_cast<double>(v.end - v.begin) * keep);
  }
  std::vector<EncodedLane> lanes;
  window.slices = 0;
  for (const RankView& v : views) {
    window.ranks.push_back(v.rank);
    window.window_ns = std::max(window.window_ns, v.end - v.begin);
    window.slices += slices_in(v);
    for (const TimelineLane& l : v.timeline->lanes)
      lanes.push_back({v.trace, l.track, "rank " + std::to_string(v.rank) + " · " + l.name, l.gpu,
                       l.max_depth, v.begin, v.begin, v.end});
  }
  return encode_lane_events(lanes);
}

}  // namespace mlprof
