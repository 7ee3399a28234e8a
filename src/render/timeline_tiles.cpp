#include "render/timeline_tiles.h"

#include <algorithm>
#include <array>
#include <climits>
#include <unordered_map>

#include "render/timeline_render.h"
#include "trace/json_writer.h"

namespace mlprof {

TimelineTileIndex build_timeline_tile_index(const Trace& trace, const TimelineResult& r) {
  const SliceTable& s = trace.slices;
  TimelineTileIndex x;
  x.depth.assign(s.size(), 0);
  x.max_end.assign(s.size(), INT64_MIN);
  std::vector<uint32_t> kept;
  std::vector<uint16_t> depth;
  for (const TimelineLane& l : r.lanes) {
    uint32_t b = trace.track_slice_begin[l.track], e = trace.track_slice_begin[l.track + 1];
    kept.clear();
    for (uint32_t i = b; i < e; ++i) kept.push_back(i);
    x.rows.push_back(timeline_display_depths(s, kept, depth));
    int64_t m = INT64_MIN;
    for (size_t k = 0; k < kept.size(); ++k) {
      x.depth[kept[k]] = depth[k];
      m = std::max(m, s.end(kept[k]));
      x.max_end[kept[k]] = m;
    }
  }
  return x;
}

std::string timeline_tile_json(const Trace& trace, const TimelineResult& r,
                               const TimelineTileIndex& index, int64_t t0, int64_t t1,
                               uint32_t px) {
  const SliceTable& s = trace.slices;
  const int64_t a = r.begin_ns + t0, b = r.begin_ns + t1;  // the window in trace time
  // One pixel in ns (at least 1): slices this long or longer are drawn as themselves.
  const double ns_per_px = static_cast<double>(t1 - t0) / px;
  const int64_t pixel = std::max<int64_t>(1, static_cast<int64_t>(ns_per_px));
  std::vector<std::string_view> names;
  std::unordered_map<std::string_view, uint32_t> name_index;
  struct Run {
    int64_t ts = 0, end = 0, busy = 0;
    uint64_t count = 0;
    uint32_t first = 0;  // the slice, when the run holds one
  };
  struct LaneOut {
    std::vector<std::array<int64_t, 4>> slices;
    std::vector<std::array<int64_t, 5>> runs;
  };
  std::vector<LaneOut> out(r.lanes.size());
  uint64_t total_slices = 0, total_runs = 0;
  std::vector<Run> open;
  for (size_t li = 0; li < r.lanes.size(); ++li) {
    const TimelineLane& l = r.lanes[li];
    uint32_t begin = trace.track_slice_begin[l.track], end = trace.track_slice_begin[l.track + 1];
    // The first slice whose track's running max end passes a: every slice before it ends by a.
    uint32_t i = static_cast<uint32_t>(
        std::upper_bound(index.max_end.begin() + begin, index.max_end.begin() + end, a) -
        index.max_end.begin());
    LaneOut& o = out[li];
    open.assign(index.rows.empty() ? 1 : std::max<size_t>(1, index.rows[li]), Run{});
    auto name_of = [&](uint32_t k) {
      std::string_view n = trace.str(s.name[k]);
      auto [it, inserted] = name_index.try_emplace(n, static_cast<uint32_t>(names.size()));
      if (inserted) names.push_back(n);
      return static_cast<int64_t>(it->second);
    };
    auto emit_slice = [&](uint32_t k) {
      o.slices.push_back({s.ts[k] - r.begin_ns, s.dur[k], index.depth[k], name_of(k)});
    };
    auto flush = [&](uint16_t d) {
      Run& run = open[d];
      if (run.count == 1)
        emit_slice(run.first);
      else if (run.count > 1)
        o.runs.push_back({run.ts - r.begin_ns, run.end - r.begin_ns, d,
                          static_cast<int64_t>(run.count), run.busy});
      run = Run{};
    };
    for (; i < end && s.ts[i] < b; ++i) {
      if (s.end(i) <= a) continue;  // ended before the window (a long slice kept max_end up)
      uint16_t d = index.depth[i];
      if (d >= open.size()) open.resize(d + 1);
      Run& run = open[d];
      if (s.dur[i] >= pixel) {
        flush(d);
        emit_slice(i);
        continue;
      }
      if (run.count > 0 && s.ts[i] - run.end < pixel) {  // closes a gap under a pixel: merged
        run.end = std::max(run.end, s.end(i));
        run.busy += s.dur[i];
        ++run.count;
        continue;
      }
      flush(d);
      open[d] = Run{s.ts[i], s.end(i), s.dur[i], 1, i};
    }
    for (size_t d = 0; d < open.size(); ++d) flush(static_cast<uint16_t>(d));
    total_slices += o.slices.size();
    total_runs += o.runs.size();
  }
  JsonWriter w;
  w.begin_object()
      .field("begin_ns", r.begin_ns)
      .field("t0", t0)
      .field("t1", t1)
      .field("px", static_cast<uint64_t>(px))
      .field("ns_per_px", ns_per_px)
      .field("exact", total_runs == 0)
      .field("slices", total_slices)
      .field("runs", total_runs);
  w.key("names").begin_array();
  for (std::string_view n : names) w.value(n);
  w.end_array();
  w.key("lanes").begin_array();
  for (size_t li = 0; li < r.lanes.size(); ++li) {
    const TimelineLane& l = r.lanes[li];
    w.begin_object()
        .field("name", l.name)
        .field("gpu", l.gpu)
        .field("pid", l.pid)
        .field("tid", l.tid)
        .field("rows", static_cast<uint64_t>(index.rows.empty() ? 0 : index.rows[li]))
        .field("total_slices", l.slices);
    w.key("slices").begin_array();
    for (const auto& v : out[li].slices) {
      w.begin_array();
      for (int64_t x : v) w.value(x);
      w.end_array();
    }
    w.end_array().key("runs").begin_array();
    for (const auto& v : out[li].runs) {
      w.begin_array();
      for (int64_t x : v) w.value(x);
      w.end_array();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return w.take();
}

}  // namespace mlprof
