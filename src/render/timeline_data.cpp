#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "render/rank_timeline.h"
#include "render/timeline_render.h"

namespace mlprof {
namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_zigzag(std::string& out, int64_t v) {
  put_varint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

// gzip (not zlib or raw deflate) because browsers' DecompressionStream('gzip') reads it.
// zlib fails only when it cannot allocate its state: an internal error, not the trace's fault.
Result<std::string> gzip(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    return Status::error(StatusCode::kInternal, "cannot compress the timeline events (zlib init)");
  std::string out;
  out.resize(deflateBound(&zs, in.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return Status::error(StatusCode::kInternal, "cannot compress the timeline events (deflate)");
  return out;
}

// Integer args that identify one event (correlation, External id, Sequence number...): sent as
// per-slice delta columns, so the remaining args of most slices are a few shared sets.
bool is_id_key(std::string_view key) {
  std::string k(key);
  for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto ends = [&](std::string_view e) {
    return k.size() >= e.size() && k.compare(k.size() - e.size(), e.size(), e) == 0;
  };
  return k == "id" || ends(" id") || ends("_id") || k == "correlation" || k == "sequence number" ||
         k == "ev idx";
}

}  // namespace

// Rows for drawing: a slice nests in the open slice that contains it; one that starts inside the
// previous slice but ends after it by at most kRoundingNs (two kernels whose µs-rounded times
// touch) is that slice's sibling, so one stream's kernels never spill onto a second row.
constexpr int64_t kRoundingNs = 1000;
uint16_t timeline_display_depths(const SliceTable& s, const std::vector<uint32_t>& kept,
                                 std::vector<uint16_t>& depth) {
  depth.assign(kept.size(), 0);
  std::vector<uint32_t> stack;  // indexes into kept
  uint16_t max_depth = 0;
  for (size_t k = 0; k < kept.size(); ++k) {
    uint32_t i = kept[k];
    while (!stack.empty()) {
      uint32_t p = kept[stack.back()];
      bool ended = s.end(p) <= s.ts[i] && s.ts[p] != s.ts[i];
      bool rounding =
          s.end(i) > s.end(p) && s.end(p) - s.ts[i] <= kRoundingNs && s.ts[p] != s.ts[i];
      if (!ended && !rounding) break;
      stack.pop_back();
    }
    depth[k] = static_cast<uint16_t>(std::min<size_t>(stack.size(), 65535));
    max_depth = std::max<uint16_t>(max_depth, depth[k] + 1);
    stack.push_back(static_cast<uint32_t>(k));
  }
  return max_depth;
}

namespace {

bool keep_slice(const EncodedLane& l, size_t i) {
  const SliceTable& s = l.trace->slices;
  return s.ts[i] < l.end_ns && s.end(i) > l.begin_ns;
}

// Slice names' numbers in the string table, by name; the trace looked at last also by StringId,
// so that a slice costs an array read, not a string hash (a third of the timeline's encoding on
// a 1M-event trace, issue 33). Lanes of another trace reset the StringId cache.
struct NameIndex {
  static constexpr uint32_t kNone = UINT32_MAX;
  std::unordered_map<std::string_view, uint32_t> by_name;
  const Trace* trace = nullptr;
  std::vector<uint32_t> by_id;

  uint32_t& cached(const Trace& t, StringId id) {
    if (trace != &t) {
      trace = &t;
      by_id.assign(t.strings.size(), kNone);
    }
    return by_id[id];
  }
  uint32_t at(const Trace& t, StringId id) {
    uint32_t& c = cached(t, id);
    if (c == kNone) c = by_name.find(t.str(id))->second;
    return c;
  }
};

// String table: lane names, then slice names in order of first use (per trace: StringIds).
// Fills the lanes' name numbers and the slice names' index.
void put_strings(const std::vector<EncodedLane>& lanes, std::vector<uint32_t>& lane_name,
                 NameIndex& name_index, std::string& out) {
  std::vector<std::string_view> strings;
  for (const EncodedLane& l : lanes) {
    lane_name.push_back(static_cast<uint32_t>(strings.size()));
    strings.push_back(l.name);
  }
  for (const EncodedLane& l : lanes) {
    const Trace& t = *l.trace;
    for (uint32_t i = t.track_slice_begin[l.track]; i < t.track_slice_begin[l.track + 1]; ++i) {
      if (!keep_slice(l, i)) continue;
      uint32_t& c = name_index.cached(t, t.slices.name[i]);
      if (c != NameIndex::kNone) continue;
      std::string_view n = t.str(t.slices.name[i]);
      auto [it, inserted] =
          name_index.by_name.try_emplace(n, static_cast<uint32_t>(strings.size()));
      if (inserted) strings.push_back(n);
      c = it->second;
    }
  }
  put_varint(out, strings.size());
  for (std::string_view str : strings) {
    put_varint(out, str.size());
    out.append(str);
  }
}

// The lanes and their slices in columns: start deltas, durations, names, display depths. Fills
// each lane's kept slices and their starts as the browser decodes them.
void put_lane_slices(const std::vector<EncodedLane>& lanes, const std::vector<uint32_t>& lane_name,
                     NameIndex& name_index, std::vector<std::vector<uint32_t>>& lane_kept,
                     std::vector<std::vector<int64_t>>& lane_starts, std::string& out) {
  put_varint(out, lanes.size());
  std::vector<uint16_t> depth;
  for (size_t li = 0; li < lanes.size(); ++li) {
    const EncodedLane& l = lanes[li];
    const Trace& t = *l.trace;
    const SliceTable& s = t.slices;
    std::vector<uint32_t>& kept = lane_kept[li];
    for (uint32_t i = t.track_slice_begin[l.track]; i < t.track_slice_begin[l.track + 1]; ++i)
      if (keep_slice(l, i)) kept.push_back(i);
    uint16_t max_depth = timeline_display_depths(s, kept, depth);
    put_varint(out, lane_name[li]);
    out.push_back(l.gpu ? 1 : 0);
    put_varint(out, kept.size());
    put_varint(out, std::max<uint32_t>(max_depth, kept.empty() ? l.max_depth : 0));
    // Slices reaching out of the window are clipped to it (a whole-trace profiler span would
    // otherwise stretch the view far past the window).
    auto start = [&](uint32_t i) { return std::max(s.ts[i], l.begin_ns); };
    auto stop = [&](uint32_t i) { return std::min(s.end(i), l.end_ns); };
    int64_t prev = 0;
    std::vector<int64_t>& starts = lane_starts[li];
    for (uint32_t i : kept) {
      put_zigzag(out, start(i) - l.shift - prev);
      prev = start(i) - l.shift;
      starts.push_back(prev);
    }
    for (uint32_t i : kept)
      put_varint(out, static_cast<uint64_t>(std::max<int64_t>(0, stop(i) - start(i))));
    for (uint32_t i : kept) put_varint(out, name_index.at(t, s.name[i]));
    for (uint16_t d : depth) put_varint(out, d);
  }
}

// Flows between lanes of the same trace, with an end inside the lanes' window. Version 2:
// each end is the last slice of its lane starting at or before it (an index, as a delta from
// the previous flow's on that side) plus an offset from that slice's start: a launch flow's
// ends are slice starts, so a flow takes ~6 bytes that compress to a few bits instead of two
// 5-byte times (1.8 of a 1M-event report's 6.3 MB of gzip). Sorted by source, in columns.
void put_flows(const std::vector<EncodedLane>& lanes,
               const std::vector<std::vector<int64_t>>& lane_starts, std::string& out) {
  struct FlowEnds {
    uint32_t src_lane;
    int64_t src_ts;
    uint32_t dst_lane;
    int64_t dst_ts;
    bool operator<(const FlowEnds& o) const {
      return std::tie(src_lane, src_ts, dst_lane, dst_ts) <
             std::tie(o.src_lane, o.src_ts, o.dst_lane, o.dst_ts);
    }
  };
  std::vector<FlowEnds> flows;
  std::vector<const Trace*> traces;
  for (const EncodedLane& l : lanes)
    if (std::find(traces.begin(), traces.end(), l.trace) == traces.end()) traces.push_back(l.trace);
  for (const Trace* t : traces) {
    std::unordered_map<uint32_t, uint32_t> lane_of_track;
    for (size_t li = 0; li < lanes.size(); ++li)
      if (lanes[li].trace == t) lane_of_track[lanes[li].track] = static_cast<uint32_t>(li);
    const FlowTable& f = t->flows;
    for (size_t k = 0; k < f.size(); ++k) {
      auto src = lane_of_track.find(f.src_track[k]), dst = lane_of_track.find(f.dst_track[k]);
      if (src == lane_of_track.end() || dst == lane_of_track.end()) continue;
      const EncodedLane& ls = lanes[src->second];
      const EncodedLane& ld = lanes[dst->second];
      bool in = (f.src_ts[k] >= ls.begin_ns && f.src_ts[k] < ls.end_ns) ||
                (f.dst_ts[k] >= ld.begin_ns && f.dst_ts[k] < ld.end_ns);
      if (!in) continue;
      flows.push_back(
          FlowEnds{src->second, f.src_ts[k] - ls.shift, dst->second, f.dst_ts[k] - ld.shift});
    }
  }
  std::sort(flows.begin(), flows.end());
  // (slice index, offset) of time x on a lane: the last slice starting at or before x, else the
  // first (a negative offset); offset from 0 on a lane without slices.
  auto anchor = [&](uint32_t lane, int64_t x) -> std::pair<int64_t, int64_t> {
    const std::vector<int64_t>& st = lane_starts[lane];
    if (st.empty()) return {0, x};
    size_t i = std::upper_bound(st.begin(), st.end(), x) - st.begin();
    i = i == 0 ? 0 : i - 1;
    return {static_cast<int64_t>(i), x - st[i]};
  };
  std::string cols[6];
  int64_t prev_src = 0, prev_dst = 0;
  for (const FlowEnds& fe : flows) {
    auto [si, so] = anchor(fe.src_lane, fe.src_ts);
    auto [di, dof] = anchor(fe.dst_lane, fe.dst_ts);
    put_varint(cols[0], fe.src_lane);
    put_zigzag(cols[1], si - prev_src);
    put_zigzag(cols[2], so);
    put_varint(cols[3], fe.dst_lane);
    put_zigzag(cols[4], di - prev_dst);
    put_zigzag(cols[5], dof);
    prev_src = si;
    prev_dst = di;
  }
  put_varint(out, flows.size());
  for (const std::string& c : cols) out += c;
}

// The tables the args of all lanes share, and the scratch the lanes reuse.
struct ArgTables {
  std::vector<std::string> arg_strings;
  std::unordered_map<std::string, uint32_t> arg_string_index;
  std::vector<std::string> sets;  // each: varints (count, key, value, key, value...)
  std::unordered_map<std::string, uint32_t> set_index;
  std::vector<uint32_t> id_keys;  // arg string indexes, in order of first use
  std::string set_buf;
  std::vector<int64_t> id_prev;
  std::vector<char> id_seen;
  // Per arg key (StringId) of the trace looked at last: its arg string number (kNoKey: not yet
  // numbered) and whether it is an id key (-1: not yet looked at). Saves a string copy, a
  // lowercase copy and a hash per arg (issue 33); another trace's lanes reset them.
  static constexpr uint32_t kNoKey = UINT32_MAX;
  const Trace* key_trace = nullptr;
  std::vector<uint32_t> key_string;
  std::vector<int8_t> key_is_id;
};

// The key's cache entries for `t`.
void key_caches(ArgTables& at, const Trace& t) {
  if (at.key_trace == &t) return;
  at.key_trace = &t;
  at.key_string.assign(t.strings.size(), ArgTables::kNoKey);
  at.key_is_id.assign(t.strings.size(), -1);
}

uint32_t arg_string(ArgTables& at, std::string v) {
  auto [it, inserted] =
      at.arg_string_index.try_emplace(v, static_cast<uint32_t>(at.arg_strings.size()));
  if (inserted) at.arg_strings.push_back(std::move(v));
  return it->second;
}

// One lane's args block: in slice order a column of set numbers (0 = no args), then the id
// columns it uses, each after its key's number (see put_args).
std::string lane_args_block(const Trace& t, const std::vector<uint32_t>& kept, ArgTables& at) {
  const SliceTable& s = t.slices;
  std::vector<uint32_t>& id_keys = at.id_keys;
  std::vector<int64_t>& id_prev = at.id_prev;
  std::vector<char>& id_seen = at.id_seen;
  std::string& set_buf = at.set_buf;
  auto astr = [&](std::string v) { return arg_string(at, std::move(v)); };
  key_caches(at, t);
  auto key_str = [&](StringId k) {  // astr(key), numbered on first use as before
    uint32_t& c = at.key_string[k];
    if (c == ArgTables::kNoKey) c = astr(std::string(t.str(k)));
    return c;
  };
  std::string set_col;
  std::vector<std::string> cols_of_lane(id_keys.size());
  std::vector<char> id_used(id_keys.size(), 0);  // the lane has a value of that key
  std::fill(id_prev.begin(), id_prev.end(), 0);
  for (size_t k = 0; k < kept.size(); ++k) {
    uint32_t i = kept[k];
    set_buf.clear();
    uint32_t npairs = 0;
    std::string pairs;
    id_seen.assign(id_keys.size(), 0);
    for (uint32_t a = s.args_begin[i]; a < s.args_begin[i] + s.args_count[i]; ++a) {
      const Arg& arg = t.args[a];
      std::optional<int64_t> v =
          arg.type == ArgType::kInt || arg.type == ArgType::kUInt ? arg.as_int() : std::nullopt;
      int8_t& id_key = at.key_is_id[arg.key];
      if (v && id_key < 0) id_key = is_id_key(t.str(arg.key)) ? 1 : 0;
      if (v && id_key == 1) {
        uint32_t ks = key_str(arg.key);
        size_t c = std::find(id_keys.begin(), id_keys.end(), ks) - id_keys.begin();
        if (c == id_keys.size()) {
          id_keys.push_back(ks);
          id_prev.push_back(0);
          id_seen.push_back(0);
          id_used.push_back(0);
          cols_of_lane.emplace_back();
          for (size_t j = 0; j < k; ++j) put_varint(cols_of_lane.back(), 0);
        }
        if (id_seen[c]) continue;  // a repeated key: the first value is the one shown
        id_seen[c] = 1;
        id_used[c] = 1;
        put_varint(cols_of_lane[c], ((static_cast<uint64_t>(*v - id_prev[c]) << 1) ^
                                     static_cast<uint64_t>((*v - id_prev[c]) >> 63)) +
                                        1);
        id_prev[c] = *v;
        continue;
      }
      put_varint(pairs, key_str(arg.key));
      put_varint(pairs, astr(t.arg_text(arg)));
      ++npairs;
    }
    for (size_t c = 0; c < id_keys.size(); ++c)
      if (!id_seen[c]) put_varint(cols_of_lane[c], 0);
    if (npairs == 0) {
      put_varint(set_col, 0);
      continue;
    }
    put_varint(set_buf, npairs);
    set_buf += pairs;
    auto [it, inserted] = at.set_index.try_emplace(set_buf, static_cast<uint32_t>(at.sets.size()));
    if (inserted) at.sets.push_back(set_buf);
    put_varint(set_col, it->second + 1);
  }
  // The lane's block: its set column, then the id columns it uses, each after its key's
  // number; the block's size goes first so the browser can step over lanes unread.
  std::string block = std::move(set_col);
  std::vector<size_t> used;
  for (size_t c = 0; c < cols_of_lane.size(); ++c)
    if (id_used[c]) used.push_back(c);
  put_varint(block, used.size());
  for (size_t c : used) {
    put_varint(block, c);
    block += cols_of_lane[c];
  }
  return block;
}

// Version 3: the slices' args, for the args panel. A table of arg strings; the distinct sets
// of (key, value) pairs other than ids; the id keys; then per lane a block (its byte size
// first): in slice order a column of set numbers (0 = no args), the number of id columns, and
// per id key the lane uses, the key's number and a column of 0 (absent) or 1 + the zigzag
// delta from the lane's previous value of that key. The browser decodes a lane's block only
// when a slice of it is clicked.
void put_args(const std::vector<EncodedLane>& lanes,
              const std::vector<std::vector<uint32_t>>& lane_kept, std::string& out) {
  ArgTables at;
  std::vector<std::string> lane_blocks;
  for (size_t li = 0; li < lanes.size(); ++li)
    lane_blocks.push_back(lane_args_block(*lanes[li].trace, lane_kept[li], at));
  put_varint(out, at.arg_strings.size());
  for (const std::string& str : at.arg_strings) {
    put_varint(out, str.size());
    out += str;
  }
  put_varint(out, at.sets.size());
  for (const std::string& set : at.sets) out += set;
  put_varint(out, at.id_keys.size());
  for (uint32_t k : at.id_keys) put_varint(out, k);
  for (const std::string& block : lane_blocks) {
    put_varint(out, block.size());
    out += block;
  }
}

// The encoder behind both entry points: lanes from one or several traces, each slice's time
// shifted by its lane's `shift` (the time that becomes 0 in the browser) and kept when it
// overlaps the lane's [begin, end) window.
Result<std::string> encode_lanes(const std::vector<EncodedLane>& lanes, int64_t header_begin) {
  std::string out = "MLTL";
  put_varint(out, 3);
  put_zigzag(out, header_begin);
  std::vector<uint32_t> lane_name;
  NameIndex name_index;
  put_strings(lanes, lane_name, name_index, out);
  std::vector<std::vector<uint32_t>> lane_kept(lanes.size());
  std::vector<std::vector<int64_t>> lane_starts(lanes.size());  // as the browser decodes them
  put_lane_slices(lanes, lane_name, name_index, lane_kept, lane_starts, out);
  put_flows(lanes, lane_starts, out);
  put_args(lanes, lane_kept, out);
  return gzip(out);
}

}  // namespace

Result<std::string> encode_timeline_events(const Trace& trace, const TimelineResult& r) {
  std::vector<EncodedLane> lanes;
  lanes.reserve(r.lanes.size());
  for (const TimelineLane& l : r.lanes)
    lanes.push_back(
        {&trace, l.track, l.name, l.gpu, l.max_depth, r.begin_ns, INT64_MIN, INT64_MAX});
  return encode_lanes(lanes, r.begin_ns);
}

Result<std::string> encode_lane_events(const std::vector<EncodedLane>& lanes) {
  return encode_lanes(lanes, 0);
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace mlprof
