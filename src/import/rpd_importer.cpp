#include "import/rpd_importer.h"

#include <string>
#include <unordered_map>

#include "import/checked_duration.h"
#include "import/import_report.h"

namespace mlprof::import {

namespace {

class RpdReader {
 public:
  explicit RpdReader(SqliteDb& db) : db_(db) {}
  Result<Trace> run();

 private:
  Status read_strings();
  Status read_api();
  Status read_ops();
  Status read_monitor();
  std::string_view str(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }
  uint32_t gpu_track(int64_t gpu, int64_t queue);

  SqliteDb& db_;
  TraceBuilder b_;
  ImportReport report_;
  std::unordered_map<int64_t, std::string> strings_;
  struct Api {
    uint32_t track;
    int64_t ts;
  };
  std::unordered_map<int64_t, Api> apis_;  // rocpd_api.id -> its slice's track and start
};

uint32_t RpdReader::gpu_track(int64_t gpu, int64_t queue) {
  uint32_t p = b_.process(gpu);
  Process& pr = b_.trace().processes[p];
  if (!pr.is_gpu) {
    pr.is_gpu = true;
    pr.name = b_.intern("GPU " + std::to_string(gpu));
  }
  uint32_t t = b_.thread_track(p, queue);
  b_.mark_gpu_track(t, static_cast<int32_t>(gpu), queue);
  if (b_.trace().tracks[t].name == 0)
    b_.trace().tracks[t].name = b_.intern("queue " + std::to_string(queue));
  return t;
}

Status RpdReader::read_strings() {
  SqliteQuery q(db_, "rocpd_string", {"id", "string"});
  MLPROF_RETURN_IF_ERROR(q.status());
  while (q.next()) strings_.emplace(q.i64(0), std::string(q.text(1)));
  return q.status();
}

Status RpdReader::read_api() {
  SqliteQuery q(db_, "rocpd_api", {"id", "pid", "tid", "start", "end", "apiName_id", "?args_id"});
  MLPROF_RETURN_IF_ERROR(q.status());
  for (const std::string& c : q.missing()) report_.missing("rocpd_api." + c);
  StringId k_runtime = b_.intern("cuda_runtime"), k_ann = b_.intern("user_annotation"),
           k_op = b_.intern("cpu_op"), k_corr = b_.intern("correlation"),
           k_args = b_.intern("args");
  while (q.next()) {
    int64_t id = q.i64(0), start = q.i64(3), end = q.i64(4);
    std::string_view api = str(q.i64(5)), args = q.null(6) ? std::string_view() : str(q.i64(6));
    bool marker = api == "UserMarker";
    report_.read(marker ? "markers" : "API calls");
    if (checked_duration(start, end) < 0) {
      report_.skipped("end before start");
      b_.trace().meta.import_stats.note(ImportProblem::kNegativeDuration, UINT64_MAX,
                                        "rocpd_api row with end before start");
      continue;
    }
    uint32_t p = b_.process(q.i64(1));
    uint32_t track = b_.thread_track(p, q.i64(2));
    uint32_t mark = b_.args_mark();
    if (marker) {
      // roctx ranges; PyTorch's ops arrive as "aten::..." markers.
      std::string_view name = args.empty() ? std::string_view("UserMarker") : args;
      b_.add_slice(track, start, end - start, b_.intern(name),
                   name.starts_with("aten::") ? k_op : k_ann);
      continue;
    }
    b_.arg_int(k_corr, id);
    if (!args.empty()) b_.arg_string(k_args, b_.intern(args));
    b_.add_slice(track, start, end - start, b_.intern(api), k_runtime, b_.args_since(mark));
    apis_.emplace(id, Api{track, start});
  }
  return q.status();
}

Status RpdReader::read_ops() {
  // One row per GPU op, with its API call and that call's kernel or copy details when present.
  std::string sql =
      "SELECT o.id, o.gpuId, o.queueId, o.start, o.end, o.description_id, o.opType_id, a.api_id";
  bool kernelapi = db_.has_table("rocpd_kernelapi"), copyapi = db_.has_table("rocpd_copyapi");
  bool api_ops = db_.has_table("rocpd_api_ops");
  sql += kernelapi ? ", k.gridX, k.gridY, k.gridZ, k.workgroupX, k.workgroupY, k.workgroupZ, "
                     "k.groupSegmentSize, k.privateSegmentSize"
                   : ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
  sql += copyapi ? ", c.size, c.pinned" : ", NULL, NULL";
  sql += " FROM rocpd_op o";
  sql += api_ops ? " LEFT JOIN rocpd_api_ops a ON a.op_id = o.id"
                 : " LEFT JOIN (SELECT NULL AS api_id) a";
  if (kernelapi) sql += " LEFT JOIN rocpd_kernelapi k ON k.api_ptr_id = a.api_id";
  if (copyapi) sql += " LEFT JOIN rocpd_copyapi c ON c.api_ptr_id = a.api_id";
  if (!api_ops) report_.missing("rocpd_api_ops (no API call <-> GPU op links)");
  if (!kernelapi) report_.missing("rocpd_kernelapi");
  if (!copyapi) report_.missing("rocpd_copyapi");
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_.handle(), sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
    return db_.error("cannot read rocpd_op");
  StringId k_kernel = b_.intern("kernel"), k_memcpy = b_.intern("gpu_memcpy"),
           k_memset = b_.intern("gpu_memset"), k_corr = b_.intern("correlation"),
           k_device = b_.intern("device"), k_stream = b_.intern("stream"),
           k_items = b_.intern("grid (work-items)"), k_block = b_.intern("block"),
           k_smem = b_.intern("shared memory"), k_private = b_.intern("private memory"),
           k_bytes = b_.intern("bytes"), k_bw = b_.intern("memory bandwidth (GB/s)"),
           k_flow = b_.intern("ac2g"), k_optype = b_.intern("op type");
  auto i64 = [&](int c) { return sqlite3_column_int64(st, c); };
  auto null = [&](int c) { return sqlite3_column_type(st, c) == SQLITE_NULL; };
  auto triple = [&](int c) {
    return "[" + std::to_string(i64(c)) + ", " + std::to_string(i64(c + 1)) + ", " +
           std::to_string(i64(c + 2)) + "]";
  };
  uint64_t unlinked = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t start = i64(3), end = i64(4);
    std::string_view type = str(i64(6)), desc = str(i64(5));
    StringId cat;
    std::string name;
    if (type == "KernelExecution" || type == "Task") {  // Task: a kernel of a graph launch
      cat = k_kernel;
      name = desc.empty() ? std::string(type) : std::string(desc);
    } else if (type.starts_with("Copy")) {
      cat = k_memcpy;
      std::string_view dir = type.substr(4);  // HostToDevice, DeviceToHost, DeviceToDevice, ...
      auto side = [&](std::string_view s) -> std::string {
        if (s == "Device") return "Device";
        if (null(17)) return "Host";
        return i64(17) ? "Pinned" : "Pageable";
      };
      size_t to = dir.find("To");
      std::string src(to == std::string_view::npos ? dir : dir.substr(0, to));
      std::string dst(to == std::string_view::npos ? "" : dir.substr(to + 2));
      auto letter = [](const std::string& s) {
        return s.empty() ? std::string("?") : std::string(1, s[0]);
      };
      name = "Memcpy " + letter(src) + "to" + letter(dst) + " (" + side(src) + " -> " + side(dst) +
             ")";
    } else if (type == "FillBuffer") {
      cat = k_memset;
      name = "Memset (Device)";
    } else {
      report_.skipped("GPU ops of type " + std::string(type.empty() ? "(none)" : type));
      continue;
    }
    report_.read(cat == k_kernel ? "kernels" : cat == k_memcpy ? "copies" : "fills");
    if (checked_duration(start, end) < 0) {
      report_.skipped("end before start");
      b_.trace().meta.import_stats.note(ImportProblem::kNegativeDuration, UINT64_MAX,
                                        "rocpd_op row with end before start");
      continue;
    }
    int64_t gpu = i64(1), queue = i64(2);
    uint32_t track = gpu_track(gpu, queue);
    uint32_t mark = b_.args_mark();
    b_.arg_int(k_device, gpu);
    b_.arg_int(k_stream, queue);
    if (!null(7)) b_.arg_int(k_corr, i64(7));
    b_.arg_string(k_optype, b_.intern(type));
    if (cat == k_kernel && !null(8)) {
      b_.arg_json(k_items, triple(8));
      b_.arg_json(k_block, triple(11));
      b_.arg_int(k_smem, i64(14));
      b_.arg_int(k_private, i64(15));
    }
    if (cat != k_kernel && !null(16)) {
      b_.arg_int(k_bytes, i64(16));
      if (cat == k_memcpy)
        b_.arg_double(k_bw, end > start
                                ? static_cast<double>(i64(16)) / static_cast<double>(end - start)
                                : 0.0);
    }
    b_.add_slice(track, start, end - start, b_.intern(name), cat, b_.args_since(mark));
    auto a = null(7) ? apis_.end() : apis_.find(i64(7));
    if (a != apis_.end())
      b_.add_flow(static_cast<uint64_t>(i64(7)), k_flow, a->second.track, a->second.ts, track,
                  start);
    else
      ++unlinked;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_.error("cannot read rocpd_op");
  if (unlinked)
    report_.note(std::to_string(unlinked) + " GPU ops without their API call (no launch flow)");
  return Status::ok();
}

Status RpdReader::read_monitor() {
  if (!db_.has_table("rocpd_monitor")) return Status::ok();
  SqliteQuery q(db_, "rocpd_monitor", {"deviceId", "monitorType", "start", "value", "?deviceType"},
                "ORDER BY start");
  MLPROF_RETURN_IF_ERROR(q.status());
  while (q.next()) {
    report_.read("monitor samples");
    char* endp = nullptr;
    std::string v(q.text(3));
    double value = std::strtod(v.c_str(), &endp);
    if (endp == v.c_str()) {
      report_.skipped("monitor samples that are not numbers");
      continue;
    }
    uint32_t p = b_.process(q.i64(0));
    Process& pr = b_.trace().processes[p];
    if (pr.name == 0) pr.name = b_.intern("GPU " + std::to_string(q.i64(0)));
    uint32_t s = b_.counter_series(p, b_.intern(q.text(1)));
    b_.add_counter(s, q.i64(2), value);
  }
  return q.status();
}

Result<Trace> RpdReader::run() {
  MLPROF_RETURN_IF_ERROR(read_strings());
  MLPROF_RETURN_IF_ERROR(read_api());
  MLPROF_RETURN_IF_ERROR(read_ops());
  MLPROF_RETURN_IF_ERROR(read_monitor());
  if (db_.has_table("rocpd_metadata")) {
    SqliteQuery q(db_, "rocpd_metadata", {"tag", "value"});
    while (q.next())
      if (q.text(0) == "schema_version")
        b_.trace().meta.extra.emplace_back("rpdSchemaVersion",
                                           "\"" + std::string(q.text(1)) + "\"");
  }
  ImportStats stats = b_.trace().meta.import_stats;
  Trace t = std::move(b_).finish();
  t.meta.import_stats = stats;
  t.meta.format = "rpd";
  t.meta.source = db_.name();
  report_.store(t, "rpd");
  if (t.event_count() == 0)
    return Status::error(db_.name() +
                         ": an rpd trace without events (rocpd_op and rocpd_api are empty)");
  return t;
}

}  // namespace

bool is_rpd_database(const SqliteDb& db) {
  return db.has_table("rocpd_op") && db.has_table("rocpd_api") && db.has_table("rocpd_string");
}

Result<Trace> import_rpd(SqliteDb& db) { return RpdReader(db).run(); }

}  // namespace mlprof::import
