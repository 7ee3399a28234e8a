#include "import/importer_registry.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "import/compile_log_importer.h"
#include "import/memory_snapshot_importer.h"
#include "import/memory_timeline_importer.h"
#include "import/perfetto_importer.h"
#include "import/proton_importer.h"
#include "import/rocprof_importer.h"
#include "import/sqlite_db.h"
#include "import/sqlite_trace.h"
#include "import/xplane_importer.h"
#include "trace/formats/native_layout.h"

namespace mlprof::import {

namespace {

// ---- mlprof's own .mlprof files: by their raw magic bytes (never compressed) ----

bool sniff_native(const InputHead& h) {
  return h.raw.starts_with(native::kMagic.substr(0, 6));  // "MLPROF", any marker byte
}

Result<Trace> load_native_file(OpenedInput& in) {
  // "MLPROF" with another marker byte: not a JSON trace either.
  if (!in.head.raw.starts_with(native::kMagic))
    return Status::error(in.path + ": not a .mlprof file this mlprof reads (unknown header)");
  // The header states the payload size: past the limit, nothing is read.
  uint64_t declared = 0;
  if (in.head.raw.size() >= native::kHeaderBytes)
    std::memcpy(&declared, in.head.raw.data() + 16, 8);
  if (declared > in.limit)
    return over_limit_error(in.path, "its payload (" + mib(declared) + ")", in.limit);
  return load_native(in.path);
}

// ---- SQLite databases: Nsight Systems exports, ROCm rpd_tracer files ----

bool sniff_sqlite(const InputHead& h) { return h.text.starts_with(kSqliteMagic); }

Result<Trace> load_sqlite(OpenedInput& in) {
  Result<std::unique_ptr<SqliteDb>> db = Status::error("");
  if (!in.head.compressed) {
    db = SqliteDb::open_file(in.path);
  } else {  // a gzip'ed .rpd: SQLite needs it whole, in memory
    std::string bytes;
    MLPROF_RETURN_IF_ERROR(read_whole(in, bytes));
    db = SqliteDb::open_bytes(std::move(bytes), in.path);
  }
  MLPROF_RETURN_IF_ERROR(db);
  return import_sqlite_trace(**db, in.options);
}

// Under --strict the first import problem of a reader that counts them is the error.
Result<Trace> strict(Result<Trace> t, const ImportOptions& options) {
  if (t && options.strict) {
    MLPROF_RETURN_IF_ERROR(strict_error(*t));
  }
  return t;
}

// ---- rocprofv3 (rocprofiler-sdk) JSON: one document, not a Chrome trace ----

bool sniff_rocprofv3(const InputHead& h) { return looks_like_rocprofv3(h.text); }

Result<Trace> load_rocprofv3(OpenedInput& in) {
  std::string bytes;
  MLPROF_RETURN_IF_ERROR(read_whole(in, bytes));
  return strict(import_rocprofv3(std::move(bytes), in.path), in.options);
}

// Text formats whose first bytes a binary sniff below could mistake for its own.
bool other_text(const InputHead& h) {
  return looks_like_memory_snapshot(h.text) || looks_like_compile_log(h.text);
}

// ---- Triton Proton profiles: a JSON [call tree, devices] pair ----

bool sniff_proton(const InputHead& h) { return looks_like_proton(h.text); }

Result<Trace> load_proton(OpenedInput& in) {
  std::string bytes;
  MLPROF_RETURN_IF_ERROR(read_whole(in, bytes));
  return import_proton(std::move(bytes), in.path);
}

// ---- Perfetto protobuf traces (*.pftrace) ----

bool sniff_perfetto(const InputHead& h) {
  return !other_text(h) && !looks_like_xspace(h.text) &&
         (looks_like_perfetto(h.text) || h.path.ends_with(".pftrace") ||
          h.path.ends_with(".perfetto-trace"));
}

Result<Trace> load_perfetto(OpenedInput& in) {
  std::string bytes;
  MLPROF_RETURN_IF_ERROR(read_whole(in, bytes));
  return strict(import_perfetto(bytes, in.path), in.options);
}

// ---- JAX/XLA profiler XSpace protobufs (*.xplane.pb) ----

bool sniff_xspace(const InputHead& h) {
  return !other_text(h) && (looks_like_xspace(h.text) || h.path.ends_with(".xplane.pb"));
}

Result<Trace> load_xspace(OpenedInput& in) {
  std::string bytes;
  MLPROF_RETURN_IF_ERROR(read_whole(in, bytes));
  return strict(import_xspace(bytes, in.path), in.options);
}

// ---- torch.cuda.memory._dump_snapshot: a pickle or its JSON twin ----

bool sniff_snapshot(const InputHead& h) { return looks_like_memory_snapshot(h.text); }

Result<Trace> load_snapshot(OpenedInput& in) {
  bool pickle = !in.head.text.empty() && static_cast<unsigned char>(in.head.text[0]) == 0x80;
  Result<MemorySnapshot> snap = import_memory_snapshot(in.bytes, in.path, pickle);
  MLPROF_RETURN_IF_ERROR(snap);
  Trace t = memory_snapshot_to_trace(snap.value());
  t.memory_snapshot = std::make_shared<const MemorySnapshot>(std::move(snap.value()));
  return t;
}

// ---- a torch.compile structured log (TORCH_TRACE): the compile analysis' input ----

bool sniff_compile_log(const InputHead& h) { return looks_like_compile_log(h.text); }

Result<Trace> load_compile_log_file(OpenedInput& in) {
  Result<CompileLog> log =
      import_compile_log(in.bytes, in.options.name.empty() ? in.path : in.options.name);
  MLPROF_RETURN_IF_ERROR(log);
  std::vector<CompileLog> logs;
  logs.push_back(std::move(log.value()));
  return compile_logs_trace(std::move(logs), in.path);
}

// ---- PyTorch's export_memory_timeline raw lists: a JSON list of lists ----

bool sniff_memory_timeline(const InputHead& h) {
  std::string_view s = h.text;
  size_t i = s.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || s[i] != '[') return false;
  size_t j = s.find_first_not_of(" \t\r\n", i + 1);
  return j != std::string_view::npos && s[j] == '[';
}

Result<Trace> load_memory_timeline(OpenedInput& in) {
  Result<Trace> t = import_memory_timeline(in.bytes, in.path);
  if (t) t->meta.source = in.path;
  return t;
}

// ---- Chrome trace JSON / Kineto: whatever no other row claimed ----

Result<Trace> load_chrome(OpenedInput& in) {
  return import_chrome_stream(in.bytes, in.path, in.options);
}

// In the order load_trace tries them; the fallback (no sniff) last.
constexpr Importer kImporters[] = {
    {"mlprof-native", ".mlprof", true, sniff_native, load_native_file},
    {"sqlite (nsys, rpd)", ".sqlite .rpd", true, sniff_sqlite, load_sqlite},
    {"rocprofv3-json", ".json", true, sniff_rocprofv3, load_rocprofv3},
    {"perfetto-protobuf", ".pftrace .perfetto-trace", true, sniff_perfetto, load_perfetto},
    {"xla-xspace", ".xplane.pb", true, sniff_xspace, load_xspace},
    {"cuda-memory-snapshot", ".pickle .pickle.gz", false, sniff_snapshot, load_snapshot},
    {"torch-compile-log", ".log .log.gz", false, sniff_compile_log, load_compile_log_file},
    {"triton-proton", ".json .hatchet", false, sniff_proton, load_proton},
    {"pytorch-memory-timeline", ".json .json.gz", true, sniff_memory_timeline,
     load_memory_timeline},
    {"chrome-json", ".json .json.gz", true, nullptr, load_chrome},
};

template <typename Fn>
void for_each_extension(std::string_view list, Fn&& fn) {
  for (size_t at = 0; at < list.size();) {
    size_t end = list.find(' ', at);
    if (end == std::string_view::npos) end = list.size();
    if (end > at) fn(list.substr(at, end - at));
    at = end + 1;
  }
}

}  // namespace

Status read_whole(OpenedInput& in, std::string& bytes) {
  bytes.clear();
  char buf[1 << 16];
  for (size_t n; (n = in.bytes.read(buf, sizeof buf)) > 0;) bytes.append(buf, n);
  return in.bytes.status();
}

std::span<const Importer> importers() { return kImporters; }

bool has_trace_extension(std::string_view file_name, bool rank_only) {
  bool found = false;
  for (const Importer& row : importers()) {
    if (rank_only && !row.rank_trace) continue;
    for_each_extension(row.extensions,
                       [&](std::string_view ext) { found = found || file_name.ends_with(ext); });
  }
  return found;
}

std::string rank_trace_patterns() {
  std::vector<std::string_view> all;
  for (const Importer& row : importers())
    if (row.rank_trace)
      for_each_extension(row.extensions, [&](std::string_view e) { all.push_back(e); });
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  std::string out;
  for (std::string_view e : all) out += (out.empty() ? "*" : ", *") + std::string(e);
  return out;
}

}  // namespace mlprof::import
