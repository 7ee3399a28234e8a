// Reads .mlprof files (layout: src/trace/formats/native_layout.h). Input is untrusted:
// every count is checked against the bytes left before anything is allocated, every index
// against the table it points into, so a truncated or corrupted file is an error, never a crash.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "import/error_text.h"
#include "mlprof/import.h"
#include "trace/formats/native_layout.h"
#include "trace/time_range.h"

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
  // n values (n checked against the bytes left first).
  template <typename T>
  void values(std::vector<T>& v, uint64_t n) {
    if (failed()) return;
    if (n > static_cast<uint64_t>(end_ - p_) / sizeof(T)) {
      fail("column of " + std::to_string(n) + " values exceeds the data left");
      return;
    }
    v.resize(n);
    if (n) std::memcpy(v.data(), p_, n * sizeof(T));
    p_ += n * sizeof(T);
  }
  uint32_t peek_tag() const {
    uint32_t v = 0;
    if (static_cast<size_t>(end_ - p_) >= sizeof(v)) std::memcpy(&v, p_, sizeof(v));
    return v;
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

// Calls f(column descriptor, column) for the input column `name` of `table`; false if none.
template <typename Table, typename F>
bool visit_input_column(Table& table, std::string_view name, F&& f) {
  bool found = false;
  schema::for_each_input_column<Table>([&](auto c) {
    if (!found && name == c.name) {
      found = true;
      f(c, table.*c.member);
    }
  });
  return found;
}

// Calls f(table) for the event table `name` of `t`; false if none.
template <typename F>
bool visit_table(Trace& t, std::string_view name, F&& f) {
  bool found = false;
  Trace::for_each_table([&](std::string_view n, auto member) {
    if (!found && n == name) {
      found = true;
      f(t.*member);
    }
  });
  return found;
}

// Input columns a file did not hold (written before they were added to the schema) get the
// schema's default for each row; `rows` is the table's row count in the file.
template <typename Table>
void fill_absent_columns(Table& table, size_t rows) {
  const typename Table::Row defaults{};
  schema::for_each_input_column<Table>([&](auto c) {
    auto& column = table.*c.member;
    if (column.empty()) column.assign(rows, defaults.*c.row_member);
  });
}

// One table's columns: equal lengths, and every reference inside what it points into.
template <typename Table>
std::string check_table(const Trace& t, std::string_view name, const Table& table) {
  using schema::Ref;
  const size_t rows = schema::rows(table);
  std::string error;
  schema::for_each_input_column<Table>([&](auto c) {
    if (!error.empty()) return;
    const auto& column = table.*c.member;
    if (column.size() != rows) {
      error = std::string(name) + " columns differ in length";
      return;
    }
    constexpr Ref ref = decltype(c)::ref;
    size_t limit = SIZE_MAX;
    if constexpr (ref == Ref::kString) limit = t.strings.size();
    if constexpr (ref == Ref::kTrack) limit = t.tracks.size();
    if constexpr (ref == Ref::kSeries) limit = t.counter_series.size();
    if constexpr (ref == Ref::kStack) limit = std::max<size_t>(1, t.stacks.size());
    if constexpr (ref == Ref::kSlice) limit = rows;  // never stored today
    if (limit == SIZE_MAX) return;
    for (auto v : column) {
      if constexpr (std::is_signed_v<std::remove_cvref_t<decltype(v)>>) {
        if (v < 0) {
          error = std::string(name) + "." + c.name + " is negative";
          return;
        }
      }
      if (static_cast<uint64_t>(v) >= limit) {
        error = std::string(name) + "." + c.name + " out of range";
        return;
      }
    }
  });
  if (!error.empty()) return error;
  // Ranges: [begin, begin + count) inside what they point into.
  auto check_range = [&](const auto& begin, const auto& count, size_t size, const char* what) {
    for (size_t i = 0; i < rows; ++i)
      if (uint64_t{begin[i]} + count[i] > size)
        return std::string(name) + " " + what + " out of range";
    return std::string();
  };
  if constexpr (requires {
                  table.args_begin;
                  table.args_count;
                })
    error = check_range(table.args_begin, table.args_count, t.args.size(), "args");
  if constexpr (requires {
                  table.frames_begin;
                  table.frames_count;
                })
    error = check_range(table.frames_begin, table.frames_count, t.stack_frames.size(), "frames");
  return error;
}

// Every cross-reference must point inside its table before TraceBuilder::finish() touches it.
std::string validate(const Trace& t) {
  const size_t nstr = t.strings.size(), nproc = t.processes.size();
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
  for (const CounterSeries& cs : t.counter_series)
    if (cs.process >= nproc || bad_str(cs.name) || bad_str(cs.unit)) return "bad counter series";
  std::string error;
  Trace::for_each_table([&](std::string_view name, auto member) {
    if (error.empty()) error = check_table(t, name, t.*member);
  });
  if (!error.empty()) return error;
  // Value rules the column types do not express.
  for (int64_t d : t.slices.dur)
    if (d < 0) return "negative slice duration";
  // Times within +-kMaxTimeNs, so spans fit 64 bits (trace/time_range.h; mlprof never writes
  // others).
  const char* out_of_range = "time out of range (beyond +-4.6e18 ns)";
  for (size_t i = 0; i < t.slices.size(); ++i)
    if (!time_in_range(t.slices.ts[i]) || t.slices.dur[i] > kMaxTimeNs ||
        !time_in_range(t.slices.ts[i] + t.slices.dur[i]))
      return std::string("slice ") + out_of_range;
  for (int64_t x : t.instants.ts)
    if (!time_in_range(x)) return std::string("instant ") + out_of_range;
  for (int64_t x : t.counters.ts)
    if (!time_in_range(x)) return std::string("counter ") + out_of_range;
  for (int64_t x : t.memory.ts)
    if (!time_in_range(x)) return std::string("memory event ") + out_of_range;
  for (size_t i = 0; i < t.flows.size(); ++i)
    if (!time_in_range(t.flows.src_ts[i]) || !time_in_range(t.flows.dst_ts[i]))
      return std::string("flow ") + out_of_range;
  for (int8_t d : t.memory.device_type)
    if (d < 0 || d > static_cast<int8_t>(DeviceType::kOther)) return "bad memory device type";
  for (uint8_t x : t.flows.dst_next)
    if (x > 1) return "bad flow dst_next (not 0 or 1)";
  return {};
}

// Version 2 tables: TABL sections until META (layout: trace/formats/native_layout.h).
void read_tables(PayloadReader& r, Trace& t) {
  using namespace native;
  std::vector<std::string> seen_tables;
  while (!r.failed() && r.peek_tag() == kTagTable) {
    r.pod<uint32_t>();
    std::string name = r.str();
    uint64_t rows = r.pod<uint64_t>();
    uint32_t columns = r.pod<uint32_t>();
    if (r.failed()) return;
    if (std::find(seen_tables.begin(), seen_tables.end(), name) != seen_tables.end())
      return r.fail("table " + import::printable(name) + " appears twice");
    seen_tables.push_back(name);
    bool known = visit_table(t, name, [&](auto& table) {
      using Table = std::remove_cvref_t<decltype(table)>;
      std::vector<std::string> seen;
      for (uint32_t i = 0; i < columns && !r.failed(); ++i) {
        std::string column = r.str();
        uint8_t type = r.pod<uint8_t>();
        uint8_t bytes = r.pod<uint8_t>();
        if (r.failed()) return;
        if (std::find(seen.begin(), seen.end(), column) != seen.end())
          return r.fail("column " + import::printable(name) + "." + import::printable(column) +
                        " appears twice");
        seen.push_back(column);
        bool found = visit_input_column(table, column, [&](auto c, auto& values) {
          using Value = typename decltype(c)::Value;
          if (type != type_code<Value>() || bytes != sizeof(Value))
            return r.fail("column " + name + "." + column + " has the wrong type");
          r.values(values, rows);
        });
        if (!found)
          return r.fail("unknown column " + import::printable(name) + "." +
                        import::printable(column));
      }
      if (r.failed()) return;
      // A row count only backed by the columns read (each checked against the bytes left).
      if (rows > 0 && seen.empty()) return r.fail("table " + name + " has rows but no columns");
      fill_absent_columns<Table>(table, rows);
    });
    if (!known) r.fail("unknown table " + import::printable(name));
  }
}

// Version 1 tables: fixed columns, each count-prefixed (native::kV1Columns).
void read_v1_table(PayloadReader& r, Trace& t, const native::V1Table& spec) {
  if (spec.tag != 0) r.expect_tag(spec.tag, std::string(spec.table).c_str());
  visit_table(t, spec.table, [&](auto& table) {
    using Table = std::remove_cvref_t<decltype(table)>;
    for (std::string_view column : spec.columns) {
      if (column.empty()) break;
      visit_input_column(table, column, [&](auto, auto& values) { r.column(values); });
    }
    if (r.failed()) return;
    // The first column's length is the row count; unequal ones fail validation.
    size_t rows = 0;
    visit_input_column(table, spec.columns[0], [&](auto, auto& values) { rows = values.size(); });
    fill_absent_columns<Table>(table, rows);
  });
}

void read_strings(PayloadReader& r, Trace& t) {
  r.expect_tag(native::kTagStrings, "strings");
  uint64_t nstr = r.count(4);
  for (uint64_t i = 0; i < nstr && !r.failed(); ++i) {
    std::string s = r.str();
    if (r.failed()) break;
    if (t.strings.intern(s) != i + 1) r.fail("duplicate string " + std::to_string(i + 1));
  }
}

void read_processes(PayloadReader& r, Trace& t) {
  r.expect_tag(native::kTagProcesses, "processes");
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
}

void read_tracks(PayloadReader& r, Trace& t) {
  r.expect_tag(native::kTagTracks, "tracks");
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
}

void read_args(PayloadReader& r, Trace& t) {
  r.expect_tag(native::kTagArgs, "args");
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
}

void read_counter_series(PayloadReader& r, Trace& t) {
  r.expect_tag(native::kTagCounterSeries, "counter series");
  uint64_t nseries = r.count(12);
  for (uint64_t i = 0; i < nseries && !r.failed(); ++i) {
    CounterSeries cs;
    cs.process = r.pod<uint32_t>();
    cs.name = r.pod<uint32_t>();
    cs.unit = r.pod<uint32_t>();
    t.counter_series.push_back(cs);
  }
}

void read_devices(PayloadReader& r, TraceMeta& md) {
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
}

// The metadata section, up to and including the end tag.
void read_meta(PayloadReader& r, TraceMeta& md) {
  r.expect_tag(native::kTagMeta, "metadata");
  r.str();  // the source recorded at write time; a loaded trace's source is the file it came from
  md.format = r.str();
  md.base_time_ns = r.pod<int64_t>();
  md.rank = r.pod<int32_t>();
  md.world_size = r.pod<int32_t>();
  md.schema_version = r.pod<int32_t>();
  md.display_time_unit = r.str();
  read_devices(r, md);
  uint64_t nextra = r.count(8);
  for (uint64_t i = 0; i < nextra && !r.failed(); ++i) {
    std::string k = r.str();
    std::string v = r.str();
    md.extra.emplace_back(std::move(k), std::move(v));
  }
  md.dropped_events = r.pod<uint64_t>();
  md.skipped_events = r.pod<uint64_t>();
  r.expect_tag(native::kTagEnd, "end");
}

Result<Trace> decode_payload(std::string_view payload, uint32_t version, const std::string& name) {
  using namespace native;
  PayloadReader r(payload);
  TraceBuilder b;
  Trace& t = b.trace();
  auto err = [&](const std::string& what) { return Status::error(name + ": " + what); };

  read_strings(r, t);
  read_processes(r, t);
  read_tracks(r, t);
  read_args(r, t);
  if (version == kNativeVersionV1) {
    // slices, instants, counter series, then counters, flows, memory, stacks and their frames.
    read_v1_table(r, t, kV1Columns[0]);
    read_v1_table(r, t, kV1Columns[1]);
    read_counter_series(r, t);
    for (size_t i = 2; i < std::size(kV1Columns); ++i) read_v1_table(r, t, kV1Columns[i]);
  } else {
    read_counter_series(r, t);
    read_tables(r, t);
  }

  TraceMeta& md = t.meta;
  read_meta(r, md);
  if (!r.failed() && !r.at_end()) r.fail("trailing bytes after the end section");
  if (r.failed()) return err(r.error());
  std::string invalid = validate(t);
  if (!invalid.empty()) return err(invalid);
  md.source = name;
  return std::move(b).finish();
}

}  // namespace

Result<Trace> load_native_buffer(std::string_view bytes, const std::string& name) {
  if (bytes.substr(0, native::kMagic.size()) != native::kMagic)
    return Status::error(name + ": not a .mlprof file (no .mlprof header)");
  if (bytes.size() < native::kHeaderBytes)
    return Status::error(name + ": truncated .mlprof file (the header is " +
                         std::to_string(bytes.size()) + " of " +
                         std::to_string(native::kHeaderBytes) + " bytes)");
  uint32_t version;
  uint64_t declared;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&declared, bytes.data() + 16, 8);
  if (version != native::kNativeVersion && version != native::kNativeVersionV1)
    return Status::error(name + ": .mlprof format version " + std::to_string(version) +
                         " is not supported (this mlprof reads versions " +
                         std::to_string(native::kNativeVersionV1) + " to " +
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
    return decode_payload(std::string_view(buf.get(), declared), version, name);
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
  return decode_payload(payload, version, name);
}

Result<Trace> load_native(const std::string& path) {
  // Read into memory, not mapped: a mapped file that shrinks while it is read (a capture being
  // rewritten in a directory `serve` watches) raises SIGBUS, where a read just comes up short
  // and the decoder reports a truncated file. The copy costs ~1% of a load (docs/hardening.md:
  // the file is the compressed form, about a tenth of the payload that is decoded anyway).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  // Sized by fstat (not zero-filled), read to the end of the file whatever its size is by then.
  size_t capacity = static_cast<size_t>(st.st_size) + 1, have = 0;
  std::unique_ptr<char[]> bytes(new (std::nothrow) char[capacity]);
  for (;;) {
    if (!bytes) {
      ::close(fd);
      return Status::error(path + ": cannot allocate " + std::to_string(capacity) + " bytes");
    }
    if (have == capacity) {  // the file grew while it was read
      std::unique_ptr<char[]> bigger(new (std::nothrow) char[capacity * 2]);
      if (bigger) std::memcpy(bigger.get(), bytes.get(), have);
      bytes = std::move(bigger);
      capacity *= 2;
      continue;
    }
    ssize_t n = ::read(fd, bytes.get() + have, capacity - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return Status::error(path + ": read error: " + std::strerror(e));
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  return load_native_buffer(std::string_view(bytes.get(), have), path);
}

}  // namespace mlprof
