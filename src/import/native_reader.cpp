// Reads .mlprof files (layout: include/mlprof/detail/native_layout.h). Input is untrusted:
// every count is checked against the bytes left before anything is allocated, every index
// against the table it points into, so a truncated or corrupted file is an error, never a crash.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "mlprof/detail/native_layout.h"
#include "mlprof/native_format.h"

namespace mlprof {
namespace {

// Stops decompressing beyond this many bytes (well above any trace that fits in memory).
constexpr uint64_t kMaxPayloadBytes = uint64_t{64} << 30;

class PayloadReader {
 public:
  explicit PayloadReader(std::string_view bytes)
      : p_(bytes.data()), begin_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  void fail(const std::string& what) {
    if (error_.empty()) error_ = "payload byte " + std::to_string(p_ - begin_) + ": " + what;
  }

  template <typename T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    if (failed()) return v;
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) {
      fail("truncated");
      return v;
    }
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  // A count of items of at least `min_item_bytes` each: bounded by the bytes left.
  uint64_t count(size_t min_item_bytes) {
    uint64_t n = pod<uint64_t>();
    if (failed()) return 0;
    if (min_item_bytes > 0 && n > static_cast<uint64_t>(end_ - p_) / min_item_bytes) {
      fail("count " + std::to_string(n) + " exceeds the data left");
      return 0;
    }
    return n;
  }
  template <typename T>
  void column(std::vector<T>& v) {
    uint64_t n = count(sizeof(T));
    if (failed()) return;
    v.resize(n);
    if (n) std::memcpy(v.data(), p_, n * sizeof(T));
    p_ += n * sizeof(T);
  }
  std::string str() {
    uint32_t n = pod<uint32_t>();
    if (failed()) return {};
    if (n > static_cast<size_t>(end_ - p_)) {
      fail("string length " + std::to_string(n) + " exceeds the data left");
      return {};
    }
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  void expect_tag(uint32_t tag, const char* section) {
    if (pod<uint32_t>() != tag && !failed()) fail(std::string("expected section ") + section);
  }
  bool at_end() const { return p_ == end_; }

 private:
  const char* p_;
  const char* begin_;
  const char* end_;
  std::string error_;
};

template <typename... Vs>
bool same_size(size_t n, const Vs&... vs) {
  return ((vs.size() == n) && ...);
}

// Every cross-reference must point inside its table before TraceBuilder::finish() touches it.
std::string validate(const Trace& t) {
  const size_t nstr = t.strings.size(), ntracks = t.tracks.size(), nproc = t.processes.size();
  const size_t nargs = t.args.size();
  auto bad_str = [&](StringId id) { return id >= nstr; };
  for (const Process& p : t.processes) {
    if (bad_str(p.label) || bad_str(p.name)) return "process string id out of range";
    for (auto& [k, v] : p.labels)
      if (bad_str(k) || bad_str(v)) return "process label string id out of range";
  }
  for (const Track& k : t.tracks) {
    if (static_cast<uint8_t>(k.kind) > static_cast<uint8_t>(TrackKind::kAsync))
      return "bad track kind";
    if (k.process >= nproc) return "track process out of range";
    if (bad_str(k.label) || bad_str(k.name)) return "track string id out of range";
  }
  for (const Arg& a : t.args) {
    if (bad_str(a.key)) return "arg key out of range";
    if (static_cast<uint8_t>(a.type) > static_cast<uint8_t>(ArgType::kJson)) return "bad arg type";
    if ((a.type == ArgType::kString || a.type == ArgType::kJson) && bad_str(a.s))
      return "arg string id out of range";
  }
  auto bad_args = [&](uint32_t b, uint32_t c) { return uint64_t{b} + c > nargs; };
  const SliceTable& s = t.slices;
  const size_t ns = s.ts.size();
  if (!same_size(ns, s.dur, s.track, s.name, s.cat, s.args_begin, s.args_count))
    return "slice columns differ in length";
  for (size_t i = 0; i < ns; ++i) {
    if (s.track[i] >= ntracks) return "slice track out of range";
    if (bad_str(s.name[i]) || bad_str(s.cat[i])) return "slice string id out of range";
    if (bad_args(s.args_begin[i], s.args_count[i])) return "slice args out of range";
    if (s.dur[i] < 0) return "negative slice duration";
  }
  const InstantTable& in = t.instants;
  if (!same_size(in.ts.size(), in.track, in.name, in.cat, in.args_begin, in.args_count, in.scope))
    return "instant columns differ in length";
  for (size_t i = 0; i < in.ts.size(); ++i) {
    if (in.track[i] >= ntracks) return "instant track out of range";
    if (bad_str(in.name[i]) || bad_str(in.cat[i])) return "instant string id out of range";
    if (bad_args(in.args_begin[i], in.args_count[i])) return "instant args out of range";
  }
  for (const CounterSeries& cs : t.counter_series)
    if (cs.process >= nproc || bad_str(cs.name) || bad_str(cs.unit)) return "bad counter series";
  const CounterTable& c = t.counters;
  if (!same_size(c.ts.size(), c.series, c.value)) return "counter columns differ in length";
  for (uint32_t x : c.series)
    if (x >= t.counter_series.size()) return "counter series out of range";
  const FlowTable& f = t.flows;
  if (!same_size(f.id.size(), f.cat, f.src_ts, f.dst_ts, f.src_track, f.dst_track))
    return "flow columns differ in length";
  for (size_t i = 0; i < f.id.size(); ++i)
    if (bad_str(f.cat[i]) || f.src_track[i] >= ntracks || f.dst_track[i] >= ntracks)
      return "flow reference out of range";
  const StackTable& st = t.stacks;
  if (st.frames_begin.size() != st.frames_count.size()) return "stack columns differ in length";
  for (size_t i = 0; i < st.frames_begin.size(); ++i)
    if (uint64_t{st.frames_begin[i]} + st.frames_count[i] > st.frames.size())
      return "stack frames out of range";
  for (StringId id : st.frames)
    if (bad_str(id)) return "stack frame string id out of range";
  const MemoryTable& m = t.memory;
  if (!same_size(m.ts.size(), m.track, m.addr, m.bytes, m.device_type, m.device_id,
                 m.total_allocated, m.total_reserved, m.stack))
    return "memory columns differ in length";
  const size_t nstacks = std::max<size_t>(1, st.frames_begin.size());
  for (size_t i = 0; i < m.ts.size(); ++i) {
    if (m.track[i] >= ntracks) return "memory track out of range";
    if (m.stack[i] >= nstacks) return "memory stack out of range";
    if (m.device_type[i] < 0 || m.device_type[i] > 2) return "bad memory device type";
  }
  return {};
}

Result<Trace> decode_payload(std::string_view payload, const std::string& name) {
  using namespace native;
  PayloadReader r(payload);
  TraceBuilder b;
  Trace& t = b.trace();
  auto err = [&](const std::string& what) { return Status::error(name + ": " + what); };

  r.expect_tag(kTagStrings, "strings");
  uint64_t nstr = r.count(4);
  for (uint64_t i = 0; i < nstr && !r.failed(); ++i) {
    std::string s = r.str();
    if (r.failed()) break;
    if (t.strings.intern(s) != i + 1) r.fail("duplicate string " + std::to_string(i + 1));
  }

  r.expect_tag(kTagProcesses, "processes");
  uint64_t nproc = r.count(29);
  for (uint64_t i = 0; i < nproc && !r.failed(); ++i) {
    Process p;
    p.pid = r.pod<int64_t>();
    p.label = r.pod<uint32_t>();
    p.name = r.pod<uint32_t>();
    p.sort_index = r.pod<int32_t>();
    p.is_gpu = r.pod<uint8_t>() != 0;
    uint64_t nl = r.count(8);
    for (uint64_t j = 0; j < nl && !r.failed(); ++j) {
      StringId k = r.pod<uint32_t>();
      StringId v = r.pod<uint32_t>();
      p.labels.emplace_back(k, v);
    }
    t.processes.push_back(std::move(p));
  }

  r.expect_tag(kTagTracks, "tracks");
  uint64_t ntracks = r.count(45);
  for (uint64_t i = 0; i < ntracks && !r.failed(); ++i) {
    Track k;
    uint8_t kind = r.pod<uint8_t>();
    if (kind > static_cast<uint8_t>(TrackKind::kAsync)) r.fail("bad track kind");
    k.kind = static_cast<TrackKind>(kind);
    k.process = r.pod<uint32_t>();
    k.pid = r.pod<int64_t>();
    k.tid = r.pod<int64_t>();
    k.label = r.pod<uint32_t>();
    k.name = r.pod<uint32_t>();
    k.sort_index = r.pod<int32_t>();
    k.device = r.pod<int32_t>();
    k.stream = r.pod<int64_t>();
    t.tracks.push_back(k);
  }

  r.expect_tag(kTagArgs, "args");
  uint64_t nargs = r.count(13);
  t.args.reserve(nargs);
  for (uint64_t i = 0; i < nargs && !r.failed(); ++i) {
    Arg a;
    a.key = r.pod<uint32_t>();
    uint8_t type = r.pod<uint8_t>();
    uint64_t bits = r.pod<uint64_t>();
    if (type > static_cast<uint8_t>(ArgType::kJson)) r.fail("bad arg type");
    a.type = static_cast<ArgType>(type);
    if (a.type == ArgType::kBool) {
      if (bits > 1) r.fail("bad bool arg");
      a.b = bits == 1;
    } else {
      a.u = bits;
    }
    t.args.push_back(a);
  }

  SliceTable& s = t.slices;
  r.expect_tag(kTagSlices, "slices");
  r.column(s.ts);
  r.column(s.dur);
  r.column(s.track);
  r.column(s.name);
  r.column(s.cat);
  r.column(s.args_begin);
  r.column(s.args_count);

  InstantTable& in = t.instants;
  r.expect_tag(kTagInstants, "instants");
  r.column(in.ts);
  r.column(in.track);
  r.column(in.name);
  r.column(in.cat);
  r.column(in.args_begin);
  r.column(in.args_count);
  r.column(in.scope);

  r.expect_tag(kTagCounterSeries, "counter series");
  uint64_t nseries = r.count(12);
  for (uint64_t i = 0; i < nseries && !r.failed(); ++i) {
    CounterSeries cs;
    cs.process = r.pod<uint32_t>();
    cs.name = r.pod<uint32_t>();
    cs.unit = r.pod<uint32_t>();
    t.counter_series.push_back(cs);
  }
  r.expect_tag(kTagCounters, "counters");
  r.column(t.counters.ts);
  r.column(t.counters.series);
  r.column(t.counters.value);

  FlowTable& f = t.flows;
  r.expect_tag(kTagFlows, "flows");
  r.column(f.id);
  r.column(f.cat);
  r.column(f.src_ts);
  r.column(f.dst_ts);
  r.column(f.src_track);
  r.column(f.dst_track);

  MemoryTable& m = t.memory;
  r.expect_tag(kTagMemory, "memory");
  r.column(m.ts);
  r.column(m.track);
  r.column(m.addr);
  r.column(m.bytes);
  r.column(m.device_type);
  r.column(m.device_id);
  r.column(m.total_allocated);
  r.column(m.total_reserved);
  r.column(m.stack);

  r.expect_tag(kTagStacks, "stacks");
  r.column(t.stacks.frames_begin);
  r.column(t.stacks.frames_count);
  r.column(t.stacks.frames);

  TraceMeta& md = t.meta;
  r.expect_tag(kTagMeta, "metadata");
  r.str();  // the source recorded at write time; a loaded trace's source is the file it came from
  md.format = r.str();
  md.base_time_ns = r.pod<int64_t>();
  md.rank = r.pod<int32_t>();
  md.world_size = r.pod<int32_t>();
  md.schema_version = r.pod<int32_t>();
  md.display_time_unit = r.str();
  uint64_t ndev = r.count(60);
  for (uint64_t i = 0; i < ndev && !r.failed(); ++i) {
    DeviceInfo d;
    d.id = r.pod<int32_t>();
    d.name = r.str();
    d.total_global_mem = r.pod<int64_t>();
    d.compute_major = r.pod<int32_t>();
    d.compute_minor = r.pod<int32_t>();
    d.num_sms = r.pod<int32_t>();
    d.max_threads_per_block = r.pod<int32_t>();
    d.max_threads_per_sm = r.pod<int32_t>();
    d.regs_per_block = r.pod<int32_t>();
    d.regs_per_sm = r.pod<int32_t>();
    d.warp_size = r.pod<int32_t>();
    d.shared_mem_per_block = r.pod<int64_t>();
    d.shared_mem_per_sm = r.pod<int64_t>();
    md.devices.push_back(std::move(d));
  }
  uint64_t nextra = r.count(8);
  for (uint64_t i = 0; i < nextra && !r.failed(); ++i) {
    std::string k = r.str();
    std::string v = r.str();
    md.extra.emplace_back(std::move(k), std::move(v));
  }
  md.dropped_events = r.pod<uint64_t>();
  md.skipped_events = r.pod<uint64_t>();
  r.expect_tag(kTagEnd, "end");
  if (!r.failed() && !r.at_end()) r.fail("trailing bytes after the end section");
  if (r.failed()) return err(r.error());
  std::string invalid = validate(t);
  if (!invalid.empty()) return err(invalid);
  md.source = name;
  return std::move(b).finish();
}

}  // namespace

Result<Trace> load_native_buffer(std::string_view bytes, const std::string& name) {
  if (bytes.size() < native::kHeaderBytes || bytes.substr(0, kNativeMagic.size()) != kNativeMagic)
    return Status::error(name + ": not an .mlprof file (bad header)");
  uint32_t version;
  uint64_t declared;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&declared, bytes.data() + 16, 8);
  if (version != native::kNativeVersion)
    return Status::error(name + ": .mlprof format version " + std::to_string(version) +
                         " is not supported (this mlprof reads version " +
                         std::to_string(native::kNativeVersion) + ")");
  if (declared > kMaxPayloadBytes)
    return Status::error(name + ": declared payload size " + std::to_string(declared) +
                         " is implausible");

  const char* src = bytes.data() + native::kHeaderBytes;
  size_t src_size = bytes.size() - native::kHeaderBytes;
  // The usual case: the frame states the declared size and the compressed size makes it
  // plausible: one shot into an uninitialized buffer (no window copies, no zero fill).
  bool plausible = declared <= static_cast<uint64_t>(src_size) * 64 + (1u << 20);
  if (plausible && ZSTD_getFrameContentSize(src, src_size) == declared) {
    size_t frame = ZSTD_findFrameCompressedSize(src, src_size);
    if (!ZSTD_isError(frame) && frame != src_size)
      return Status::error(name + ": trailing bytes after the compressed data");
    std::unique_ptr<char[]> buf(new (std::nothrow) char[declared ? declared : 1]);
    if (!buf)
      return Status::error(name + ": cannot allocate " + std::to_string(declared) + " bytes");
    size_t n = ZSTD_decompress(buf.get(), declared, src, src_size);
    if (ZSTD_isError(n))
      return Status::error(name + ": corrupt compressed data (" + ZSTD_getErrorName(n) + ")");
    if (n != declared)
      return Status::error(name + ": payload is " + std::to_string(n) + " bytes, header says " +
                           std::to_string(declared));
    return decode_payload(std::string_view(buf.get(), declared), name);
  }
  // Streamed, so a lying size field costs no more memory than the data actually inflates to;
  // sized up front for the declared size when the compressed size makes it plausible, so the
  // payload is not copied again and again as it grows.
  std::string payload;
  payload.reserve(static_cast<size_t>(
      std::min<uint64_t>(declared, static_cast<uint64_t>(bytes.size()) * 64 + (1u << 20))));
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ZSTD_inBuffer in{src, src_size, 0};
  size_t ret = 1;
  std::string error;
  while (true) {
    size_t chunk = ZSTD_DStreamOutSize();
    if (payload.size() > declared) {
      error = "payload larger than its declared size";
      break;
    }
    size_t old = payload.size();
    payload.resize(old + chunk);
    ZSTD_outBuffer out{payload.data() + old, chunk, 0};
    ret = ZSTD_decompressStream(dctx, &out, &in);
    payload.resize(old + out.pos);
    if (ZSTD_isError(ret)) {
      error = std::string("corrupt compressed data (") + ZSTD_getErrorName(ret) + ")";
      break;
    }
    if (ret == 0) break;  // frame complete (checksum verified)
    if (in.pos == in.size && out.pos < chunk) {
      error = "truncated (compressed data ends early)";
      break;
    }
  }
  ZSTD_freeDCtx(dctx);
  if (error.empty() && in.pos != in.size) error = "trailing bytes after the compressed data";
  if (error.empty() && payload.size() != declared)
    error = "payload is " + std::to_string(payload.size()) + " bytes, header says " +
            std::to_string(declared);
  if (!error.empty()) return Status::error(name + ": " + error);
  return decode_payload(payload, name);
}

Result<Trace> load_native(const std::string& path) {
  // Mapped, not read through a stream (which copied the file twice).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return load_native_buffer(std::string_view(), path);
  }
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return Status::error(path + ": cannot map: " + std::strerror(errno));
  ::madvise(m, size, MADV_SEQUENTIAL);
  Result<Trace> r = load_native_buffer(std::string_view(static_cast<const char*>(m), size), path);
  ::munmap(m, size);
  return r;
}

}  // namespace mlprof
