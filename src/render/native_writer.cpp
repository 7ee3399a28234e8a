// Writes a Trace as a .mlprof file (layout: include/mlprof/detail/native_layout.h).
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "mlprof/detail/native_layout.h"
#include "mlprof/native_format.h"

namespace mlprof {
namespace {

class PayloadWriter {
 public:
  template <typename T>
  void pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename T>
  void column(const std::vector<T>& v) {
    pod<uint64_t>(v.size());
    if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void str(std::string_view s) {
    pod<uint32_t>(static_cast<uint32_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

std::string encode_payload(const Trace& t) {
  using namespace native;
  PayloadWriter w;
  w.pod(kTagStrings);
  w.pod<uint64_t>(t.strings.size() - 1);  // id 0 ("") is implicit
  for (size_t i = 1; i < t.strings.size(); ++i) w.str(t.strings.get(static_cast<StringId>(i)));

  w.pod(kTagProcesses);
  w.pod<uint64_t>(t.processes.size());
  for (const Process& p : t.processes) {
    w.pod(p.pid);
    w.pod(p.label);
    w.pod(p.name);
    w.pod(p.sort_index);
    w.pod<uint8_t>(p.is_gpu);
    w.pod<uint64_t>(p.labels.size());
    for (auto& [k, v] : p.labels) {
      w.pod(k);
      w.pod(v);
    }
  }

  w.pod(kTagTracks);
  w.pod<uint64_t>(t.tracks.size());
  for (const Track& k : t.tracks) {
    w.pod(static_cast<uint8_t>(k.kind));
    w.pod(k.process);
    w.pod(k.pid);
    w.pod(k.tid);
    w.pod(k.label);
    w.pod(k.name);
    w.pod(k.sort_index);
    w.pod(k.device);
    w.pod(k.stream);
  }

  w.pod(kTagArgs);
  w.pod<uint64_t>(t.args.size());
  for (const Arg& a : t.args) {
    w.pod(a.key);
    w.pod(static_cast<uint8_t>(a.type));
    uint64_t bits = 0;
    if (a.type == ArgType::kBool)
      bits = a.b ? 1 : 0;
    else
      bits = a.u;
    w.pod(bits);
  }

  const SliceTable& s = t.slices;
  w.pod(kTagSlices);
  w.column(s.ts);
  w.column(s.dur);
  w.column(s.track);
  w.column(s.name);
  w.column(s.cat);
  w.column(s.args_begin);
  w.column(s.args_count);

  const InstantTable& in = t.instants;
  w.pod(kTagInstants);
  w.column(in.ts);
  w.column(in.track);
  w.column(in.name);
  w.column(in.cat);
  w.column(in.args_begin);
  w.column(in.args_count);
  w.column(in.scope);

  w.pod(kTagCounterSeries);
  w.pod<uint64_t>(t.counter_series.size());
  for (const CounterSeries& cs : t.counter_series) {
    w.pod(cs.process);
    w.pod(cs.name);
    w.pod(cs.unit);
  }
  w.pod(kTagCounters);
  w.column(t.counters.ts);
  w.column(t.counters.series);
  w.column(t.counters.value);

  const FlowTable& f = t.flows;
  w.pod(kTagFlows);
  w.column(f.id);
  w.column(f.cat);
  w.column(f.src_ts);
  w.column(f.dst_ts);
  w.column(f.src_track);
  w.column(f.dst_track);

  const MemoryTable& m = t.memory;
  w.pod(kTagMemory);
  w.column(m.ts);
  w.column(m.track);
  w.column(m.addr);
  w.column(m.bytes);
  w.column(m.device_type);
  w.column(m.device_id);
  w.column(m.total_allocated);
  w.column(m.total_reserved);
  w.column(m.stack);

  w.pod(kTagStacks);
  w.column(t.stacks.frames_begin);
  w.column(t.stacks.frames_count);
  w.column(t.stacks.frames);

  const TraceMeta& md = t.meta;
  w.pod(kTagMeta);
  w.str(md.source);
  w.str(md.format);
  w.pod(md.base_time_ns);
  w.pod(md.rank);
  w.pod(md.world_size);
  w.pod(md.schema_version);
  w.str(md.display_time_unit);
  w.pod<uint64_t>(md.devices.size());
  for (const DeviceInfo& d : md.devices) {
    w.pod(d.id);
    w.str(d.name);
    w.pod(d.total_global_mem);
    w.pod(d.compute_major);
    w.pod(d.compute_minor);
    w.pod(d.num_sms);
    w.pod(d.max_threads_per_block);
    w.pod(d.max_threads_per_sm);
    w.pod(d.regs_per_block);
    w.pod(d.regs_per_sm);
    w.pod(d.warp_size);
    w.pod(d.shared_mem_per_block);
    w.pod(d.shared_mem_per_sm);
  }
  w.pod<uint64_t>(md.extra.size());
  for (auto& [k, v] : md.extra) {
    w.str(k);
    w.str(v);
  }
  w.pod(md.dropped_events);
  w.pod(md.skipped_events);
  w.pod(kTagEnd);
  return std::move(w.bytes());
}

}  // namespace

Status save_native(const Trace& trace, const std::string& path) {
  std::string payload = encode_payload(trace);
  std::string file(kNativeMagic);
  uint32_t version = native::kNativeVersion, reserved = 0;
  uint64_t size = payload.size();
  file.append(reinterpret_cast<const char*>(&version), 4);
  file.append(reinterpret_cast<const char*>(&reserved), 4);
  file.append(reinterpret_cast<const char*>(&size), 8);
  size_t header = file.size();
  file.resize(header + ZSTD_compressBound(payload.size()));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(cctx, file.data() + header, file.size() - header, payload.data(),
                            payload.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) return Status::error(path + ": zstd: " + ZSTD_getErrorName(n));
  file.resize(header + n);

  // A temporary file renamed into place: a crash never leaves half a file under `path`.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::error(path + ": cannot open for writing: " + std::strerror(errno));
  bool ok = std::fwrite(file.data(), 1, file.size(), f) == file.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return Status::error(path + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    return Status::error(path + ": cannot rename into place: " + std::strerror(e));
  }
  return Status::ok();
}

}  // namespace mlprof
