#include "import/perfetto_importer.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/checked_duration.h"
#include "import/import_report.h"
#include "import/proto_wire.h"

namespace mlprof::import {

namespace {

// Field numbers (Perfetto's trace_packet.proto, track_event.proto, track_descriptor.proto,
// debug_annotation.proto, interned_data.proto).
constexpr uint32_t kTracePacket = 1;
constexpr uint32_t kPktTimestamp = 8, kPktSeqId = 10, kPktTrackEvent = 11, kPktInterned = 12,
                   kPktSeqFlags = 13, kPktStateCleared = 41, kPktProcessDescriptor = 43,
                   kPktThreadDescriptor = 44, kPktDefaults = 59, kPktTrackDescriptor = 60,
                   kPktSeqIdTrusted = 10;
constexpr uint32_t kTdUuid = 1, kTdName = 2, kTdProcess = 3, kTdThread = 4, kTdParent = 5,
                   kTdCounter = 8, kTdStaticName = 10, kTdDescription = 14;
constexpr uint32_t kTeCategoryIids = 3, kTeDebug = 4, kTeType = 9, kTeNameIid = 10,
                   kTeTrackUuid = 11, kTeCategories = 22, kTeName = 23, kTeCounterValue = 30,
                   kTeFlowIdsOld = 36, kTeTerminatingOld = 42, kTeDoubleCounter = 44,
                   kTeFlowIds = 47, kTeTerminating = 48;
constexpr uint32_t kTypeBegin = 1, kTypeEnd = 2, kTypeInstant = 3, kTypeCounter = 4;
constexpr std::string_view kOverlapDescription = "mlprof: overlapping slices of the parent track";
constexpr std::string_view kGpuStreamDescription =
    "mlprof: a GPU stream (pid = device, tid = stream)";
constexpr std::string_view kMemoryCounterDescription =
    "mlprof: allocated bytes per device, from the [memory] instants";

const char* packet_kind(uint32_t f) {
  switch (f) {
    case 1:
      return "ftrace_events";
    case 2:
      return "process_tree";
    case 5:
      return "chrome_events";
    case 6:
      return "clock_snapshot";
    case 9:
      return "process_stats";
    case 33:
      return "trace_config";
    case 35:
      return "trace_stats";
    case 45:
      return "system_info";
    default:
      return nullptr;
  }
}

struct TrackInfo {
  uint64_t uuid = 0, parent = 0;
  bool has_parent = false;
  std::string name, description;
  bool process = false, thread = false, counter = false;
  int64_t pid = 0, tid = 0;
  std::string unit;
};

struct Interned {
  std::unordered_map<uint64_t, StringId> names, cats, debug_names, debug_strings;
};

struct PendingSlice {
  int64_t ts;
  StringId name, cat;
  std::vector<Arg> args;
  std::vector<uint64_t> flows_out, flows_in;
};

// A TrackEvent's fields, as read_event_fields walks them.
struct EventFields {
  uint32_t type = 0;
  uint64_t track_uuid = 0;
  StringId name = 0, cat = 0;
  std::vector<Arg> args;
  std::vector<uint64_t> flows, terminating;
  double counter = 0;
};

class PerfettoReader {
 public:
  PerfettoReader(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}
  Result<Trace> run();

 private:
  Status fail(const std::string& what) {
    return Status::error(name_ + ": not a readable Perfetto trace: " + what);
  }
  bool read_descriptor(const ProtoField& f);
  uint32_t track_for(uint64_t uuid, int depth = 0);
  uint32_t process_for(uint64_t uuid);
  bool read_event(const ProtoField& f, int64_t ts, uint32_t seq, uint64_t default_track,
                  uint64_t packet_offset);
  bool read_event_fields(const ProtoField& f, Interned& st, EventFields& e);
  void end_slice(uint64_t track_uuid, int64_t ts, uint64_t packet_offset);
  void add_instant(EventFields& e, int64_t ts);
  void add_counter_value(uint64_t track_uuid, int64_t ts, double counter);
  bool read_descriptors(const std::vector<ProtoField>& packets);
  bool read_packet(const ProtoField& p, std::map<std::string, uint64_t>& skipped_kinds);
  bool read_defaults(const ProtoField& defaults, uint64_t& uuid);
  void note_unfinished();
  void mark_gpu_streams();
  bool read_interned(const ProtoField& f, Interned& st);
  bool read_annotation(const ProtoField& f, Interned& st, std::vector<Arg>& out);
  std::string annotation_json(const ProtoField& f, Interned& st, bool& ok, int depth = 0);
  void flow_endpoint(uint64_t id, uint32_t track, int64_t ts, bool terminating);
  bool add_memory(uint32_t track, int64_t ts, const std::vector<Arg>& args);

  std::string_view bytes_;
  std::string name_;
  std::string error_;
  TraceBuilder b_;
  ImportReport report_;
  std::unordered_map<uint64_t, TrackInfo> tracks_;
  std::unordered_map<uint64_t, uint32_t> track_of_;
  std::unordered_map<uint64_t, uint32_t> series_of_;
  std::unordered_map<uint32_t, Interned> interned_;       // per sequence
  std::unordered_map<uint32_t, uint64_t> default_track_;  // per sequence (trace_packet_defaults)
  std::unordered_map<uint64_t, std::vector<PendingSlice>> open_;  // per track uuid
  struct FlowEnd {
    uint32_t track;
    int64_t ts;
  };
  std::unordered_map<uint64_t, FlowEnd> flow_open_, flow_waiting_;
  StringId k_flow_ = 0;
};

bool PerfettoReader::read_descriptor(const ProtoField& f) {
  TrackInfo t;
  bool ok = true;
  bool walked = for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
    if (!ok) return;
    switch (g.number) {
      case kTdUuid:
        t.uuid = g.u;
        break;
      case kTdParent:
        t.parent = g.u;
        t.has_parent = true;
        break;
      case kTdName:
      case kTdStaticName:
        if (g.wire_type == 2) t.name = std::string(g.bytes.str());
        break;
      case kTdDescription:
        if (g.wire_type == 2) t.description = std::string(g.bytes.str());
        break;
      case kTdProcess:
        t.process = true;
        ok = for_each_field(g.bytes, g.offset, error_, [&](const ProtoField& h) {
          if (h.number == 1) t.pid = static_cast<int32_t>(h.u);
          if (h.number == 6 && h.wire_type == 2 && t.name.empty())
            t.name = std::string(h.bytes.str());
        });
        break;
      case kTdThread:
        t.thread = true;
        ok = for_each_field(g.bytes, g.offset, error_, [&](const ProtoField& h) {
          if (h.number == 1) t.pid = static_cast<int32_t>(h.u);
          if (h.number == 2) t.tid = h.i64();
          if (h.number == 5 && h.wire_type == 2 && t.name.empty())
            t.name = std::string(h.bytes.str());
        });
        break;
      case kTdCounter:
        t.counter = true;
        ok = for_each_field(g.bytes, g.offset, error_, [&](const ProtoField& h) {
          if (h.number == 6 && h.wire_type == 2) t.unit = std::string(h.bytes.str());
        });
        break;
      default:
        break;
    }
  });
  if (!walked || !ok) return false;
  tracks_[t.uuid] = std::move(t);
  return true;
}

uint32_t PerfettoReader::process_for(uint64_t uuid) {
  // The process a track belongs to: its own descriptor's pid, or its ancestors'.
  for (int depth = 0; depth < 16; ++depth) {
    auto it = tracks_.find(uuid);
    if (it == tracks_.end()) break;
    const TrackInfo& t = it->second;
    if (t.process || t.thread) {
      uint32_t p = b_.process(t.pid);
      Process& pr = b_.trace().processes[p];
      if (t.process && pr.name == 0 && !t.name.empty()) pr.name = b_.intern(t.name);
      return p;
    }
    if (!t.has_parent) break;
    uuid = t.parent;
  }
  return b_.process_labeled("Perfetto global tracks");
}

uint32_t PerfettoReader::track_for(uint64_t uuid, int depth) {
  auto cached = track_of_.find(uuid);
  if (cached != track_of_.end()) return cached->second;
  uint32_t track;
  auto it = tracks_.find(uuid);
  if (it == tracks_.end()) {
    report_.skipped("events on tracks without a descriptor (kept on one track)", 0);
    track = b_.thread_track_labeled(b_.process_labeled("Perfetto global tracks"),
                                    "track " + std::to_string(uuid));
  } else {
    const TrackInfo& t = it->second;
    // mlprof's overlap lanes fold back into their track (a hostile file's parents may loop).
    if (t.description == kOverlapDescription && t.has_parent && t.parent != uuid && depth < 16) {
      track = track_for(t.parent, depth + 1);
    } else if (t.thread) {
      uint32_t p = process_for(uuid);
      // A process descriptor of the same pid may come later; process_for names it then.
      track = b_.thread_track(p, t.tid);
      Track& tr = b_.trace().tracks[track];
      if (tr.name == 0 && !t.name.empty()) tr.name = b_.intern(t.name);
      if (t.description == kGpuStreamDescription)
        b_.mark_gpu_track(track, static_cast<int32_t>(t.pid), t.tid);
    } else if (t.process) {
      track = b_.thread_track_labeled(process_for(uuid), "process events");
    } else {
      uint32_t p = process_for(uuid);
      track = b_.async_track(p, b_.intern(t.name.empty() ? "track" : t.name), uuid);
      Track& tr = b_.trace().tracks[track];
      if (tr.name == 0 && !t.name.empty()) tr.name = b_.intern(t.name);
    }
  }
  track_of_[uuid] = track;
  return track;
}

bool PerfettoReader::read_interned(const ProtoField& f, Interned& st) {
  bool ok = true;
  bool walked = for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
    if (!ok || g.wire_type != 2) return;
    std::unordered_map<uint64_t, StringId>* table = nullptr;
    if (g.number == 1) table = &st.cats;
    if (g.number == 2) table = &st.names;
    if (g.number == 3) table = &st.debug_names;
    if (g.number == 29) table = &st.debug_strings;
    if (!table) return;
    uint64_t iid = 0;
    std::string_view s;
    ok = for_each_field(g.bytes, g.offset, error_, [&](const ProtoField& h) {
      if (h.number == 1) iid = h.u;
      if (h.number == 2 && h.wire_type == 2) s = h.bytes.str();
    });
    (*table)[iid] = b_.intern(s);
  });
  return walked && ok;
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A nested annotation (dict_entries / array_values) as JSON text.
std::string PerfettoReader::annotation_json(const ProtoField& f, Interned& st, bool& ok,
                                            int depth) {
  if (depth > 64) {  // a hostile file's nesting must not exhaust the stack
    ok = false;
    error_ = "byte " + std::to_string(f.offset) + ": debug annotations nested over 64 deep";
    return "";
  }
  std::string key, value = "null", members;
  bool dict = false, array = false;
  bool walked =
      ok && for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
        switch (g.number) {
          case 1: {
            auto it = st.debug_names.find(g.u);
            if (it != st.debug_names.end()) key = std::string(b_.trace().str(it->second));
            break;
          }
          case 10:
            key = std::string(g.bytes.str());
            break;
          case 2:
            value = g.u ? "true" : "false";
            break;
          case 3:
          case 7:
            value = std::to_string(g.u);
            break;
          case 4:
            value = std::to_string(g.i64());
            break;
          case 5: {
            char b[32];
            std::snprintf(b, sizeof b, "%.17g", g.as_double());
            value = b;
            break;
          }
          case 6:
            value = json_quote(g.bytes.str());
            break;
          case 9:
            value = std::string(g.bytes.str());
            break;
          case 17: {
            auto it = st.debug_strings.find(g.u);
            value = json_quote(it == st.debug_strings.end() ? "" : b_.trace().str(it->second));
            break;
          }
          case 11:
          case 12: {
            (g.number == 11 ? dict : array) = true;
            std::string sub = annotation_json(g, st, ok, depth + 1);
            if (!members.empty()) members += ",";
            members += sub;
            break;
          }
          default:
            break;
        }
      });
  ok = ok && walked;
  if (dict) value = "{" + members + "}";
  if (array) value = "[" + members + "]";
  // Inside a dict an entry is "key": value (annotation_json of an array element has no key).
  return key.empty() ? value : json_quote(key) + ":" + value;
}

bool PerfettoReader::read_annotation(const ProtoField& f, Interned& st, std::vector<Arg>& out) {
  Arg a;
  a.type = ArgType::kNull;
  bool nested = false;
  bool walked = for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
    switch (g.number) {
      case 1: {
        auto it = st.debug_names.find(g.u);
        a.key = it == st.debug_names.end() ? b_.intern("?") : it->second;
        break;
      }
      case 10:
        a.key = b_.intern(g.bytes.str());
        break;
      case 2:
        a.type = ArgType::kBool;
        a.b = g.u != 0;
        break;
      case 3:
      case 7:
        a.type = ArgType::kUInt;
        a.u = g.u;
        if (g.u <= static_cast<uint64_t>(INT64_MAX)) {
          a.type = ArgType::kInt;
          a.i = static_cast<int64_t>(g.u);
        }
        break;
      case 4:
        a.type = ArgType::kInt;
        a.i = g.i64();
        break;
      case 5:
        a.type = ArgType::kDouble;
        a.d = g.as_double();
        break;
      case 6:
        a.type = ArgType::kString;
        a.s = b_.intern(g.bytes.str());
        break;
      case 9:
        a.type = ArgType::kJson;
        a.s = b_.intern(g.bytes.str());
        if (g.bytes.str() == "null") a.type = ArgType::kNull;
        break;
      case 17: {
        auto it = st.debug_strings.find(g.u);
        a.type = ArgType::kString;
        a.s = it == st.debug_strings.end() ? b_.intern("") : it->second;
        break;
      }
      case 8:
      case 11:
      case 12:
        nested = true;
        break;
      default:
        break;
    }
  });
  if (!walked) return false;
  if (nested) {
    bool ok = true;
    std::string json = annotation_json(f, st, ok);
    if (!ok) return false;
    // annotation_json returns "key":value; keep the value.
    size_t colon = json.find("\":");
    if (json.starts_with("\"") && colon != std::string::npos) json = json.substr(colon + 2);
    a.type = ArgType::kJson;
    a.s = b_.intern(json);
  }
  if (a.key == 0) a.key = b_.intern("?");
  out.push_back(a);
  return true;
}

// A "[memory]" instant (mlprof's export, Kineto's JSON form) with a Bytes arg: a memory event.
bool PerfettoReader::add_memory(uint32_t track, int64_t ts, const std::vector<Arg>& args) {
  auto get = [&](std::string_view key, int64_t dflt) {
    for (const Arg& a : args) {
      if (a.key == 0 || b_.trace().str(a.key) != key) continue;
      if (a.type == ArgType::kInt) return a.i;
      if (a.type == ArgType::kUInt) return static_cast<int64_t>(a.u);
    }
    return dflt;
  };
  constexpr int64_t kNone = INT64_MIN;
  if (get("Bytes", kNone) == kNone) return false;
  int64_t type = get("Device Type", 0);
  // mlprof's DeviceType (0 CPU, 1 GPU, 2 other); c10's HIP (6) is a GPU too.
  DeviceType dt = type == 0                ? DeviceType::kCpu
                  : type == 1 || type == 6 ? DeviceType::kCuda
                                           : DeviceType::kOther;
  b_.add_memory(track, ts, static_cast<uint64_t>(get("Addr", 0)), get("Bytes", 0), dt,
                static_cast<int16_t>(get("Device Id", type == 0 ? -1 : 0)),
                get("Total Allocated", -1), get("Total Reserved", -1));
  return true;
}

void PerfettoReader::flow_endpoint(uint64_t id, uint32_t track, int64_t ts, bool terminating) {
  auto it = flow_open_.find(id);
  if (it != flow_open_.end()) {
    b_.add_flow(id, k_flow_, it->second.track, it->second.ts, track, ts);
    if (terminating)
      flow_open_.erase(it);
    else
      it->second = FlowEnd{track, ts};  // a flow through several slices: one step each
  } else if (!terminating) {
    auto w = flow_waiting_.find(id);  // its end came first (an earlier timestamp)
    if (w != flow_waiting_.end()) {
      b_.add_flow(id, k_flow_, track, ts, w->second.track, w->second.ts);
      flow_waiting_.erase(w);
    } else {
      flow_open_.emplace(id, FlowEnd{track, ts});
    }
  } else {
    flow_waiting_.emplace(id, FlowEnd{track, ts});
  }
}

bool PerfettoReader::read_event_fields(const ProtoField& f, Interned& st, EventFields& e) {
  bool ok = true;
  bool walked = for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
    if (!ok) return;
    switch (g.number) {
      case kTeType:
        e.type = static_cast<uint32_t>(g.u);
        break;
      case kTeTrackUuid:
        e.track_uuid = g.u;
        break;
      case kTeNameIid: {
        auto it = st.names.find(g.u);
        e.name = it == st.names.end() ? b_.intern("(unknown name " + std::to_string(g.u) + ")")
                                      : it->second;
        break;
      }
      case kTeName:
        e.name = b_.intern(g.bytes.str());
        break;
      case kTeCategoryIids: {
        auto it = st.cats.find(g.u);
        if (it != st.cats.end() && e.cat == 0) e.cat = it->second;
        break;
      }
      case kTeCategories:
        if (e.cat == 0) e.cat = b_.intern(g.bytes.str());
        break;
      case kTeDebug:
        ok = read_annotation(g, st, e.args);
        break;
      case kTeCounterValue:
        e.counter = static_cast<double>(g.i64());
        break;
      case kTeDoubleCounter:
        e.counter = g.as_double();
        break;
      case kTeFlowIds:
      case kTeFlowIdsOld:
        e.flows.push_back(g.u);
        break;
      case kTeTerminating:
      case kTeTerminatingOld:
        e.terminating.push_back(g.u);
        break;
      default:
        break;
    }
  });
  return walked && ok;
}

void PerfettoReader::end_slice(uint64_t track_uuid, int64_t ts, uint64_t packet_offset) {
  report_.read("slice ends");
  auto& stack = open_[track_uuid];
  if (stack.empty()) {
    report_.skipped("slice ends without a begin");
    b_.trace().meta.import_stats.note(ImportProblem::kUnmatchedEnd, packet_offset,
                                      "TrackEvent end without a begin on its track");
    return;
  }
  PendingSlice p = std::move(stack.back());
  stack.pop_back();
  if (checked_duration(p.ts, ts) < 0) {
    report_.skipped("slices ending before they begin");
    b_.trace().meta.import_stats.note(ImportProblem::kNegativeDuration, packet_offset,
                                      "TrackEvent end before its begin");
    return;
  }
  uint32_t track = track_for(track_uuid);
  uint32_t mark = b_.args_mark();
  for (const Arg& a : p.args) b_.trace().args.push_back(a);
  b_.add_slice(track, p.ts, ts - p.ts, p.name, p.cat, b_.args_since(mark));
}

void PerfettoReader::add_instant(EventFields& e, int64_t ts) {
  uint32_t track = track_for(e.track_uuid);
  if (e.name != 0 && b_.trace().str(e.name) == "[memory]" && add_memory(track, ts, e.args)) {
    report_.read("memory events");
    return;
  }
  report_.read("instants");
  uint32_t mark = b_.args_mark();
  for (const Arg& a : e.args) b_.trace().args.push_back(a);
  b_.add_instant(track, ts, e.name, e.cat, b_.args_since(mark));
  for (uint64_t id : e.terminating) flow_endpoint(id, track, ts, true);
  for (uint64_t id : e.flows) flow_endpoint(id, track, ts, false);
}

void PerfettoReader::add_counter_value(uint64_t track_uuid, int64_t ts, double counter) {
  auto info = tracks_.find(track_uuid);
  if (info != tracks_.end() && info->second.description == kMemoryCounterDescription)
    return;  // drawn from the [memory] instants, which are read
  report_.read("counter values");
  auto it = series_of_.find(track_uuid);
  if (it == series_of_.end()) {
    std::string nm =
        info == tracks_.end() ? "counter " + std::to_string(track_uuid) : info->second.name;
    uint32_t p =
        process_for(info == tracks_.end() || !info->second.has_parent ? 0 : info->second.parent);
    uint32_t s = b_.counter_series(p, b_.intern(nm));
    if (info != tracks_.end() && !info->second.unit.empty())
      b_.trace().counter_series[s].unit = b_.intern(info->second.unit);
    it = series_of_.emplace(track_uuid, s).first;
  }
  b_.add_counter(it->second, ts, counter);
}

bool PerfettoReader::read_event(const ProtoField& f, int64_t ts, uint32_t seq,
                                uint64_t default_track, uint64_t packet_offset) {
  Interned& st = interned_[seq];
  EventFields e;
  e.track_uuid = default_track;
  if (!read_event_fields(f, st, e)) return false;
  switch (e.type) {
    case kTypeBegin: {
      report_.read("slice begins");
      // Flow ends bind at the slice's start (its end may come after the other end's slice).
      uint32_t track = track_for(e.track_uuid);
      for (uint64_t id : e.terminating) flow_endpoint(id, track, ts, true);
      for (uint64_t id : e.flows) flow_endpoint(id, track, ts, false);
      open_[e.track_uuid].push_back(PendingSlice{ts, e.name, e.cat, std::move(e.args), {}, {}});
      break;
    }
    case kTypeEnd:
      end_slice(e.track_uuid, ts, packet_offset);
      break;
    case kTypeInstant:
      add_instant(e, ts);
      break;
    case kTypeCounter:
      add_counter_value(e.track_uuid, ts, e.counter);
      break;
    default:
      report_.read("other track events");
      report_.skipped("track events of type " + std::to_string(e.type) +
                      " (legacy or unspecified)");
      break;
  }
  return true;
}

// Pass 1: the track descriptors (events may come before the descriptor of their track).
bool PerfettoReader::read_descriptors(const std::vector<ProtoField>& packets) {
  for (const ProtoField& p : packets) {
    bool ok = true;
    if (!for_each_field(p.bytes, p.offset, error_,
                        [&](const ProtoField& g) {
                          if (ok && g.number == kPktTrackDescriptor && g.wire_type == 2)
                            ok = read_descriptor(g);
                        }) ||
        !ok)
      return false;
  }
  return true;
}

// trace_packet_defaults: the sequence's default track uuid.
bool PerfettoReader::read_defaults(const ProtoField& defaults, uint64_t& uuid) {
  bool ok = true;
  return for_each_field(defaults.bytes, defaults.offset, error_,
                        [&](const ProtoField& g) {
                          if (g.number == 11 && g.wire_type == 2)
                            ok =
                                for_each_field(g.bytes, g.offset, error_, [&](const ProtoField& h) {
                                  if (h.number == 11) uuid = h.u;
                                });
                        }) &&
         ok;
}

// Pass 2, one packet: its sequence's state, then its events (or its kind counted as skipped).
bool PerfettoReader::read_packet(const ProtoField& p,
                                 std::map<std::string, uint64_t>& skipped_kinds) {
  int64_t ts = 0;
  uint32_t seq = 0, flags = 0;
  bool cleared = false;
  std::vector<ProtoField> events, interned, thread_desc;
  ProtoField defaults;
  bool has_defaults = false;
  uint32_t data_field = 0;
  if (!for_each_field(p.bytes, p.offset, error_, [&](const ProtoField& g) {
        switch (g.number) {
          case kPktTimestamp:
            ts = g.i64();
            break;
          case kPktSeqIdTrusted:
            seq = static_cast<uint32_t>(g.u);
            break;
          case kPktSeqFlags:
            flags = static_cast<uint32_t>(g.u);
            break;
          case kPktStateCleared:
            cleared = g.u != 0;
            break;
          case kPktTrackEvent:
            events.push_back(g);
            break;
          case kPktInterned:
            interned.push_back(g);
            break;
          case kPktDefaults:
            defaults = g;
            has_defaults = true;
            break;
          case kPktThreadDescriptor:
          case kPktProcessDescriptor:
          case kPktTrackDescriptor:
            data_field = g.number;
            break;
          case 58:  // timestamp_clock_id: times are read as they are
          case 87:
          case 42:
            break;
          default:
            if (g.wire_type == 2 && data_field == 0) data_field = g.number;
            break;
        }
      }))
    return false;
  if (flags & 1 || cleared) {
    interned_[seq] = Interned{};
  }
  for (const ProtoField& i : interned)
    if (!read_interned(i, interned_[seq])) return false;
  if (has_defaults) {
    uint64_t uuid = 0;
    if (!read_defaults(defaults, uuid)) return false;
    default_track_[seq] = uuid;
  }
  if (!events.empty()) {
    auto d = default_track_.find(seq);
    for (const ProtoField& e : events)
      if (!read_event(e, ts, seq, d == default_track_.end() ? 0 : d->second, p.offset))
        return false;
  } else if (data_field && data_field != kPktTrackDescriptor &&
             data_field != kPktThreadDescriptor && data_field != kPktProcessDescriptor) {
    const char* kind = packet_kind(data_field);
    ++skipped_kinds[kind ? kind : "field " + std::to_string(data_field)];
  }
  return true;
}

// Slices never ended and flows never terminated (or never started).
void PerfettoReader::note_unfinished() {
  uint64_t unclosed = 0;
  for (const auto& [uuid, stack] : open_) unclosed += stack.size();
  if (unclosed) {
    report_.skipped("slices never ended", unclosed);
    b_.trace().meta.import_stats.note(ImportProblem::kTruncated, UINT64_MAX,
                                      "slices begun but never ended (a trace cut short?)",
                                      unclosed);
  }
  if (!flow_open_.empty())
    report_.note(std::to_string(flow_open_.size()) + " flows never terminated");
  if (!flow_waiting_.empty())
    b_.trace().meta.import_stats.note(ImportProblem::kUnmatchedFlow, UINT64_MAX,
                                      "a terminating flow id that no slice started",
                                      flow_waiting_.size());
}

// GPU streams: thread tracks holding GPU work (Kineto's pid = device, tid = stream).
void PerfettoReader::mark_gpu_streams() {
  Trace& tr = b_.trace();
  std::vector<uint8_t> gpu(tr.tracks.size(), 0);
  for (size_t i = 0; i < tr.slices.size(); ++i) {
    std::string_view c = tr.str(tr.slices.cat[i]);
    if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset" || c == "Kernel" || c == "Memcpy" ||
        c == "Memset")
      gpu[tr.slices.track[i]] = 1;
  }
  for (uint32_t k = 0; k < tr.tracks.size(); ++k)
    if (gpu[k] && tr.tracks[k].kind == TrackKind::kThread)
      b_.mark_gpu_track(k, static_cast<int32_t>(tr.tracks[k].pid), tr.tracks[k].tid);
}

Result<Trace> PerfettoReader::run() {
  ProtoSpan all{reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()};
  std::vector<ProtoField> packets;
  uint64_t other_fields = 0;
  if (!for_each_field(all, 0, error_, [&](const ProtoField& f) {
        if (f.number == kTracePacket && f.wire_type == 2)
          packets.push_back(f);
        else
          ++other_fields;
      }))
    return fail(error_);
  if (packets.empty()) return fail("no trace packets");
  if (!read_descriptors(packets)) return fail(error_);
  k_flow_ = b_.intern("flow");
  // Pass 2: events in file order, with each sequence's interned strings.
  std::map<std::string, uint64_t> skipped_kinds;
  for (const ProtoField& p : packets)
    if (!read_packet(p, skipped_kinds)) return fail(error_);
  for (const auto& [kind, n] : skipped_kinds) report_.skipped("packets: " + kind, n);
  note_unfinished();
  mark_gpu_streams();
  Trace& tr = b_.trace();
  report_.note(std::to_string(packets.size()) + " packets");
  ImportStats stats = tr.meta.import_stats;
  Trace t = std::move(b_).finish();
  t.meta.import_stats = stats;
  t.meta.format = "perfetto";
  t.meta.source = name_;
  report_.store(t, "perfetto");
  if (t.event_count() == 0)
    return Status::error(name_ + ": a Perfetto trace without TrackEvent data");
  return t;
}

}  // namespace

bool looks_like_perfetto(std::string_view head) {
  if (head.size() < 4 || static_cast<unsigned char>(head[0]) != 0x0A) return false;
  // A JSON document that starts with a newline also starts with 0x0A.
  size_t text = head.find_first_not_of(" \t\r\n");
  if (text != std::string_view::npos && (head[text] == '{' || head[text] == '[')) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(head.data()),
                                            static_cast<int>(head.size()));
  uint32_t len = 0;
  if (in.ReadTag() != 0x0A || !in.ReadVarint32(&len) || len == 0) return false;
  // The first packet's first field: a TracePacket field with its proper wire type.
  uint32_t tag = in.ReadTag();
  uint32_t field = tag >> 3, wt = tag & 7;
  switch (field) {
    case kPktTimestamp:
    case kPktSeqId:
    case kPktSeqFlags:
    case 58:
    case 87:
      return wt == 0;
    case kPktTrackEvent:
    case kPktInterned:
    case kPktTrackDescriptor:
    case kPktDefaults:
    case kPktThreadDescriptor:
    case kPktProcessDescriptor:
    case 1:
    case 2:
    case 6:
    case 33:
    case 35:
    case 45:
      return wt == 2;
    default:
      return false;
  }
}

Result<Trace> import_perfetto(std::string_view bytes, const std::string& name) {
  return PerfettoReader(bytes, name).run();
}

}  // namespace mlprof::import
