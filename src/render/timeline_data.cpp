#include <zlib.h>

#include <stdexcept>
#include <unordered_map>

#include "mlprof/render/timeline_render.h"

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
std::string gzip(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out;
  out.resize(deflateBound(&zs, in.size()) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

}  // namespace

std::string encode_timeline_events(const Trace& trace, const TimelineResult& r) {
  const SliceTable& s = trace.slices;
  std::string out = "MLTL";
  put_varint(out, 1);
  put_zigzag(out, r.begin_ns);

  // String table: lane names, then slice names in order of first use.
  std::vector<std::string_view> strings;
  std::unordered_map<StringId, uint32_t> name_index;
  std::vector<uint32_t> lane_name;
  for (const TimelineLane& l : r.lanes) {
    lane_name.push_back(static_cast<uint32_t>(strings.size()));
    strings.push_back(l.name);
  }
  for (const TimelineLane& l : r.lanes) {
    for (uint32_t i = trace.track_slice_begin[l.track]; i < trace.track_slice_begin[l.track + 1];
         ++i) {
      auto [it, inserted] =
          name_index.try_emplace(s.name[i], static_cast<uint32_t>(strings.size()));
      if (inserted) strings.push_back(trace.str(s.name[i]));
    }
  }
  put_varint(out, strings.size());
  for (std::string_view str : strings) {
    put_varint(out, str.size());
    out.append(str);
  }

  std::unordered_map<uint32_t, uint32_t> lane_of_track;
  put_varint(out, r.lanes.size());
  for (size_t li = 0; li < r.lanes.size(); ++li) {
    const TimelineLane& l = r.lanes[li];
    lane_of_track[l.track] = static_cast<uint32_t>(li);
    uint32_t begin = trace.track_slice_begin[l.track], end = trace.track_slice_begin[l.track + 1];
    put_varint(out, lane_name[li]);
    out.push_back(l.gpu ? 1 : 0);
    put_varint(out, end - begin);
    put_varint(out, l.max_depth);
    int64_t prev = r.begin_ns;
    for (uint32_t i = begin; i < end; ++i) {
      put_zigzag(out, s.ts[i] - prev);
      prev = s.ts[i];
    }
    for (uint32_t i = begin; i < end; ++i)
      put_varint(out, static_cast<uint64_t>(std::max<int64_t>(0, s.dur[i])));
    for (uint32_t i = begin; i < end; ++i) put_varint(out, name_index[s.name[i]]);
    for (uint32_t i = begin; i < end; ++i) put_varint(out, s.depth[i]);
  }

  std::string flows;
  uint64_t nflows = 0;
  const FlowTable& f = trace.flows;
  for (size_t k = 0; k < f.size(); ++k) {
    auto src = lane_of_track.find(f.src_track[k]), dst = lane_of_track.find(f.dst_track[k]);
    if (src == lane_of_track.end() || dst == lane_of_track.end()) continue;
    put_varint(flows, src->second);
    put_zigzag(flows, f.src_ts[k] - r.begin_ns);
    put_varint(flows, dst->second);
    put_zigzag(flows, f.dst_ts[k] - r.begin_ns);
    ++nflows;
  }
  put_varint(out, nflows);
  out += flows;
  return gzip(out);
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
