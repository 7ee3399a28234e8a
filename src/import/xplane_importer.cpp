#include "import/xplane_importer.h"

#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/import_report.h"
#include "import/proto_wire.h"

namespace mlprof::import {

namespace {

// xplane.proto field numbers.
namespace xf {
constexpr uint32_t kSpacePlanes = 1, kSpaceErrors = 2, kSpaceWarnings = 3, kSpaceHostnames = 4;
constexpr uint32_t kPlaneId = 1, kPlaneName = 2, kPlaneLines = 3, kPlaneEventMetadata = 4,
                   kPlaneStatMetadata = 5, kPlaneStats = 6;
constexpr uint32_t kLineId = 1, kLineName = 2, kLineTimestampNs = 3, kLineEvents = 4,
                   kLineDisplayName = 11;
constexpr uint32_t kEventMetadataId = 1, kEventOffsetPs = 2, kEventDurationPs = 3, kEventStats = 4;
constexpr uint32_t kStatMetadataId = 1, kStatDouble = 2, kStatUint64 = 3, kStatInt64 = 4,
                   kStatStr = 5, kStatBytes = 6, kStatRef = 7;
constexpr uint32_t kMetaId = 1, kMetaName = 2, kMetaDisplayName = 4;
}  // namespace xf

struct Stat {
  int64_t metadata_id = 0;
  uint32_t kind = 0;  // the value's field number (kStatDouble ... kStatRef), 0 none
  uint64_t u = 0;
  double d = 0;
  std::string_view s;
};

struct Plane {
  int64_t id = 0;
  std::string_view name;
  std::vector<ProtoField> lines;
  std::unordered_map<int64_t, std::pair<std::string_view, std::string_view>>
      events;                                           // name, display
  std::unordered_map<int64_t, std::string_view> stats;  // stat metadata id -> name
  std::vector<Stat> plane_stats;
};

// The category and arg names of a plane's rows, interned (in this order) per plane.
struct PlaneKeys {
  StringId k_kernel, k_memcpy, k_memset, k_ann, k_runtime, k_op, k_py, k_corr, k_grid, k_block,
      k_smem, k_bytes, k_device, k_stream;

  explicit PlaneKeys(TraceBuilder& b)
      : k_kernel(b.intern("kernel")),
        k_memcpy(b.intern("gpu_memcpy")),
        k_memset(b.intern("gpu_memset")),
        k_ann(b.intern("gpu_user_annotation")),
        k_runtime(b.intern("cuda_runtime")),
        k_op(b.intern("cpu_op")),
        k_py(b.intern("python_function")),
        k_corr(b.intern("correlation")),
        k_grid(b.intern("grid")),
        k_block(b.intern("block")),
        k_smem(b.intern("shared memory")),
        k_bytes(b.intern("bytes")),
        k_device(b.intern("device")),
        k_stream(b.intern("stream")) {}
};

// A timed plane being imported: the host's or a device's.
struct PlaneCtx {
  bool host;
  int64_t device;  // -1 on the host
  uint32_t proc;
  const PlaneKeys& k;
};

// One of its lines: the track its events go on.
struct LineCtx {
  uint32_t track;
  int64_t stream;
  int64_t line_ts;
  bool stream_line;  // a device's "Stream #N" line
};

// What an event's stats say it is.
struct EventStats {
  const Stat* corr = nullptr;
  std::string kernel_details, memcpy_details;
  int64_t step = -1;
  int64_t alloc_bytes = -1, addr = 0, allocated = -1, reserved = -1;
};

class XSpaceReader {
 public:
  XSpaceReader(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}
  Result<Trace> run();

 private:
  Status fail(const std::string& what) {
    return Status::error(name_ + ": not a readable XSpace protobuf: " + what);
  }
  bool parse_stat(const ProtoField& f, Stat& st);
  bool read_plane(const ProtoField& f, Plane& p);
  Status import_plane(const Plane& p, size_t index);
  void read_untimed_plane(const Plane& p);
  void add_device(const Plane& p, int64_t device);
  Status import_line(const Plane& p, const ProtoField& lf, const PlaneCtx& c);
  Status import_event(const Plane& p, const ProtoField& ef, const PlaneCtx& c, const LineCtx& l,
                      std::vector<Stat>& stats);
  EventStats event_stats(const Plane& p, const std::vector<Stat>& stats) const;
  void add_event_args(const Plane& p, const PlaneCtx& c, const LineCtx& l, const EventStats& es,
                      const std::vector<Stat>& stats);
  std::string stat_text(const Plane& p, const Stat& st) const;
  void add_stat_arg(const Plane& p, const Stat& st);

  std::string_view bytes_;
  std::string name_;
  std::string error_;
  TraceBuilder b_;
  ImportReport report_;
  struct Launch {
    uint32_t track;
    int64_t ts;
  };
  std::unordered_map<int64_t, Launch> launches_;
  struct Work {
    uint32_t track;
    int64_t ts;
    int64_t corr;
  };
  std::vector<Work> work_;
};

bool XSpaceReader::parse_stat(const ProtoField& f, Stat& st) {
  return for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
    switch (g.number) {
      case xf::kStatMetadataId:
        st.metadata_id = g.i64();
        break;
      case xf::kStatDouble:
        st.kind = g.number;
        st.d = g.as_double();
        break;
      case xf::kStatUint64:
      case xf::kStatInt64:
      case xf::kStatRef:
        st.kind = g.number;
        st.u = g.u;
        break;
      case xf::kStatStr:
      case xf::kStatBytes:
        st.kind = g.number;
        st.s = g.bytes.str();
        break;
      default:  // compressed strings and later fields: not read
        break;
    }
  });
}

bool XSpaceReader::read_plane(const ProtoField& f, Plane& p) {
  bool ok = true;
  bool walked = for_each_field(f.bytes, f.offset, error_, [&](const ProtoField& g) {
    if (!ok) return;
    switch (g.number) {
      case xf::kPlaneId:
        p.id = g.i64();
        break;
      case xf::kPlaneName:
        p.name = g.bytes.str();
        break;
      case xf::kPlaneLines:
        p.lines.push_back(g);
        break;
      case xf::kPlaneEventMetadata:
      case xf::kPlaneStatMetadata: {
        // map<int64, X>: entry {key = 1, value = 2}
        int64_t key = 0;
        ProtoField value;
        bool has_value = false;
        ok = for_each_field(g.bytes, g.offset, error_, [&](const ProtoField& e) {
          if (e.number == 1) key = e.i64();
          if (e.number == 2 && e.wire_type == 2) {
            value = e;
            has_value = true;
          }
        });
        if (!ok || !has_value) break;
        std::string_view nm, display;
        ok = for_each_field(value.bytes, value.offset, error_, [&](const ProtoField& m) {
          if (m.wire_type != 2) return;
          if (m.number == xf::kMetaName) nm = m.bytes.str();
          if (m.number == xf::kMetaDisplayName && g.number == xf::kPlaneEventMetadata)
            display = m.bytes.str();
        });
        if (g.number == xf::kPlaneEventMetadata)
          p.events[key] = {nm, display};
        else
          p.stats[key] = nm;
        break;
      }
      case xf::kPlaneStats: {
        Stat st;
        ok = parse_stat(g, st);
        if (ok) p.plane_stats.push_back(st);
        break;
      }
      default:
        break;
    }
  });
  return walked && ok;
}

std::string XSpaceReader::stat_text(const Plane& p, const Stat& st) const {
  switch (st.kind) {
    case xf::kStatRef: {
      auto it = p.stats.find(static_cast<int64_t>(st.u));
      return it == p.stats.end() ? std::string() : std::string(it->second);
    }
    case xf::kStatStr:
    case xf::kStatBytes:
      return std::string(st.s);
    case xf::kStatInt64:
      return std::to_string(static_cast<int64_t>(st.u));
    case xf::kStatUint64:
      return std::to_string(st.u);
    case xf::kStatDouble:
      return std::to_string(st.d);
    default:
      return "";
  }
}

void XSpaceReader::add_stat_arg(const Plane& p, const Stat& st) {
  auto it = p.stats.find(st.metadata_id);
  if (it == p.stats.end() || it->second.empty()) return;
  StringId key = b_.intern(it->second);
  switch (st.kind) {
    case xf::kStatInt64:
      b_.arg_int(key, static_cast<int64_t>(st.u));
      break;
    case xf::kStatUint64:
      b_.arg_uint(key, st.u);
      break;
    case xf::kStatDouble:
      b_.arg_double(key, st.d);
      break;
    case xf::kStatStr:
    case xf::kStatRef:
      b_.arg_string(key, b_.intern(stat_text(p, st)));
      break;
    case xf::kStatBytes:  // serialized protos (HLO): their size only
      b_.arg_int(b_.intern(std::string(it->second) + " (bytes)"),
                 static_cast<int64_t>(st.s.size()));
      break;
    default:
      break;
  }
}

// "grid:1,1,1 block:2,1,1 private_mem:0 group_mem:0 occ_pct:0" -> value of `key` ("1,1,1").
std::string_view detail(std::string_view text, std::string_view key) {
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    if ((at == 0 || text[at - 1] == ' ') && at + key.size() < text.size() &&
        text[at + key.size()] == ':') {
      size_t b = at + key.size() + 1, e = text.find(' ', b);
      return text.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
    }
    at += key.size();
  }
  return {};
}

// "MemcpyDtoD", "CopyDeviceToDevice" and memcpy_details' kind -> Kineto's "Memcpy DtoD (...)".
std::string memcpy_name(std::string_view event, std::string_view kind) {
  std::string_view s = event;
  auto has = [&](std::string_view a, std::string_view b) {
    return s.find(a) != std::string_view::npos || s.find(b) != std::string_view::npos ||
           kind.find(a) != std::string_view::npos || kind.find(b) != std::string_view::npos;
  };
  if (has("DeviceToDevice", "DtoD") || has("D2D", "PeerToPeer"))
    return "Memcpy DtoD (Device -> Device)";
  if (has("HostToDevice", "HtoD") || has("H2D", "H2D")) return "Memcpy HtoD (Host -> Device)";
  if (has("DeviceToHost", "DtoH") || has("D2H", "D2H")) return "Memcpy DtoH (Device -> Host)";
  return "Memcpy Unknown (" + std::string(event) + ")";
}

// /host:metadata (HLO protos), Task Environment, /device:CUSTOM:...: no timed events here.
void XSpaceReader::read_untimed_plane(const Plane& p) {
  std::string_view pname = p.name;
  if (!p.lines.empty()) report_.skipped("lines of plane " + std::string(pname), p.lines.size());
  if (pname == "Task Environment") {
    for (const Stat& st : p.plane_stats) {
      auto it = p.stats.find(st.metadata_id);
      if (it != p.stats.end() && it->second == "profile_start_time" && st.kind != xf::kStatStr)
        b_.trace().meta.extra.emplace_back("xspaceProfileStartNs", std::to_string(st.u));
    }
  }
}

// The device's properties from its plane's stats, once per device id.
void XSpaceReader::add_device(const Plane& p, int64_t device) {
  std::string_view pname = p.name;
  DeviceInfo d;
  d.id = static_cast<int32_t>(device);
  std::string vendor;
  for (const Stat& st : p.plane_stats) {
    auto it = p.stats.find(st.metadata_id);
    if (it == p.stats.end()) continue;
    std::string_view k = it->second;
    int64_t v = static_cast<int64_t>(st.u);
    if (k == "device_vendor") vendor = stat_text(p, st);
    if (k == "core_count") d.num_sms = static_cast<int32_t>(v);
    if (k == "memory_size") d.total_global_mem = v;
    if (k == "compute_cap_major") d.compute_major = static_cast<int32_t>(v);
    if (k == "compute_cap_minor") d.compute_minor = static_cast<int32_t>(v);
  }
  d.name =
      (vendor.empty() ? std::string("GPU") : vendor + " GPU") + " (" + std::string(pname) + ")";
  if (vendor == "AMD") {
    d.warp_size = 64;
    d.compute_major = d.compute_minor = 0;  // a gfx version, not a CUDA compute capability
  }
  bool seen = false;
  for (const DeviceInfo& e : b_.trace().meta.devices) seen |= e.id == d.id;
  if (!seen) b_.trace().meta.devices.push_back(std::move(d));
}

Status XSpaceReader::import_plane(const Plane& p, size_t index) {
  std::string_view pname = p.name;
  bool host = pname.starts_with("/host:CPU");
  int64_t device = -1;
  if (pname.starts_with("/device:")) {
    size_t colon = pname.rfind(':');
    char* end = nullptr;
    std::string num(pname.substr(colon + 1));
    long v = std::strtol(num.c_str(), &end, 10);
    if (colon > 8 && end && *end == '\0' && !num.empty()) device = v;
  }
  if (!host && device < 0) {
    read_untimed_plane(p);
    return Status::ok();
  }
  if (p.lines.empty()) return Status::ok();  // the other GPUs of the host, idle here
  if (device >= 0) add_device(p, device);
  uint32_t proc = host ? b_.process_labeled(pname) : b_.process(device);
  Process& pr = b_.trace().processes[proc];
  if (pr.name == 0)
    pr.name = b_.intern(host ? std::string(pname) : "GPU " + std::to_string(device));
  if (!host) pr.is_gpu = true;

  const PlaneKeys keys(b_);
  const PlaneCtx c{host, device, proc, keys};
  for (size_t li = 0; li < p.lines.size(); ++li)
    MLPROF_RETURN_IF_ERROR(import_line(p, p.lines[li], c));
  (void)index;
  return Status::ok();
}

Status XSpaceReader::import_line(const Plane& p, const ProtoField& lf, const PlaneCtx& c) {
  int64_t line_id = 0, line_ts = 0;
  std::string_view line_name, display;
  std::vector<ProtoField> events;
  if (!for_each_field(lf.bytes, lf.offset, error_, [&](const ProtoField& g) {
        if (g.number == xf::kLineId) line_id = g.i64();
        if (g.number == xf::kLineName && g.wire_type == 2) line_name = g.bytes.str();
        if (g.number == xf::kLineDisplayName && g.wire_type == 2) display = g.bytes.str();
        if (g.number == xf::kLineTimestampNs) line_ts = g.i64();
        if (g.number == xf::kLineEvents && g.wire_type == 2) events.push_back(g);
      }))
    return fail(error_);
  bool stream_line = line_name.starts_with("Stream #");
  uint32_t track;
  int64_t stream = line_id;
  if (c.host) {
    track = b_.thread_track(c.proc, line_id);
    Track& t = b_.trace().tracks[track];
    if (t.name == 0) t.name = b_.intern(display.empty() ? line_name : display);
  } else {
    if (stream_line) stream = std::strtoll(std::string(line_name.substr(8)).c_str(), nullptr, 10);
    track = b_.thread_track(c.proc, stream);
    b_.mark_gpu_track(track, static_cast<int32_t>(c.device), stream);
    Track& t = b_.trace().tracks[track];
    if (t.name == 0) t.name = b_.intern(line_name);
  }
  const LineCtx l{track, stream, line_ts, stream_line};
  std::vector<Stat> stats;
  for (const ProtoField& ef : events) MLPROF_RETURN_IF_ERROR(import_event(p, ef, c, l, stats));
  return Status::ok();
}

EventStats XSpaceReader::event_stats(const Plane& p, const std::vector<Stat>& stats) const {
  EventStats es;
  for (const Stat& st : stats) {
    auto it = p.stats.find(st.metadata_id);
    if (it == p.stats.end()) continue;
    std::string_view k = it->second;
    if (k == "correlation_id") es.corr = &st;
    if (k == "kernel_details") es.kernel_details = stat_text(p, st);
    if (k == "memcpy_details") es.memcpy_details = stat_text(p, st);
    if (k == "step_num" || k == "iter_num") es.step = static_cast<int64_t>(st.u);
    if (k == "allocation_bytes") es.alloc_bytes = static_cast<int64_t>(st.u);
    if (k == "addr") es.addr = static_cast<int64_t>(st.u);
    if (k == "bytes_allocated") es.allocated = static_cast<int64_t>(st.u);
    if (k == "bytes_reserved") es.reserved = static_cast<int64_t>(st.u);
  }
  return es;
}

// Device events: copies, sets, kernels and derived lines; host events: launches (with a
// correlation id), Python frames and ops.
StringId event_category(std::string_view ename, const PlaneCtx& c, const LineCtx& l,
                        const EventStats& es) {
  const PlaneKeys& k = c.k;
  if (!c.host) {
    if (!es.memcpy_details.empty() || ename.starts_with("Memcpy") || ename.starts_with("Copy"))
      return k.k_memcpy;
    if (ename.starts_with("Memset") || ename.starts_with("memset")) return k.k_memset;
    if (l.stream_line || !es.kernel_details.empty()) return k.k_kernel;
    return k.k_ann;  // derived lines (XLA Ops, XLA Modules, Steps) on the device
  }
  if (es.corr) return k.k_runtime;
  if (ename.starts_with("$")) return k.k_py;
  return k.k_op;
}

void XSpaceReader::add_event_args(const Plane& p, const PlaneCtx& c, const LineCtx& l,
                                  const EventStats& es, const std::vector<Stat>& stats) {
  const PlaneKeys& k = c.k;
  if (!c.host) {
    b_.arg_int(k.k_device, c.device);
    b_.arg_int(k.k_stream, l.stream);
  }
  if (es.corr) b_.arg_int(k.k_corr, static_cast<int64_t>(es.corr->u));
  if (!es.kernel_details.empty()) {
    auto triple = [](std::string_view v) {
      std::string out = "[";
      for (char ch : v) out += ch == ',' ? std::string(", ") : std::string(1, ch);
      return out + "]";
    };
    if (auto g = detail(es.kernel_details, "grid"); !g.empty()) b_.arg_json(k.k_grid, triple(g));
    if (auto bl = detail(es.kernel_details, "block"); !bl.empty())
      b_.arg_json(k.k_block, triple(bl));
    if (auto sm = detail(es.kernel_details, "group_mem"); !sm.empty())
      b_.arg_int(k.k_smem, std::strtoll(std::string(sm).c_str(), nullptr, 10));
  }
  if (!es.memcpy_details.empty())
    if (auto sz = detail(es.memcpy_details, "size"); !sz.empty())
      b_.arg_int(k.k_bytes, std::strtoll(std::string(sz).c_str(), nullptr, 10));
  for (const Stat& st : stats) add_stat_arg(p, st);
}

// `stats`: the line's scratch vector for the event's stats.
Status XSpaceReader::import_event(const Plane& p, const ProtoField& ef, const PlaneCtx& c,
                                  const LineCtx& l, std::vector<Stat>& stats) {
  int64_t md = 0, offset_ps = 0, dur_ps = 0;
  stats.clear();
  bool ok = true;
  if (!for_each_field(ef.bytes, ef.offset, error_,
                      [&](const ProtoField& g) {
                        if (g.number == xf::kEventMetadataId) md = g.i64();
                        if (g.number == xf::kEventOffsetPs) offset_ps = g.i64();
                        if (g.number == xf::kEventDurationPs) dur_ps = g.i64();
                        if (g.number == xf::kEventStats && g.wire_type == 2) {
                          Stat st;
                          ok = ok && parse_stat(g, st);
                          stats.push_back(st);
                        }
                      }) ||
      !ok)
    return fail(error_);
  report_.read(c.host ? "host events" : "device events");
  if (dur_ps < 0) {
    report_.skipped("events with a negative duration");
    b_.trace().meta.import_stats.note(ImportProblem::kNegativeDuration, ef.offset,
                                      "XEvent with a negative duration");
    return Status::ok();
  }
  auto mit = p.events.find(md);
  std::string_view ename = mit == p.events.end() ? std::string_view() : mit->second.first;
  if (ename.empty() && mit != p.events.end()) ename = mit->second.second;
  int64_t ts = l.line_ts + offset_ps / 1000, dur = dur_ps / 1000;
  const EventStats es = event_stats(p, stats);
  if (c.host && (ename == "MemoryAllocation" || ename == "MemoryDeallocation") &&
      es.alloc_bytes >= 0) {
    // The XLA allocator's TraceMe: memory events, as Kineto's [memory] instants.
    b_.add_memory(l.track, ts, static_cast<uint64_t>(es.addr),
                  ename == "MemoryAllocation" ? es.alloc_bytes : -es.alloc_bytes, DeviceType::kCuda,
                  0, es.allocated, es.reserved);
    return Status::ok();
  }
  StringId cat = event_category(ename, c, l, es);
  std::string nm(ename);
  if (cat == c.k.k_memcpy && !c.host) nm = memcpy_name(ename, detail(es.memcpy_details, "kind"));
  uint32_t mark = b_.args_mark();
  add_event_args(p, c, l, es, stats);
  b_.add_slice(l.track, ts, dur, b_.intern(nm.empty() ? "(unnamed)" : nm), cat,
               b_.args_since(mark));
  if (es.step >= 0 && c.host)
    b_.add_slice(l.track, ts, dur, b_.intern("ProfilerStep#" + std::to_string(es.step)), c.k.k_op);
  if (es.corr && c.host) launches_.emplace(static_cast<int64_t>(es.corr->u), Launch{l.track, ts});
  if (es.corr && !c.host) work_.push_back({l.track, ts, static_cast<int64_t>(es.corr->u)});
  return Status::ok();
}

Result<Trace> XSpaceReader::run() {
  ProtoSpan all{reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()};
  std::vector<ProtoField> planes;
  std::vector<std::string> hostnames;
  if (!for_each_field(all, 0, error_, [&](const ProtoField& f) {
        if (f.number == xf::kSpacePlanes && f.wire_type == 2) planes.push_back(f);
        if (f.number == xf::kSpaceHostnames && f.wire_type == 2)
          hostnames.emplace_back(f.bytes.str());
        if ((f.number == xf::kSpaceErrors || f.number == xf::kSpaceWarnings) && f.wire_type == 2)
          report_.note(std::string(f.number == xf::kSpaceErrors ? "profiler error: "
                                                                : "profiler warning: ") +
                       std::string(f.bytes.str().substr(0, 200)));
      }))
    return fail(error_);
  if (planes.empty()) return fail("no planes");
  for (size_t i = 0; i < planes.size(); ++i) {
    Plane p;
    if (!read_plane(planes[i], p)) return fail(error_);
    report_.read("planes");
    MLPROF_RETURN_IF_ERROR(import_plane(p, i));
  }
  StringId k_flow = b_.intern("ac2g");
  uint64_t unlinked = 0;
  for (const Work& w : work_) {
    auto l = launches_.find(w.corr);
    if (l == launches_.end()) {
      ++unlinked;
      continue;
    }
    b_.add_flow(static_cast<uint64_t>(w.corr), k_flow, l->second.track, l->second.ts, w.track,
                w.ts);
  }
  if (unlinked)
    report_.note(std::to_string(unlinked) + " device events without their launch (no flow)");
  if (!hostnames.empty())
    b_.trace().meta.extra.emplace_back("xspaceHostname", "\"" + hostnames[0] + "\"");
  ImportStats stats = b_.trace().meta.import_stats;
  Trace t = std::move(b_).finish();
  t.meta.import_stats = stats;
  t.meta.format = "xspace";
  t.meta.source = name_;
  report_.store(t, "xspace");
  if (t.event_count() == 0) return Status::error(name_ + ": an XSpace profile without events");
  return t;
}

}  // namespace

bool looks_like_xspace(std::string_view head) {
  if (head.size() < 4 || static_cast<unsigned char>(head[0]) != 0x0A) return false;
  // XSpace.planes[0]: length, then the plane's fields; its name (field 2) comes within the
  // first few bytes (after an optional id).
  ProtoSpan span{reinterpret_cast<const uint8_t*>(head.data()), head.size()};
  google::protobuf::io::CodedInputStream in(span.data, static_cast<int>(span.size));
  uint32_t len = 0;
  if (in.ReadTag() != 0x0A || !in.ReadVarint32(&len)) return false;
  for (int i = 0; i < 2; ++i) {
    uint32_t tag = in.ReadTag();
    if (tag == 0x08) {  // id
      uint64_t v;
      if (!in.ReadVarint64(&v)) return false;
      continue;
    }
    if (tag != 0x12) return false;  // name
    uint32_t n = 0;
    std::string name;
    if (!in.ReadVarint32(&n) || n == 0 || n > 256 || !in.ReadString(&name, static_cast<int>(n)))
      return false;
    return name.starts_with("/host:") || name.starts_with("/device:") || name == "Task Environment";
  }
  return false;
}

Result<Trace> import_xspace(std::string_view bytes, const std::string& name) {
  return XSpaceReader(bytes, name).run();
}

}  // namespace mlprof::import
