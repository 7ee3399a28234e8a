// Writes a Trace as a .mlprof file (layout: src/trace/formats/native_layout.h).
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "mlprof/native_format.h"
#include "trace/formats/native_layout.h"
#include "trace/output_file.h"

namespace mlprof {

static_assert(kNativeMagic == native::kMagic, "the public and the layout's magic are one");

namespace {

// First pass: the payload's size (the header holds it before the compressed frame).
class CountingWriter {
 public:
  template <typename T>
  void pod(T) {
    static_assert(std::is_trivially_copyable_v<T>);
    size_ += sizeof(T);
  }
  template <typename T>
  void values(const std::vector<T>& v) {
    size_ += v.size() * sizeof(T);
  }
  void str(std::string_view s) { size_ += sizeof(uint32_t) + s.size(); }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_ = 0;
};

// Second pass: streams the payload through zstd into the file. Small fields gather in a staging
// buffer; columns go to the compressor straight from the Trace, so no copy of the payload (as
// big as the trace: hundreds of MB of fresh pages for a big `mlprof run`) is ever made.
class ZstdWriter {
 public:
  ZstdWriter(ZSTD_CCtx* cctx, FILE* f) : cctx_(cctx), file_(f), out_(ZSTD_CStreamOutSize()) {
    staging_.reserve(kStaging);
  }
  template <typename T>
  void pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    small(&v, sizeof(T));
  }
  template <typename T>
  void values(const std::vector<T>& v) {
    bytes(v.data(), v.size() * sizeof(T));
  }
  void str(std::string_view s) {
    pod<uint32_t>(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  // Ends the frame; false (with error()) on a compression or write error.
  bool finish() {
    flush_staging();
    compress(nullptr, 0, ZSTD_e_end);
    return error_.empty();
  }
  const std::string& error() const { return error_; }

 private:
  static constexpr size_t kStaging = 1 << 16;

  void small(const void* p, size_t n) {
    if (staging_.size() + n > kStaging) flush_staging();
    staging_.append(static_cast<const char*>(p), n);
  }
  void bytes(const void* p, size_t n) {
    if (n < kStaging / 4) return small(p, n);
    flush_staging();
    compress(p, n, ZSTD_e_continue);
  }
  void flush_staging() {
    if (staging_.empty()) return;
    compress(staging_.data(), staging_.size(), ZSTD_e_continue);
    staging_.clear();
  }
  void compress(const void* p, size_t n, ZSTD_EndDirective mode) {
    if (!error_.empty()) return;
    ZSTD_inBuffer in{p, n, 0};
    for (;;) {
      ZSTD_outBuffer out{out_.data(), out_.size(), 0};
      size_t left = ZSTD_compressStream2(cctx_, &out, &in, mode);
      if (ZSTD_isError(left)) {
        error_ = std::string("zstd: ") + ZSTD_getErrorName(left);
        return;
      }
      if (out.pos > 0 && std::fwrite(out_.data(), 1, out.pos, file_) != out.pos) {
        error_ = std::string("write failed: ") + std::strerror(errno);
        return;
      }
      bool done = mode == ZSTD_e_end ? left == 0 : in.pos == in.size;
      if (done) return;
    }
  }

  ZSTD_CCtx* cctx_;
  FILE* file_;
  std::string staging_;
  std::vector<char> out_;
  std::string error_;
};

template <typename Writer>
void encode_payload(const Trace& t, Writer& w) {
  using namespace native;
  w.pod(kTagStrings);
  w.pod(static_cast<uint64_t>(t.strings.size() - 1));  // id 0 ("") is implicit
  for (size_t i = 1; i < t.strings.size(); ++i) w.str(t.strings.get(static_cast<StringId>(i)));

  w.pod(kTagProcesses);
  w.pod(static_cast<uint64_t>(t.processes.size()));
  for (const Process& p : t.processes) {
    w.pod(p.pid);
    w.pod(p.label);
    w.pod(p.name);
    w.pod(p.sort_index);
    w.pod(static_cast<uint8_t>(p.is_gpu));
    w.pod(static_cast<uint64_t>(p.labels.size()));
    for (auto& [k, v] : p.labels) {
      w.pod(k);
      w.pod(v);
    }
  }

  w.pod(kTagTracks);
  w.pod(static_cast<uint64_t>(t.tracks.size()));
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
  w.pod(static_cast<uint64_t>(t.args.size()));
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

  w.pod(kTagCounterSeries);
  w.pod(static_cast<uint64_t>(t.counter_series.size()));
  for (const CounterSeries& cs : t.counter_series) {
    w.pod(cs.process);
    w.pod(cs.name);
    w.pod(cs.unit);
  }

  // The event tables: every input column the schema (mlprof/trace.h) lists, named.
  Trace::for_each_table([&](std::string_view name, auto table_member) {
    const auto& table = t.*table_member;
    using Table = std::remove_cvref_t<decltype(table)>;
    const uint64_t rows = schema::rows(table);
    uint32_t columns = 0;
    schema::for_each_input_column<Table>([&](auto) { ++columns; });
    w.pod(kTagTable);
    w.str(name);
    w.pod(rows);
    w.pod(columns);
    schema::for_each_input_column<Table>([&](auto c) {
      using Value = typename decltype(c)::Value;
      w.str(c.name);
      w.pod(type_code<Value>());
      w.pod(static_cast<uint8_t>(sizeof(Value)));
      w.values(table.*c.member);
    });
  });

  const TraceMeta& md = t.meta;
  w.pod(kTagMeta);
  w.str(md.source);
  w.str(md.format);
  w.pod(md.base_time_ns);
  w.pod(md.rank);
  w.pod(md.world_size);
  w.pod(md.schema_version);
  w.str(md.display_time_unit);
  w.pod(static_cast<uint64_t>(md.devices.size()));
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
  w.pod(static_cast<uint64_t>(md.extra.size()));
  for (auto& [k, v] : md.extra) {
    w.str(k);
    w.str(v);
  }
  w.pod(md.dropped_events);
  w.pod(md.skipped_events);
  w.pod(kTagEnd);
}

// Level 1: on mlprof run's memory columns it is both ~2x faster than level 3 and no bigger
// (69 vs 72 MB for 8M events); big payloads are compressed on two threads.
constexpr int kZstdLevel = 1;
constexpr uint64_t kZstdThreadedBytes = 32ull << 20;

}  // namespace

Status save_native(const Trace& trace, const std::string& path) {
  CountingWriter counter;
  encode_payload(trace, counter);
  std::string header(kNativeMagic);
  uint32_t version = native::kNativeVersion, reserved = 0;
  uint64_t size = counter.size();
  header.append(reinterpret_cast<const char*>(&version), 4);
  header.append(reinterpret_cast<const char*>(&reserved), 4);
  header.append(reinterpret_cast<const char*>(&size), 8);

  // A temporary file renamed into place: a crash never leaves half a file under `path`.
  Result<OutputFile> out = OutputFile::open(path);
  MLPROF_RETURN_IF_ERROR(out);
  FILE* f = out->stdio();
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kZstdLevel);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  // Fails harmlessly (stays single-threaded) with a libzstd built without threads.
  if (size >= kZstdThreadedBytes) ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, 2);
  ZSTD_CCtx_setPledgedSrcSize(cctx, size);
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  std::string error = ok ? "" : std::string("write failed: ") + std::strerror(errno);
  if (ok) {
    ZstdWriter w(cctx, f);
    encode_payload(trace, w);
    ok = w.finish();
    if (!ok) error = w.error();
  }
  ZSTD_freeCCtx(cctx);
  if (!ok)
    return Status::error(StatusCode::kIo, path + ": " + error);  // `out` removes the temporary file
  return out->commit();
}

}  // namespace mlprof
