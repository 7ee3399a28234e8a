// Writes the Trace as Perfetto TracePackets (field numbers from Perfetto's trace_packet.proto,
// track_event.proto, track_descriptor.proto, debug_annotation.proto, interned_data.proto).
// The encoding (varints, little-endian fixed64, length prefixes) is written here rather than
// with libprotobuf: mlprof_export is linked into every program that uses the recorder, which
// must not gain a libprotobuf dependency for it. The reader (src/import) uses libprotobuf-lite.
#include "mlprof/perfetto_export.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/output_file.h"

namespace mlprof {

namespace {

// A message being built: fields appended in any order (protobuf allows it).
class Msg {
 public:
  Msg& varint(uint32_t field, uint64_t v) {
    put_tag(field, 0);
    put_varint(v);
    return *this;
  }
  Msg& sint(uint32_t field, int64_t v) { return varint(field, static_cast<uint64_t>(v)); }
  Msg& fixed64(uint32_t field, uint64_t v) {
    put_tag(field, 1);
    for (int i = 0; i < 8; ++i) buf_ += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
  Msg& dbl(uint32_t field, double d) {
    uint64_t v;
    std::memcpy(&v, &d, 8);
    return fixed64(field, v);
  }
  Msg& bytes(uint32_t field, std::string_view s) {
    put_tag(field, 2);
    put_varint(s.size());
    buf_.append(s);
    return *this;
  }
  Msg& msg(uint32_t field, const Msg& m) { return bytes(field, m.buf_); }
  const std::string& data() const { return buf_; }
  bool empty() const { return buf_.empty(); }
  void clear() { buf_.clear(); }

 private:
  void put_tag(uint32_t field, uint32_t wt) { put_varint((uint64_t{field} << 3) | wt); }
  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      buf_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf_ += static_cast<char>(v);
  }
  std::string buf_;
};

// Field numbers.
constexpr uint32_t kTracePacket = 1;
constexpr uint32_t kPktTimestamp = 8, kPktSeqId = 10, kPktTrackEvent = 11, kPktInterned = 12,
                   kPktSeqFlags = 13, kPktTrackDescriptor = 60;
constexpr uint32_t kSeqCleared = 1, kSeqNeedsState = 2;
constexpr uint32_t kTdUuid = 1, kTdName = 2, kTdProcess = 3, kTdThread = 4, kTdParent = 5,
                   kTdCounter = 8, kTdDescription = 14;
constexpr uint32_t kPdPid = 1, kPdName = 6;
constexpr uint32_t kThPid = 1, kThTid = 2, kThName = 5;
constexpr uint32_t kTeCategoryIids = 3, kTeDebug = 4, kTeType = 9, kTeNameIid = 10,
                   kTeTrackUuid = 11, kTeCategories = 22, kTeName = 23, kTeDoubleCounter = 44,
                   kTeFlowIds = 47, kTeTerminatingFlowIds = 48;
constexpr uint32_t kTypeBegin = 1, kTypeEnd = 2, kTypeInstant = 3, kTypeCounter = 4;
constexpr uint32_t kDaNameIid = 1, kDaNameString = 10, kDaBool = 2, kDaUint = 3, kDaInt = 4,
                   kDaDouble = 5, kDaString = 6, kDaJson = 9;
constexpr uint32_t kIdCategories = 1, kIdNames = 2, kIdDebugNames = 3;

constexpr uint32_t kSequence = 1;

// What each lane's text says, so that the importer folds overlap tracks back into their track.
constexpr std::string_view kOverlapDescription = "mlprof: overlapping slices of the parent track";
constexpr std::string_view kGpuStreamDescription =
    "mlprof: a GPU stream (pid = device, tid = stream)";
// Allocated bytes per device, drawn from the [memory] instants (which the importer reads back;
// it skips this derived counter).
constexpr std::string_view kMemoryCounterDescription =
    "mlprof: allocated bytes per device, from the [memory] instants";
// Memory events go out as instants and counter values; internal kinds until written.
constexpr uint32_t kKindMemory = 100, kKindMemoryCounter = 101;
constexpr uint32_t kCdUnit = 3, kUnitSizeBytes = 3;

struct Ev {
  int64_t ts;
  uint64_t seq;    // emission order within a lane (ties at equal ts keep it)
  uint32_t kind;   // kTypeBegin, kTypeEnd, kTypeInstant, kTypeCounter
  uint32_t index;  // slice / instant / counter row
  uint64_t track_uuid;
};

class Writer {
 public:
  Writer(const Trace& t, std::ostream& out) : t_(t), out_(out) {}
  PerfettoExportStats run();

 private:
  void packet(Msg& p) {
    p.varint(kPktSeqId, kSequence);
    Msg wrap;
    wrap.msg(kTracePacket, p);
    out_.write(wrap.data().data(), static_cast<std::streamsize>(wrap.data().size()));
    ++stats_.packets;
  }
  uint64_t process_uuid(uint32_t p) const { return (uint64_t{1} << 40) + p; }
  uint64_t track_uuid(uint32_t t) const { return (uint64_t{2} << 40) + t; }
  uint64_t lane_uuid(uint32_t t, uint32_t lane) const {
    return (uint64_t{3} << 40) + (uint64_t{lane} << 24) + t;
  }
  uint64_t series_uuid(uint32_t s) const { return (uint64_t{4} << 40) + s; }
  uint64_t memory_uuid(uint32_t d) const { return (uint64_t{5} << 40) + d; }
  void memory_tracks(std::vector<Ev>& evs, int64_t shift, uint64_t& seq);
  std::vector<double> memory_value_;  // per memory row: its device's allocated bytes after it
  // Interning: iid of a string in table k (0 categories, 1 names, 2 annotation names).
  uint64_t iid(int k, StringId s, Msg& interned) {
    auto& m = iids_[k];
    auto it = m.find(s);
    if (it != m.end()) return it->second;
    uint64_t id = m.size() + 1;
    m.emplace(s, id);
    Msg e;
    e.varint(1, id).bytes(2, t_.str(s));
    interned.msg(k == 0 ? kIdCategories : k == 1 ? kIdNames : kIdDebugNames, e);
    return id;
  }
  void add_args(Msg& te, uint32_t begin, uint32_t count, Msg& interned);
  void memory_instant(Msg& te, uint32_t i);
  void descriptors();

  const Trace& t_;
  std::ostream& out_;
  PerfettoExportStats stats_;
  std::unordered_map<StringId, uint64_t> iids_[3];
  bool first_ = true;
};

void Writer::add_args(Msg& te, uint32_t begin, uint32_t count, Msg& interned) {
  for (uint32_t i = begin; i < begin + count; ++i) {
    const Arg& a = t_.args[i];
    Msg d;
    d.varint(kDaNameIid, iid(2, a.key, interned));
    switch (a.type) {
      case ArgType::kBool:
        d.varint(kDaBool, a.b ? 1 : 0);
        break;
      case ArgType::kInt:
        d.sint(kDaInt, a.i);
        break;
      case ArgType::kUInt:
        d.varint(kDaUint, a.u);
        break;
      case ArgType::kDouble:
        d.dbl(kDaDouble, a.d);
        break;
      case ArgType::kString:
        d.bytes(kDaString, t_.str(a.s));
        break;
      case ArgType::kJson:
        d.bytes(kDaJson, t_.str(a.s));
        break;
      case ArgType::kNull:
        d.bytes(kDaJson, "null");
        break;
    }
    te.msg(kTeDebug, d);
  }
}

// A memory event as Kineto's JSON has it: a "[memory]" instant whose args carry the event (names
// written out: the trace's string pool may not hold them, and it is not ours to grow).
void Writer::memory_instant(Msg& te, uint32_t i) {
  const MemoryTable& m = t_.memory;
  auto name = [&](std::string_view text) {
    Msg e;
    e.bytes(kDaNameString, text);
    return e;
  };
  te.bytes(kTeName, "[memory]").bytes(kTeCategories, "cpu_instant_event");
  te.msg(kTeDebug, name("Device Type").sint(kDaInt, m.device_type[i]));
  te.msg(kTeDebug, name("Device Id").sint(kDaInt, m.device_id[i]));
  te.msg(kTeDebug, name("Addr").varint(kDaUint, m.addr[i]));
  te.msg(kTeDebug, name("Bytes").sint(kDaInt, m.bytes[i]));
  if (m.total_allocated[i] >= 0)
    te.msg(kTeDebug, name("Total Allocated").sint(kDaInt, m.total_allocated[i]));
  if (m.total_reserved[i] >= 0)
    te.msg(kTeDebug, name("Total Reserved").sint(kDaInt, m.total_reserved[i]));
}

void Writer::descriptors() {
  Msg first;
  first.varint(kPktSeqFlags, kSeqCleared);
  for (uint32_t p = 0; p < t_.processes.size(); ++p) {
    const Process& pr = t_.processes[p];
    Msg pd, td, pkt;
    pd.sint(kPdPid, pr.pid);
    std::string_view name = pr.name ? t_.str(pr.name) : pr.labeled ? t_.str(pr.label) : "";
    if (!name.empty()) pd.bytes(kPdName, name);
    td.varint(kTdUuid, process_uuid(p)).msg(kTdProcess, pd);
    pkt.msg(kPktTrackDescriptor, td);
    if (first_) {
      pkt.varint(kPktSeqFlags, kSeqCleared);
      first_ = false;
    }
    packet(pkt);
  }
  for (uint32_t k = 0; k < t_.tracks.size(); ++k) {
    const Track& tr = t_.tracks[k];
    Msg td, pkt;
    td.varint(kTdUuid, track_uuid(k)).varint(kTdParent, process_uuid(tr.process));
    std::string name = tr.name      ? std::string(t_.str(tr.name))
                       : tr.labeled ? std::string(t_.str(tr.label))
                                    : "";
    if (tr.kind == TrackKind::kAsync) {
      td.bytes(kTdName, name.empty() ? "async" : name);
    } else {
      // GPU streams too: a thread (pid = device, tid = stream), as Kineto's JSON shows them.
      Msg th;
      th.sint(kThPid, tr.pid).sint(kThTid, tr.tid);
      if (!name.empty()) th.bytes(kThName, name);
      td.msg(kTdThread, th);
      if (tr.kind == TrackKind::kGpuStream) td.bytes(kTdDescription, kGpuStreamDescription);
    }
    pkt.msg(kPktTrackDescriptor, td);
    if (first_) {
      pkt.varint(kPktSeqFlags, kSeqCleared);
      first_ = false;
    }
    packet(pkt);
  }
  for (uint32_t s = 0; s < t_.counter_series.size(); ++s) {
    const CounterSeries& cs = t_.counter_series[s];
    Msg td, cd, pkt;
    cd.varint(1, 0);  // COUNTER_UNSPECIFIED
    if (cs.unit) cd.bytes(6, t_.str(cs.unit));
    td.varint(kTdUuid, series_uuid(s))
        .varint(kTdParent, process_uuid(cs.process))
        .bytes(kTdName, t_.str(cs.name))
        .msg(kTdCounter, cd);
    pkt.msg(kPktTrackDescriptor, td);
    packet(pkt);
  }
}

// One counter track per device (type, id) with its allocated bytes after each event: the
// allocator's own total where the event records it, else the running sum of the events' bytes.
void Writer::memory_tracks(std::vector<Ev>& evs, int64_t shift, uint64_t& seq) {
  const MemoryTable& m = t_.memory;
  if (m.size() == 0) return;
  std::vector<uint32_t> order(m.size());
  for (uint32_t i = 0; i < m.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return m.ts[a] < m.ts[b]; });
  std::unordered_map<uint32_t, uint32_t> device_track;  // (type << 16 | id) -> counter index
  std::vector<int64_t> running;
  memory_value_.assign(m.size(), 0);
  for (uint32_t i : order) {
    uint32_t key = (static_cast<uint32_t>(static_cast<uint8_t>(m.device_type[i])) << 16) |
                   static_cast<uint16_t>(m.device_id[i]);
    auto [it, added] = device_track.emplace(key, static_cast<uint32_t>(running.size()));
    if (added) {
      running.push_back(0);
      std::string dev = m.device_type[i] == static_cast<int8_t>(DeviceType::kCpu)    ? "CPU"
                        : m.device_type[i] == static_cast<int8_t>(DeviceType::kCuda) ? "GPU"
                                                                                     : "device";
      if (m.device_id[i] >= 0) dev += " " + std::to_string(m.device_id[i]);
      Msg td, cd, pkt;
      cd.varint(kCdUnit, kUnitSizeBytes);
      td.varint(kTdUuid, memory_uuid(it->second))
          .varint(kTdParent, process_uuid(t_.tracks[m.track[i]].process))
          .bytes(kTdName, "memory allocated: " + dev)
          .bytes(kTdDescription, kMemoryCounterDescription)
          .msg(kTdCounter, cd);
      pkt.msg(kPktTrackDescriptor, td);
      packet(pkt);
    }
    int64_t& total = running[it->second];
    total += m.bytes[i];
    memory_value_[i] =
        static_cast<double>(m.total_allocated[i] >= 0 ? m.total_allocated[i] : total);
    evs.push_back({m.ts[i] - shift, seq++, kKindMemory, i, track_uuid(m.track[i])});
    evs.push_back({m.ts[i] - shift, seq++, kKindMemoryCounter, i, memory_uuid(it->second)});
  }
}

// Slices, per track, in lanes: a slice stays on the track while it nests in what is open
// there; one that overlaps without nesting goes to the first lane where it does. Returns the
// lanes per track; slice_lane gets each slice's.
std::vector<uint32_t> assign_lanes(const Trace& t, std::vector<uint32_t>& slice_lane) {
  const SliceTable& s = t.slices;
  std::vector<std::vector<uint32_t>> lanes;  // open slices per lane (a stack)
  std::vector<uint32_t> lane_count(t.tracks.size(), 1);
  for (uint32_t k = 0; k + 1 < t.track_slice_begin.size(); ++k) {
    lanes.assign(1, {});
    for (uint32_t i = t.track_slice_begin[k]; i < t.track_slice_begin[k + 1]; ++i) {
      int64_t start = s.ts[i], end = s.end(i);
      size_t lane = 0;
      for (;; ++lane) {
        if (lane == lanes.size()) lanes.emplace_back();
        auto& st = lanes[lane];
        while (!st.empty() && s.end(st.back()) <= start) st.pop_back();
        if (st.empty() || end <= s.end(st.back())) break;
      }
      lanes[lane].push_back(i);
      slice_lane[i] = static_cast<uint32_t>(lane);
      lane_count[k] = std::max<uint32_t>(lane_count[k], static_cast<uint32_t>(lane + 1));
    }
  }
  return lane_count;
}

PerfettoExportStats Writer::run() {
  descriptors();
  const SliceTable& s = t_.slices;
  // Negative times cannot be written (the packet timestamp is unsigned): shift everything.
  int64_t shift = std::min<int64_t>(0, t_.begin_ns());
  std::vector<Ev> evs;
  evs.reserve(2 * s.size() + t_.instants.size() + t_.counters.size());
  uint64_t seq = 0;
  std::vector<uint32_t> slice_lane(s.size(), 0);
  std::vector<uint32_t> lane_count = assign_lanes(t_, slice_lane);
  // Begin and end events in nesting order per lane: a DFS over each lane's slices.
  for (uint32_t k = 0; k + 1 < t_.track_slice_begin.size(); ++k) {
    for (uint32_t lane = 0; lane < lane_count[k]; ++lane) {
      uint64_t uuid = lane == 0 ? track_uuid(k) : lane_uuid(k, lane);
      std::vector<uint32_t> open;
      auto close_until = [&](int64_t t) {
        while (!open.empty() && s.end(open.back()) <= t) {
          evs.push_back({s.end(open.back()) - shift, seq++, kTypeEnd, open.back(), uuid});
          open.pop_back();
        }
      };
      for (uint32_t i = t_.track_slice_begin[k]; i < t_.track_slice_begin[k + 1]; ++i) {
        if (slice_lane[i] != lane) continue;
        close_until(s.ts[i]);
        evs.push_back({s.ts[i] - shift, seq++, kTypeBegin, i, uuid});
        open.push_back(i);
      }
      close_until(INT64_MAX);
    }
    if (lane_count[k] > 1) {
      for (uint32_t lane = 1; lane < lane_count[k]; ++lane) {
        Msg td, pkt;
        const Track& tr = t_.tracks[k];
        std::string name = (tr.name ? std::string(t_.str(tr.name)) : std::string("track")) +
                           " (overlap " + std::to_string(lane) + ")";
        td.varint(kTdUuid, lane_uuid(k, lane))
            .varint(kTdParent, track_uuid(k))
            .bytes(kTdName, name)
            .bytes(kTdDescription, kOverlapDescription);
        pkt.msg(kPktTrackDescriptor, td);
        packet(pkt);
        ++stats_.overlap_tracks;
      }
    }
  }
  for (uint32_t i = 0; i < t_.instants.size(); ++i) {
    uint8_t scope = t_.instants.scope[i];
    uint32_t tr = t_.instants.track[i];
    uint64_t uuid =
        scope == 'p' || scope == 'g' ? process_uuid(t_.tracks[tr].process) : track_uuid(tr);
    evs.push_back({t_.instants.ts[i] - shift, seq++, kTypeInstant, i, uuid});
  }
  for (uint32_t i = 0; i < t_.counters.size(); ++i)
    evs.push_back(
        {t_.counters.ts[i] - shift, seq++, kTypeCounter, i, series_uuid(t_.counters.series[i])});
  memory_tracks(evs, shift, seq);
  std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.ts < b.ts; });

  // Flows: ids on the source slice's begin, terminating ids on the destination's.
  std::unordered_map<uint32_t, std::vector<uint64_t>> flows_out, flows_in;
  for (uint32_t f = 0; f < t_.flows.size(); ++f) {
    int32_t a = t_.flows.src_slice[f], b = t_.flows.dst_slice[f];
    if (a < 0 || b < 0) {
      ++stats_.flows_unbound;
      continue;
    }
    flows_out[static_cast<uint32_t>(a)].push_back(f + 1);
    flows_in[static_cast<uint32_t>(b)].push_back(f + 1);
    ++stats_.flows;
  }

  for (const Ev& e : evs) {
    Msg pkt, te, interned;
    pkt.varint(kPktTimestamp, static_cast<uint64_t>(e.ts));
    uint32_t type = e.kind == kKindMemory          ? kTypeInstant
                    : e.kind == kKindMemoryCounter ? kTypeCounter
                                                   : e.kind;
    te.varint(kTeType, type).varint(kTeTrackUuid, e.track_uuid);
    if (e.kind == kTypeBegin) {
      uint32_t i = e.index;
      te.varint(kTeNameIid, iid(1, s.name[i], interned));
      if (s.cat[i]) te.varint(kTeCategoryIids, iid(0, s.cat[i], interned));
      add_args(te, s.args_begin[i], s.args_count[i], interned);
      if (auto it = flows_out.find(i); it != flows_out.end())
        for (uint64_t id : it->second) te.fixed64(kTeFlowIds, id);
      if (auto it = flows_in.find(i); it != flows_in.end())
        for (uint64_t id : it->second) te.fixed64(kTeTerminatingFlowIds, id);
      ++stats_.slices;
    } else if (e.kind == kTypeInstant) {
      const InstantTable& in = t_.instants;
      te.varint(kTeNameIid, iid(1, in.name[e.index], interned));
      if (in.cat[e.index]) te.varint(kTeCategoryIids, iid(0, in.cat[e.index], interned));
      add_args(te, in.args_begin[e.index], in.args_count[e.index], interned);
      ++stats_.instants;
    } else if (e.kind == kTypeCounter) {
      te.dbl(kTeDoubleCounter, t_.counters.value[e.index]);
      ++stats_.counters;
    } else if (e.kind == kKindMemory) {
      memory_instant(te, e.index);
      ++stats_.memory;
    } else if (e.kind == kKindMemoryCounter) {
      te.dbl(kTeDoubleCounter, memory_value_[e.index]);
    }
    pkt.msg(kPktTrackEvent, te);
    if (!interned.empty()) pkt.msg(kPktInterned, interned);
    pkt.varint(kPktSeqFlags, kSeqNeedsState);
    packet(pkt);
  }
  return stats_;
}

}  // namespace

PerfettoExportStats write_perfetto(const Trace& trace, std::ostream& out) {
  return Writer(trace, out).run();
}

Status save_perfetto(const Trace& trace, const std::string& path, PerfettoExportStats* stats) {
  Result<OutputFile> out = OutputFile::open(path);
  MLPROF_RETURN_IF_ERROR(out);
  PerfettoExportStats st = write_perfetto(trace, out->stream());
  if (stats) *stats = st;
  return out->commit();
}

}  // namespace mlprof
