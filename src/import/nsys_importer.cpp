#include "import/nsys_importer.h"

#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlprof::import {

namespace {

// CUPTI_ACTIVITY_KIND_MEMCPY.copyKind (ENUM_CUDA_MEMCPY_OPER) as Kineto names them.
const char* copy_kind_name(int64_t k) {
  static const char* const kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                       "DtoA",    "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD"};
  return k >= 0 && k < 14 ? kNames[k] : "Unknown";
}

// nsys' ENUM_CUDA_MEM_KIND (not CUPTI's numbering: 0 is Pageable here).
const char* mem_kind_name(int64_t k) {
  static const char* const kNames[] = {"Pageable", "Pinned",        "Device",         "Array",
                                       "Managed",  "Device Static", "Managed Static", "Unknown"};
  return k >= 0 && k < 8 ? kNames[k] : "Unknown";
}

// ENUM_CUPTI_SYNC_TYPE, with Kineto's names.
const char* sync_name(int64_t t) {
  switch (t) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Unknown Sync";
  }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (nsys names the API version; Kineto does not).
std::string_view api_name(std::string_view s) {
  size_t v = s.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= s.size()) return s;
  for (size_t i = v + 2; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return s;
  return s.substr(0, v);
}

// globalTid = (hardware id << 48 | pid << 24 | tid), globalPid the same with tid 0.
int64_t gpid_of(int64_t gtid) { return gtid & ~int64_t{0xffffff}; }
int64_t pid_of(int64_t g) { return (g >> 24) & 0xffffff; }
int64_t tid_of(int64_t g) { return g & 0xffffff; }

constexpr int kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxDomainCreate = 75;

class NsysReader {
 public:
  explicit NsysReader(SqliteDb& db) : db_(db) {}
  Result<Trace> run();

 private:
  Status read_strings();
  void read_processes();
  void read_metadata();
  Status read_runtime();
  Status read_gpu(const char* table, int kind);
  Status read_nvtx();

  std::string_view string_of(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }
  uint32_t cpu_track(int64_t gtid);
  uint32_t gpu_track(int64_t device, int64_t stream);
  // The correlation id as mlprof's launch <-> GPU work key: CUPTI numbers them per process, so
  // with several processes the pid goes in the high bits.
  int64_t corr_key(int64_t gpid, int64_t corr) const {
    return multi_process_ ? (pid_of(gpid) << 40) | (corr & ((int64_t{1} << 40) - 1)) : corr;
  }
  bool good_times(int64_t start, int64_t end, const char* what) {
    if (end < start || start < 0) {
      report_.skipped(std::string(what) + " with end before start");
      b_.trace().meta.import_stats.note(ImportProblem::kNegativeDuration, UINT64_MAX,
                                        std::string(what) + " with end before start");
      return false;
    }
    return true;
  }
  void note_missing(const SqliteQuery& q, const std::string& table) {
    for (const std::string& c : q.missing()) report_.missing(table + "." + c);
  }

  SqliteDb& db_;
  TraceBuilder b_;
  ImportReport report_;
  std::unordered_map<int64_t, std::string> strings_;
  std::unordered_map<int64_t, std::string> domains_;  // NVTX domain id -> name
  std::unordered_map<int64_t, std::pair<int64_t, std::string>> processes_;  // gpid -> pid, name
  std::unordered_map<int64_t, int64_t> thread_names_;                       // gtid -> string id
  struct Launch {
    uint32_t track;
    int64_t ts;
  };
  std::unordered_map<int64_t, Launch> launches_;  // corr_key -> API call
  bool multi_process_ = false;
  uint64_t unlinked_ = 0;  // GPU work whose API call is not in the file (cut by the window)
  StringId k_corr_ = 0;
};

uint32_t NsysReader::cpu_track(int64_t gtid) {
  int64_t pid = pid_of(gtid), tid = tid_of(gtid);
  uint32_t p = b_.process(pid);
  Process& pr = b_.trace().processes[p];
  if (pr.name == 0) {
    auto it = processes_.find(gpid_of(gtid));
    if (it != processes_.end() && !it->second.second.empty())
      pr.name = b_.intern(it->second.second);
  }
  uint32_t t = b_.thread_track(p, tid);
  Track& tr = b_.trace().tracks[t];
  if (tr.name == 0) {
    auto it = thread_names_.find(gtid);
    std::string_view n = it == thread_names_.end() ? std::string_view() : string_of(it->second);
    tr.name = b_.intern(n.empty() ? "thread " + std::to_string(tid) : std::string(n));
  }
  return t;
}

uint32_t NsysReader::gpu_track(int64_t device, int64_t stream) {
  uint32_t p = b_.process(device);
  Process& pr = b_.trace().processes[p];
  pr.is_gpu = true;
  if (pr.name == 0) pr.name = b_.intern("GPU " + std::to_string(device));
  uint32_t t = b_.thread_track(p, stream);
  b_.mark_gpu_track(t, static_cast<int32_t>(device), stream);
  if (b_.trace().tracks[t].name == 0)
    b_.trace().tracks[t].name = b_.intern("stream " + std::to_string(stream));
  return t;
}

Status NsysReader::read_strings() {
  SqliteQuery q(db_, "StringIds", {"id", "value"});
  MLPROF_RETURN_IF_ERROR(q.status());
  while (q.next()) strings_.emplace(q.i64(0), std::string(q.text(1)));
  return q.status();
}

void NsysReader::read_processes() {
  if (db_.has_table("PROCESSES")) {
    SqliteQuery q(db_, "PROCESSES", {"globalPid", "?pid", "?name"});
    while (q.next())
      processes_[q.i64(0)] = {q.null(1) ? pid_of(q.i64(0)) : q.i64(1), std::string(q.text(2))};
  } else {
    report_.missing("PROCESSES");
  }
  if (db_.has_table("ThreadNames")) {
    SqliteQuery q(db_, "ThreadNames", {"globalTid", "nameId"});
    while (q.next()) thread_names_[q.i64(0)] = q.i64(1);
  } else {
    report_.missing("ThreadNames");
  }
}

void NsysReader::read_metadata() {
  TraceMeta& m = b_.trace().meta;
  if (db_.has_table("TARGET_INFO_GPU")) {
    SqliteQuery q(
        db_, "TARGET_INFO_GPU",
        {"?id", "?cuDevice", "?name", "?totalMemory", "?smCount", "?computeMajor", "?computeMinor",
         "?maxThreadsPerBlock", "?maxWarpsPerSm", "?threadsPerWarp", "?maxRegistersPerBlock",
         "?maxRegistersPerSm", "?maxShmemPerBlock", "?maxShmemPerSm"});
    while (q.next()) {
      DeviceInfo d;
      d.id = static_cast<int32_t>(q.null(1) ? q.i64(0) : q.i64(1));
      d.name = std::string(q.text(2));
      d.total_global_mem = q.i64(3);
      d.num_sms = static_cast<int32_t>(q.i64(4));
      d.compute_major = static_cast<int32_t>(q.i64(5));
      d.compute_minor = static_cast<int32_t>(q.i64(6));
      d.max_threads_per_block = static_cast<int32_t>(q.i64(7));
      d.warp_size = static_cast<int32_t>(q.i64(9));
      d.max_threads_per_sm = static_cast<int32_t>(q.i64(8) * q.i64(9));
      d.regs_per_block = static_cast<int32_t>(q.i64(10));
      d.regs_per_sm = static_cast<int32_t>(q.i64(11));
      d.shared_mem_per_block = q.i64(12);
      d.shared_mem_per_sm = q.i64(13);
      bool seen = false;
      for (const DeviceInfo& e : m.devices) seen |= e.id == d.id;
      if (!seen) m.devices.push_back(std::move(d));
    }
  } else {
    report_.missing("TARGET_INFO_GPU (GPU names and properties)");
  }
  if (db_.has_table("META_DATA_EXPORT")) {
    SqliteQuery q(db_, "META_DATA_EXPORT", {"name", "value"});
    while (q.next()) {
      std::string_view k = q.text(0);
      if (k == "EXPORT_SCHEMA_VERSION" || k == "EXPORT_PRODUCT_VERSION") {
        std::string key = k == "EXPORT_SCHEMA_VERSION" ? "nsysSchemaVersion" : "nsysVersion";
        m.extra.emplace_back(key, "\"" + std::string(q.text(1)) + "\"");
      }
    }
  }
  if (db_.has_table("TARGET_INFO_SESSION_START_TIME")) {
    SqliteQuery q(db_, "TARGET_INFO_SESSION_START_TIME", {"?utcEpochNs"});
    if (q.next() && !q.null(0))
      m.extra.emplace_back("nsysSessionStartUtcNs", std::to_string(q.i64(0)));
  }
}

Status NsysReader::read_runtime() {
  const char* table = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!db_.has_table(table)) {
    report_.missing(table);
    return Status::ok();
  }
  SqliteQuery q(
      db_, table,
      {"start", "end", "globalTid", "correlationId", "nameId", "?eventClass", "?returnValue"});
  MLPROF_RETURN_IF_ERROR(q.status());
  note_missing(q, table);
  StringId k_runtime = b_.intern("cuda_runtime"), k_driver = b_.intern("cuda_driver"),
           k_ret = b_.intern("return value");
  std::unordered_map<int64_t, StringId> names;
  while (q.next()) {
    report_.read("API calls");
    int64_t start = q.i64(0), end = q.i64(1), gtid = q.i64(2);
    if (!good_times(start, end, "API call")) continue;
    uint32_t track = cpu_track(gtid);
    auto [it, added] = names.emplace(q.i64(4), 0);
    if (added) {
      std::string_view n = string_of(q.i64(4));
      it->second = b_.intern(n.empty() ? "unknown API " + std::to_string(q.i64(4))
                                       : std::string(api_name(n)));
    }
    int64_t key = corr_key(gpid_of(gtid), q.i64(3));
    uint32_t mark = b_.args_mark();
    b_.arg_int(k_corr_, key);
    if (!q.null(6) && q.i64(6) != 0) b_.arg_int(k_ret, q.i64(6));
    b_.add_slice(track, start, end - start, it->second, q.i64(5) == 1 ? k_driver : k_runtime,
                 b_.args_since(mark));
    launches_.emplace(key, Launch{track, start});
  }
  return q.status();
}

// kind: 0 kernel, 1 memcpy, 2 memset, 3 synchronization.
Status NsysReader::read_gpu(const char* table, int kind) {
  static const char* const kWhat[] = {"kernels", "memcpys", "memsets", "synchronizations"};
  if (!db_.has_table(table)) {
    report_.missing(table);
    return Status::ok();
  }
  std::vector<std::string> cols = {"start",         "end",        "deviceId",  "streamId",
                                   "correlationId", "?globalPid", "?contextId"};
  switch (kind) {
    case 0:
      for (const char* c : {"?demangledName", "?shortName", "?gridX", "?gridY", "?gridZ", "?blockX",
                            "?blockY", "?blockZ", "?registersPerThread", "?staticSharedMemory",
                            "?dynamicSharedMemory", "?graphId", "?graphNodeId"})
        cols.emplace_back(c);
      break;
    case 1:
      for (const char* c : {"bytes", "copyKind", "?srcKind", "?dstKind", "?graphNodeId"})
        cols.emplace_back(c);
      break;
    case 2:
      for (const char* c : {"bytes", "?memKind", "?value", "?graphNodeId"}) cols.emplace_back(c);
      break;
    default:
      cols.emplace_back("?syncType");
  }
  SqliteQuery q(db_, table, cols);
  MLPROF_RETURN_IF_ERROR(q.status());
  note_missing(q, table);
  StringId cat = b_.intern(kind == 0   ? "kernel"
                           : kind == 1 ? "gpu_memcpy"
                           : kind == 2 ? "gpu_memset"
                                       : "cuda_sync");
  StringId k_device = b_.intern("device"), k_stream = b_.intern("stream"),
           k_context = b_.intern("context"), k_grid = b_.intern("grid"),
           k_block = b_.intern("block"), k_regs = b_.intern("registers per thread"),
           k_smem = b_.intern("shared memory"), k_graph = b_.intern("graph id"),
           k_node = b_.intern("graph node id"), k_bytes = b_.intern("bytes"),
           k_bw = b_.intern("memory bandwidth (GB/s)"), k_flow = b_.intern("ac2g");
  std::unordered_map<int64_t, StringId> names;
  auto triple = [&](int c) {
    return "[" + std::to_string(q.i64(c)) + ", " + std::to_string(q.i64(c + 1)) + ", " +
           std::to_string(q.i64(c + 2)) + "]";
  };
  while (q.next()) {
    report_.read(kWhat[kind]);
    int64_t start = q.i64(0), end = q.i64(1);
    if (!good_times(start, end, kWhat[kind])) continue;
    int64_t device = q.i64(2), stream = q.null(3) ? -1 : q.i64(3);
    uint32_t track = gpu_track(device, stream);
    int64_t key = q.null(5) ? q.i64(4) : corr_key(q.i64(5), q.i64(4));
    StringId name = 0;
    uint32_t mark = b_.args_mark();
    b_.arg_int(k_device, device);
    b_.arg_int(k_stream, stream);
    if (!q.null(6)) b_.arg_int(k_context, q.i64(6));
    b_.arg_int(k_corr_, key);
    if (kind == 0) {
      int64_t id = q.null(7) ? q.i64(8) : q.i64(7);
      auto [it, added] = names.emplace(id, 0);
      if (added) {
        std::string_view n = string_of(id);
        it->second = b_.intern(n.empty() ? "kernel " + std::to_string(id) : std::string(n));
      }
      name = it->second;
      if (!q.null(9)) b_.arg_json(k_grid, triple(9));
      if (!q.null(12)) b_.arg_json(k_block, triple(12));
      if (!q.null(15)) b_.arg_int(k_regs, q.i64(15));
      if (!q.null(16) || !q.null(17)) b_.arg_int(k_smem, q.i64(16) + q.i64(17));
      if (!q.null(18)) b_.arg_int(k_graph, q.i64(18));
      if (!q.null(19)) b_.arg_int(k_node, q.i64(19));
    } else if (kind == 1) {
      int64_t bytes = q.i64(7);
      std::string n = std::string("Memcpy ") + copy_kind_name(q.i64(8)) + " (" +
                      (q.null(9) ? "Unknown" : mem_kind_name(q.i64(9))) + " -> " +
                      (q.null(10) ? "Unknown" : mem_kind_name(q.i64(10))) + ")";
      name = b_.intern(n);
      b_.arg_int(k_bytes, bytes);
      b_.arg_double(
          k_bw, end > start ? static_cast<double>(bytes) / static_cast<double>(end - start) : 0.0);
      if (!q.null(11)) b_.arg_int(k_node, q.i64(11));
    } else if (kind == 2) {
      name = b_.intern(std::string("Memset (") + (q.null(8) ? "Unknown" : mem_kind_name(q.i64(8))) +
                       ")");
      b_.arg_int(k_bytes, q.i64(7));
      if (!q.null(10)) b_.arg_int(k_node, q.i64(10));
    } else {
      name = b_.intern(sync_name(q.i64(7)));
    }
    b_.add_slice(track, start, end - start, name, cat, b_.args_since(mark));
    if (kind != 3) {
      auto l = launches_.find(key);
      if (l != launches_.end())
        b_.add_flow(static_cast<uint64_t>(key), k_flow, l->second.track, l->second.ts, track,
                    start);
      else
        ++unlinked_;
    }
  }
  return q.status();
}

Status NsysReader::read_nvtx() {
  const char* table = "NVTX_EVENTS";
  if (!db_.has_table(table)) {
    report_.missing(table);
    return Status::ok();
  }
  SqliteQuery q(
      db_, table,
      {"start", "?end", "eventType", "?text", "?textId", "?globalTid", "?domainId", "?rangeId"},
      "ORDER BY eventType <> 75");  // domain names first
  MLPROF_RETURN_IF_ERROR(q.status());
  note_missing(q, table);
  StringId k_op = b_.intern("cpu_op"), k_ann = b_.intern("user_annotation"),
           k_op_id = b_.intern("op_id"), k_seq = b_.intern("Sequence number"),
           k_domain = b_.intern("domain"), k_nvtx = b_.intern("nvtx"),
           k_rest = b_.intern("nvtx args");
  while (q.next()) {
    int type = static_cast<int>(q.i64(2));
    std::string_view text = q.null(3) ? string_of(q.i64(4)) : q.text(3);
    if (type == kNvtxDomainCreate) {
      domains_[q.i64(6)] = std::string(text);
      continue;
    }
    if (type != kNvtxMark && type != kNvtxPushPop && type != kNvtxStartEnd) {
      report_.skipped("NVTX records of other kinds");
      continue;
    }
    report_.read(type == kNvtxMark ? "NVTX marks" : "NVTX ranges");
    if (q.null(5)) {
      report_.skipped("NVTX records without a thread");
      continue;
    }
    int64_t start = q.i64(0);
    if (type != kNvtxMark && q.null(1)) {
      report_.skipped("NVTX ranges without an end");
      b_.trace().meta.import_stats.note(ImportProblem::kUnmatchedEnd, UINT64_MAX,
                                        "NVTX range without an end");
      continue;
    }
    int64_t end = type == kNvtxMark ? start : q.i64(1);
    if (!good_times(start, end, "NVTX range")) continue;
    uint32_t mark = b_.args_mark();
    StringId cat = k_ann;
    std::string name(text);
    // torch.autograd.profiler.emit_nvtx: "aten::mm, seq = 12, op_id = 34, sizes = [...]".
    if (size_t c = name.find(", ");
        c != std::string::npos && name.find("op_id = ", c) != std::string::npos) {
      std::string rest = name.substr(c + 2);
      name.resize(c);
      cat = k_op;
      std::string other;
      size_t at = 0;
      while (at < rest.size()) {
        size_t next = rest.find(", ", at);
        // sizes = [[1, 2], [3]] holds ", " itself: a field ends where the next " = " field begins
        while (next != std::string::npos) {
          size_t eq = rest.find(" = ", next + 2), comma = rest.find(", ", next + 2);
          if (eq != std::string::npos && (comma == std::string::npos || eq < comma) &&
              rest.find_first_of("[(", next + 2) > eq)
            break;
          next = comma;
        }
        std::string field =
            rest.substr(at, next == std::string::npos ? std::string::npos : next - at);
        at = next == std::string::npos ? rest.size() : next + 2;
        if (field.rfind("op_id = ", 0) == 0) {
          b_.arg_int(k_op_id, std::strtoll(field.c_str() + 8, nullptr, 10));
        } else if (field.rfind("seq = ", 0) == 0) {
          b_.arg_int(k_seq, std::strtoll(field.c_str() + 6, nullptr, 10));
        } else {
          other += (other.empty() ? "" : ", ") + field;
        }
      }
      if (!other.empty()) b_.arg_string(k_rest, b_.intern(other));
    }
    if (int64_t d = q.i64(6); !q.null(6) && d != 0) {
      auto it = domains_.find(d);
      b_.arg_string(k_domain,
                    b_.intern(it != domains_.end() ? it->second : "domain " + std::to_string(d)));
    }
    StringId n = b_.intern(name);
    int64_t gtid = q.i64(5);
    if (type == kNvtxMark) {
      b_.add_instant(cpu_track(gtid), start, n, k_ann, b_.args_since(mark));
    } else if (type == kNvtxPushPop) {
      b_.add_slice(cpu_track(gtid), start, end - start, n, cat, b_.args_since(mark));
    } else {
      // Start/end ranges may overlap without nesting and end on another thread: an async track.
      uint32_t p = b_.process(pid_of(gtid));
      uint32_t t = b_.async_track(p, k_nvtx, static_cast<uint64_t>(q.null(7) ? 0 : q.i64(7)));
      b_.add_slice(t, start, end - start, n, cat, b_.args_since(mark));
    }
  }
  return q.status();
}

Result<Trace> NsysReader::run() {
  MLPROF_RETURN_IF_ERROR(read_strings());
  read_processes();
  // Several processes with CUDA activity number their correlation ids independently.
  if (db_.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(
            db_.handle(), "SELECT COUNT(DISTINCT globalTid >> 24) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      multi_process_ = sqlite3_column_int64(st, 0) > 1;
    sqlite3_finalize(st);
  }
  k_corr_ = b_.intern("correlation");
  read_metadata();
  MLPROF_RETURN_IF_ERROR(read_runtime());
  MLPROF_RETURN_IF_ERROR(read_gpu("CUPTI_ACTIVITY_KIND_KERNEL", 0));
  MLPROF_RETURN_IF_ERROR(read_gpu("CUPTI_ACTIVITY_KIND_MEMCPY", 1));
  MLPROF_RETURN_IF_ERROR(read_gpu("CUPTI_ACTIVITY_KIND_MEMSET", 2));
  MLPROF_RETURN_IF_ERROR(read_gpu("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 3));
  MLPROF_RETURN_IF_ERROR(read_nvtx());
  if (unlinked_)
    report_.note(std::to_string(unlinked_) +
                 " kernels/copies without their API call in the file (no launch flow)");
  if (multi_process_)
    report_.note("correlation ids carry the pid in bits 40 and up (several processes)");
  ImportStats stats = b_.trace().meta.import_stats;
  Trace t = std::move(b_).finish();
  t.meta.import_stats = stats;
  t.meta.format = "nsys";
  t.meta.source = db_.name();
  report_.store(t, "nsys");
  if (t.event_count() == 0)
    return Status::error(
        db_.name() +
        ": an Nsight Systems export without events (no kernel, API call or NVTX rows)");
  return t;
}

}  // namespace

bool is_nsys_database(const SqliteDb& db) {
  for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
                        "TARGET_INFO_SESSION_START_TIME"})
    if (db.has_table(t)) return db.has_table("StringIds");
  return false;
}

Result<Trace> import_nsys(SqliteDb& db) { return NsysReader(db).run(); }

}  // namespace mlprof::import
