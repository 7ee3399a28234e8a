#include "import/rocpd_importer.h"

#include <cctype>
#include <string>
#include <unordered_map>

#include "import/checked_duration.h"
#include "import/import_report.h"

namespace mlprof::import {

namespace {

// rocpd writes each table as NAME{{uuid}} and a view NAME over it: the view when present, else
// the one table NAME followed by a uuid (hex digits, '-', '_').
std::string resolve(const SqliteDb& db, std::string_view base) {
  if (db.has_table(base)) return std::string(base);
  for (const std::string& t : db.table_names()) {
    if (t.size() <= base.size() || !std::string_view(t).starts_with(base)) continue;
    bool uuid = true;
    for (char c : std::string_view(t).substr(base.size()))
      uuid = uuid && (std::isxdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_');
    if (uuid) return t;
  }
  return "";
}

class RocpdReader {
 public:
  explicit RocpdReader(SqliteDb& db) : db_(db) {}
  Result<Trace> run();

 private:
  std::string table(std::string_view base) {
    std::string t = resolve(db_, base);
    if (t.empty()) report_.missing(std::string(base));
    return t;
  }
  Status read_ids();
  Status read_agents();
  Status read_regions();
  Status read_dispatches();
  Status read_copies();
  Status read_allocations();
  std::string_view str(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }
  template <typename Map>
  static int64_t lookup(const Map& m, int64_t id) {
    auto it = m.find(id);
    return it == m.end() ? id : it->second;
  }
  uint32_t gpu_track(int64_t agent, int64_t queue);
  int64_t device_of(int64_t agent) const {
    auto it = gpu_index_.find(agent);
    return it == gpu_index_.end() ? agent : it->second;
  }
  void link(int64_t event_id, uint32_t track, int64_t ts);
  bool too_long(int64_t start, int64_t end, const char* table) {
    if (checked_duration(start, end) >= 0) return false;
    report_.skipped("end before start");
    b_.trace().meta.import_stats.note(ImportProblem::kNegativeDuration, UINT64_MAX,
                                      std::string(table) + " row with end before start");
    return true;
  }

  SqliteDb& db_;
  TraceBuilder b_;
  ImportReport report_;
  std::unordered_map<int64_t, std::string> strings_;
  std::unordered_map<int64_t, int64_t> pid_of_, tid_of_;  // rocpd_info_process/thread id -> OS id
  std::unordered_map<int64_t, int64_t> gpu_index_;        // GPU agent id -> device index
  std::unordered_map<int64_t, std::string> kernel_name_;  // kernel symbol id -> name
  struct Event {
    int64_t category = 0, correlation = -1;
  };
  std::unordered_map<int64_t, Event> events_;  // rocpd_event id -> category, correlation id
  struct Launch {
    uint32_t track;
    int64_t ts;
    bool hip;
  };
  std::unordered_map<int64_t, Launch> launches_;  // correlation id -> the API call
  uint64_t unlinked_ = 0;
  StringId k_corr_ = 0, k_flow_ = 0;
};

Status RocpdReader::read_ids() {
  if (std::string t = table("rocpd_string"); !t.empty()) {
    SqliteQuery q(db_, t, {"id", "string"});
    while (q.next()) strings_.emplace(q.i64(0), std::string(q.text(1)));
    MLPROF_RETURN_IF_ERROR(q.status());
  }
  if (std::string t = table("rocpd_info_process"); !t.empty()) {
    SqliteQuery q(db_, t, {"id", "pid", "?command"});
    while (q.next()) {
      pid_of_[q.i64(0)] = q.i64(1);
      if (!q.null(2)) {
        uint32_t p = b_.process(q.i64(1));
        if (b_.trace().processes[p].name == 0) b_.trace().processes[p].name = b_.intern(q.text(2));
      }
    }
    MLPROF_RETURN_IF_ERROR(q.status());
  }
  if (std::string t = table("rocpd_info_thread"); !t.empty()) {
    SqliteQuery q(db_, t, {"id", "tid"});
    while (q.next()) tid_of_[q.i64(0)] = q.i64(1);
    MLPROF_RETURN_IF_ERROR(q.status());
  }
  if (std::string t = table("rocpd_info_kernel_symbol"); !t.empty()) {
    SqliteQuery q(db_, t, {"id", "?display_name", "?kernel_name"});
    while (q.next()) kernel_name_[q.i64(0)] = std::string(q.text(q.null(1) ? 2 : 1));
    MLPROF_RETURN_IF_ERROR(q.status());
  }
  if (std::string t = table("rocpd_event"); !t.empty()) {
    SqliteQuery q(db_, t, {"id", "?category_id", "?correlation_id"});
    while (q.next()) events_[q.i64(0)] = Event{q.i64(1), q.null(2) ? -1 : q.i64(2)};
    MLPROF_RETURN_IF_ERROR(q.status());
  }
  return Status::ok();
}

Status RocpdReader::read_agents() {
  std::string t = table("rocpd_info_agent");
  if (t.empty()) return Status::ok();
  SqliteQuery q(
      db_, t,
      {"id", "type", "?type_index", "?logical_index", "?name", "?product_name", "?model_name"},
      "ORDER BY id");
  for (const std::string& c : q.missing()) report_.missing(t + "." + c);
  while (q.next()) {
    if (q.text(1) != "GPU") continue;
    int64_t index = !q.null(2)   ? q.i64(2)
                    : !q.null(3) ? q.i64(3)
                                 : static_cast<int64_t>(gpu_index_.size());
    gpu_index_[q.i64(0)] = index;
    report_.read("GPU agents");
    DeviceInfo d;
    d.id = static_cast<int32_t>(index);
    d.name = std::string(q.text(5));
    if (d.name.empty()) d.name = std::string(q.text(6));
    if (d.name.empty()) d.name = "AMD GPU " + std::string(q.text(4));
    bool seen = false;
    for (const DeviceInfo& e : b_.trace().meta.devices) seen |= e.id == d.id;
    if (!seen) b_.trace().meta.devices.push_back(std::move(d));
  }
  return q.status();
}

uint32_t RocpdReader::gpu_track(int64_t agent, int64_t queue) {
  int64_t dev = device_of(agent);
  uint32_t p = b_.process(dev);
  Process& pr = b_.trace().processes[p];
  if (!pr.is_gpu) {
    pr.is_gpu = true;
    pr.name = b_.intern("GPU " + std::to_string(dev));
  }
  uint32_t t = b_.thread_track(p, queue);
  b_.mark_gpu_track(t, static_cast<int32_t>(dev), queue);
  if (b_.trace().tracks[t].name == 0)
    b_.trace().tracks[t].name = b_.intern(queue < 0 ? "copies" : "queue " + std::to_string(queue));
  return t;
}

// The launch flow from the API call of the GPU work's correlation id.
void RocpdReader::link(int64_t event_id, uint32_t track, int64_t ts) {
  auto e = events_.find(event_id);
  if (e == events_.end() || e->second.correlation < 0) {
    ++unlinked_;
    return;
  }
  b_.arg_int(k_corr_, e->second.correlation);
  auto l = launches_.find(e->second.correlation);
  if (l == launches_.end()) {
    ++unlinked_;
    return;
  }
  b_.add_flow(static_cast<uint64_t>(e->second.correlation), k_flow_, l->second.track, l->second.ts,
              track, ts);
}

Status RocpdReader::read_regions() {
  std::string t = table("rocpd_region");
  if (t.empty()) return Status::ok();
  SqliteQuery q(db_, t, {"pid", "tid", "start", "end", "name_id", "?event_id"});
  for (const std::string& c : q.missing()) report_.missing(t + "." + c);
  StringId k_runtime = b_.intern("cuda_runtime"), k_ann = b_.intern("user_annotation"),
           k_op = b_.intern("cpu_op"), k_category = b_.intern("category");
  while (q.next()) {
    int64_t start = q.i64(2), end = q.i64(3);
    auto e = q.null(5) ? events_.end() : events_.find(q.i64(5));
    std::string_view category = e == events_.end() ? "" : str(e->second.category);
    bool marker = category.find("MARKER") != std::string_view::npos;
    report_.read(marker ? "markers" : "API calls");
    if (too_long(start, end, "rocpd_region")) continue;
    uint32_t track =
        b_.thread_track(b_.process(lookup(pid_of_, q.i64(0))), lookup(tid_of_, q.i64(1)));
    std::string_view name = str(q.i64(4));
    uint32_t mark = b_.args_mark();
    if (!category.empty()) b_.arg_string(k_category, b_.intern(category));
    int64_t corr = e == events_.end() ? -1 : e->second.correlation;
    if (corr >= 0) b_.arg_int(k_corr_, corr);
    StringId cat = !marker ? k_runtime : name.starts_with("aten::") ? k_op : k_ann;
    b_.add_slice(track, start, end - start, b_.intern(name.empty() ? "(unnamed)" : name), cat,
                 b_.args_since(mark));
    if (marker || corr < 0) continue;
    // A dispatch links to its HIP call when the HSA call beneath shares the id.
    bool hip = category.starts_with("HIP");
    auto [it, added] = launches_.emplace(corr, Launch{track, start, hip});
    if (!added && hip && !it->second.hip) it->second = Launch{track, start, hip};
  }
  return q.status();
}

Status RocpdReader::read_dispatches() {
  std::string t = table("rocpd_kernel_dispatch");
  if (t.empty()) return Status::ok();
  SqliteQuery q(
      db_, t,
      {"start", "end", "agent_id", "queue_id", "kernel_id", "?stream_id", "?event_id",
       "?grid_size_x", "?grid_size_y", "?grid_size_z", "?workgroup_size_x", "?workgroup_size_y",
       "?workgroup_size_z", "?group_segment_size", "?private_segment_size", "?dispatch_id"});
  for (const std::string& c : q.missing()) report_.missing(t + "." + c);
  StringId k_kernel = b_.intern("kernel"), k_device = b_.intern("device"),
           k_stream = b_.intern("stream"), k_queue = b_.intern("queue"),
           k_items = b_.intern("grid (work-items)"), k_block = b_.intern("block"),
           k_smem = b_.intern("shared memory"), k_private = b_.intern("private memory"),
           k_kernel_id = b_.intern("kernel id"), k_dispatch = b_.intern("dispatch id");
  auto triple = [&](int c) {
    return "[" + std::to_string(q.i64(c)) + ", " + std::to_string(q.i64(c + 1)) + ", " +
           std::to_string(q.i64(c + 2)) + "]";
  };
  while (q.next()) {
    report_.read("kernel dispatches");
    int64_t start = q.i64(0), end = q.i64(1);
    if (too_long(start, end, "rocpd_kernel_dispatch")) continue;
    uint32_t track = gpu_track(q.i64(2), q.i64(3));
    auto kn = kernel_name_.find(q.i64(4));
    std::string name = kn != kernel_name_.end() && !kn->second.empty()
                           ? kn->second
                           : "kernel " + std::to_string(q.i64(4));
    uint32_t mark = b_.args_mark();
    b_.arg_int(k_device, device_of(q.i64(2)));
    if (!q.null(5)) b_.arg_int(k_stream, q.i64(5));
    b_.arg_int(k_queue, q.i64(3));
    b_.arg_int(k_kernel_id, q.i64(4));
    if (!q.null(15)) b_.arg_int(k_dispatch, q.i64(15));
    if (!q.null(7)) b_.arg_json(k_items, triple(7));
    if (!q.null(10)) b_.arg_json(k_block, triple(10));
    if (!q.null(13)) b_.arg_int(k_smem, q.i64(13));
    if (!q.null(14)) b_.arg_int(k_private, q.i64(14));
    link(q.null(6) ? -1 : q.i64(6), track, start);
    b_.add_slice(track, start, end - start, b_.intern(name), k_kernel, b_.args_since(mark));
  }
  return q.status();
}

Status RocpdReader::read_copies() {
  std::string t = table("rocpd_memory_copy");
  if (t.empty()) return Status::ok();
  SqliteQuery q(db_, t,
                {"start", "end", "name_id", "size", "?dst_agent_id", "?src_agent_id", "?event_id"});
  for (const std::string& c : q.missing()) report_.missing(t + "." + c);
  StringId k_memcpy = b_.intern("gpu_memcpy"), k_device = b_.intern("device"),
           k_bytes = b_.intern("bytes"), k_bw = b_.intern("memory bandwidth (GB/s)");
  while (q.next()) {
    report_.read("memory copies");
    int64_t start = q.i64(0), end = q.i64(1);
    if (too_long(start, end, "rocpd_memory_copy")) continue;
    // On the GPU that receives the copy, else the one it comes from.
    int64_t agent = !q.null(4) && gpu_index_.count(q.i64(4)) ? q.i64(4)
                    : !q.null(5)                             ? q.i64(5)
                                                             : q.i64(4);
    uint32_t track = gpu_track(agent, -1);
    std::string_view op = str(q.i64(2));
    std::string name =
        op.find("HOST_TO_DEVICE") != std::string_view::npos     ? "Memcpy HtoD (Host -> Device)"
        : op.find("DEVICE_TO_HOST") != std::string_view::npos   ? "Memcpy DtoH (Device -> Host)"
        : op.find("DEVICE_TO_DEVICE") != std::string_view::npos ? "Memcpy DtoD (Device -> Device)"
        : op.find("HOST_TO_HOST") != std::string_view::npos
            ? "Memcpy HtoH (Host -> Host)"
            : "Memcpy Unknown (" + std::string(op) + ")";
    uint32_t mark = b_.args_mark();
    b_.arg_int(k_device, device_of(agent));
    b_.arg_int(k_bytes, q.i64(3));
    int64_t dur = end - start;
    b_.arg_double(k_bw, dur > 0 ? static_cast<double>(q.i64(3)) / static_cast<double>(dur) : 0.0);
    link(q.null(6) ? -1 : q.i64(6), track, start);
    b_.add_slice(track, start, dur, b_.intern(name), k_memcpy, b_.args_since(mark));
  }
  return q.status();
}

// Allocations and frees of device memory (level REAL; VIRTUAL reservations and SCRATCH are not
// the allocator's bytes), as memory events: a free takes its size from the allocation at its
// address, since rocprofiler records frees with the address only.
Status RocpdReader::read_allocations() {
  std::string t = resolve(db_, "rocpd_memory_allocate");  // optional in rocprofv3
  if (t.empty()) return Status::ok();
  SqliteQuery q(db_, t, {"pid", "?tid", "?agent_id", "type", "?level", "start", "?address", "size"},
                "ORDER BY start");
  for (const std::string& c : q.missing()) report_.missing(t + "." + c);
  std::unordered_map<uint64_t, int64_t> live;  // address -> bytes
  while (q.next()) {
    std::string_view type = q.text(3), level = q.text(4);
    if (!q.null(4) && level != "REAL") {
      report_.skipped("memory records of level " + std::string(level));
      continue;
    }
    report_.read("memory allocations");
    auto addr = static_cast<uint64_t>(q.i64(6));
    int64_t bytes = q.i64(7);
    if (type == "ALLOC") {
      if (bytes <= 0) continue;
      live[addr] = bytes;
    } else if (type == "FREE") {
      auto it = live.find(addr);
      if (it == live.end()) {
        report_.skipped("frees of memory allocated before the trace");
        continue;
      }
      bytes = -it->second;
      live.erase(it);
    } else {
      report_.skipped("memory records of type " + std::string(type));
      continue;
    }
    bool gpu = !q.null(2) && gpu_index_.count(q.i64(2));
    uint32_t track =
        b_.thread_track(b_.process(lookup(pid_of_, q.i64(0))), lookup(tid_of_, q.i64(1)));
    b_.add_memory(track, q.i64(5), addr, bytes, gpu ? DeviceType::kCuda : DeviceType::kCpu,
                  static_cast<int16_t>(gpu ? device_of(q.i64(2)) : -1));
  }
  return q.status();
}

Result<Trace> RocpdReader::run() {
  k_corr_ = b_.intern("correlation");
  k_flow_ = b_.intern("ac2g");
  MLPROF_RETURN_IF_ERROR(read_ids());
  MLPROF_RETURN_IF_ERROR(read_agents());
  MLPROF_RETURN_IF_ERROR(read_regions());
  MLPROF_RETURN_IF_ERROR(read_dispatches());
  MLPROF_RETURN_IF_ERROR(read_copies());
  MLPROF_RETURN_IF_ERROR(read_allocations());
  if (unlinked_)
    report_.note(std::to_string(unlinked_) +
                 " kernels/copies without their API call (no launch flow; rocprofv3 "
                 "--hip-trace records them)");
  if (std::string t = resolve(db_, "rocpd_metadata"); !t.empty()) {
    SqliteQuery q(db_, t, {"tag", "value"});
    while (q.next())
      if (q.text(0) == "schema_version")
        b_.trace().meta.extra.emplace_back("rocpdSchemaVersion",
                                           "\"" + std::string(q.text(1)) + "\"");
  }
  ImportStats stats = b_.trace().meta.import_stats;
  Trace t = std::move(b_).finish();
  t.meta.import_stats = stats;
  t.meta.format = "rocpd";
  t.meta.source = db_.name();
  report_.store(t, "rocpd");
  if (t.event_count() == 0)
    return Status::error(db_.name() +
                         ": a rocpd database without events (no kernel dispatches, copies or "
                         "regions)");
  return t;
}

}  // namespace

bool is_rocpd_database(const SqliteDb& db) {
  if (db.has_table("rocpd_op")) return false;  // rpd_tracer's older schema
  return (!resolve(db, "rocpd_kernel_dispatch").empty() || !resolve(db, "rocpd_region").empty() ||
          !resolve(db, "rocpd_memory_copy").empty()) &&
         !resolve(db, "rocpd_string").empty();
}

Result<Trace> import_rocpd(SqliteDb& db) { return RocpdReader(db).run(); }

}  // namespace mlprof::import
