#include "import/rocprof_importer.h"

#include <simdjson.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "import/checked_duration.h"
#include "import/import_report.h"

namespace mlprof::import {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;
// A member that may be absent: lookups through it fail softly instead of throwing.
using maybe = simdjson::simdjson_result<element>;

int64_t num(element e, const char* key, int64_t def = 0) {
  int64_t v;
  if (e[key].get_int64().get(v) == simdjson::SUCCESS) return v;
  uint64_t u;
  if (e[key].get_uint64().get(u) == simdjson::SUCCESS) return static_cast<int64_t>(u);
  return def;
}

int64_t handle(element e, const char* key) {
  element h;
  if (e[key].get(h) != simdjson::SUCCESS) return -1;
  return num(h, "handle", -1);
}

std::string_view str(element e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

std::string triple(element e, const char* key) {
  element d;
  if (e[key].get(d) != simdjson::SUCCESS) return "";
  return "[" + std::to_string(num(d, "x")) + ", " + std::to_string(num(d, "y")) + ", " +
         std::to_string(num(d, "z")) + "]";
}

// Through a member that may be absent (tool["metadata"]): the default, never a throw.
int64_t num(maybe e, const char* key, int64_t def = 0) {
  element x;
  return e.get(x) == simdjson::SUCCESS ? num(x, key, def) : def;
}

struct RocKeys {
  StringId k_kernel, k_memcpy, k_runtime, k_corr, k_device, k_stream, k_queue, k_items, k_block,
      k_smem, k_private, k_bytes, k_flow, k_kernel_id;

  explicit RocKeys(TraceBuilder& b)
      : k_kernel(b.intern("kernel")),
        k_memcpy(b.intern("gpu_memcpy")),
        k_runtime(b.intern("cuda_runtime")),
        k_corr(b.intern("correlation")),
        k_device(b.intern("device")),
        k_stream(b.intern("stream")),
        k_queue(b.intern("queue")),
        k_items(b.intern("grid (work-items)")),
        k_block(b.intern("block")),
        k_smem(b.intern("shared memory")),
        k_private(b.intern("private memory")),
        k_bytes(b.intern("bytes")),
        k_flow(b.intern("ac2g")),
        k_kernel_id(b.intern("kernel id")) {}
};

struct Launch {
  uint32_t track;
  int64_t ts;
};

// One entry of "rocprofiler-sdk-tool" being read: its tables, and the launches GPU work links to.
struct RocTool {
  TraceBuilder& b;
  ImportReport& report;
  const RocKeys& k;
  std::unordered_map<int64_t, int64_t> gpu_of;  // agent handle -> GPU index
  std::unordered_map<int64_t, StringId> kernel_name;
  std::vector<std::vector<std::string_view>> ops;  // operation names per record kind
  int64_t pid = 0;
  std::unordered_map<int64_t, Launch> launches;  // correlation -> API call
  uint64_t unlinked = 0;                         // dispatches without their API call
};

// Agents: handle -> GPU index (and device properties).
void read_agents(element tool, RocTool& t) {
  TraceBuilder& b = t.b;
  array agents;
  if (tool["agents"].get_array().get(agents) != simdjson::SUCCESS) return;
  for (element a : agents) {
    if (num(a, "type") != 2) continue;  // 1 = CPU
    int64_t index = num(a, "gpu_index", static_cast<int64_t>(t.gpu_of.size()));
    t.gpu_of[handle(a, "id")] = index;
    DeviceInfo d;
    d.id = static_cast<int32_t>(index);
    d.name = std::string(str(a, "product_name"));
    if (d.name.empty()) d.name = "AMD GPU " + std::string(str(a, "name"));
    d.num_sms = static_cast<int32_t>(num(a, "cu_count"));
    d.warp_size = static_cast<int32_t>(num(a, "wave_front_size"));
    d.max_threads_per_block = static_cast<int32_t>(num(a, "workgroup_max_size"));
    d.max_threads_per_sm = static_cast<int32_t>(num(a, "max_waves_per_cu") * d.warp_size);
    d.shared_mem_per_sm = num(a, "lds_size_in_kb") * 1024;
    bool seen = false;
    for (const DeviceInfo& e : b.trace().meta.devices) seen |= e.id == d.id;
    if (!seen) b.trace().meta.devices.push_back(std::move(d));
  }
}

// Kernel symbols: id -> name.
void read_kernel_symbols(element tool, RocTool& t) {
  array symbols;
  if (tool["kernel_symbols"].get_array().get(symbols) != simdjson::SUCCESS) return;
  for (element k : symbols) {
    std::string_view n = str(k, "formatted_kernel_name");
    if (n.empty()) n = str(k, "demangled_kernel_name");
    if (n.empty()) n = str(k, "kernel_name");
    t.kernel_name[num(k, "kernel_id")] = t.b.intern(n);
  }
}

// Operation names per record kind (strings.buffer_records[kind].operations[op]).
void read_op_names(element tool, RocTool& t) {
  array kinds;
  if (tool["strings"]["buffer_records"].get_array().get(kinds) != simdjson::SUCCESS) return;
  for (element k : kinds) {
    t.ops.emplace_back();
    array names;
    if (k["operations"].get_array().get(names) == simdjson::SUCCESS)
      for (element n : names) {
        std::string_view s;
        t.ops.back().push_back(n.get_string().get(s) == simdjson::SUCCESS ? s : "");
      }
  }
}

std::string_view op_name(const RocTool& t, int64_t kind, int64_t op) {
  if (kind < 0 || static_cast<size_t>(kind) >= t.ops.size()) return {};
  const auto& v = t.ops[static_cast<size_t>(kind)];
  return op >= 0 && static_cast<size_t>(op) < v.size() ? v[static_cast<size_t>(op)] : "";
}

// HIP API calls first (the launches that GPU work links to).
void add_api_calls(element records, RocTool& t) {
  TraceBuilder& b = t.b;
  for (const char* key : {"hip_api", "marker_api", "rccl_api", "hsa_api"}) {
    array rows;
    if (records[key].get_array().get(rows) != simdjson::SUCCESS) continue;
    for (element r : rows) {
      t.report.read(std::string(key) + " records");
      int64_t start = num(r, "start_timestamp"), end = num(r, "end_timestamp");
      if (checked_duration(start, end) < 0) {
        t.report.skipped("end before start");
        continue;
      }
      uint32_t track = b.thread_track(b.process(t.pid), num(r, "thread_id"));
      int64_t corr = num(r["correlation_id"], "internal", -1);
      std::string_view nm = op_name(t, num(r, "kind"), num(r, "operation"));
      uint32_t mark = b.args_mark();
      if (corr >= 0) b.arg_int(t.k.k_corr, corr);
      b.add_slice(
          track, start, end - start, b.intern(nm.empty() ? std::string(key) : std::string(nm)),
          std::string_view(key) == "marker_api" ? b.intern("user_annotation") : t.k.k_runtime,
          b.args_since(mark));
      if (corr >= 0) t.launches.emplace(corr, Launch{track, start});
    }
  }
}

// The track of an agent's queue, and the agent's GPU index.
std::pair<uint32_t, int64_t> gpu_track(RocTool& t, int64_t agent, int64_t queue) {
  TraceBuilder& b = t.b;
  auto it = t.gpu_of.find(agent);
  int64_t dev = it == t.gpu_of.end() ? agent : it->second;
  uint32_t p = b.process(dev);
  Process& pr = b.trace().processes[p];
  if (!pr.is_gpu) {
    pr.is_gpu = true;
    pr.name = b.intern("GPU " + std::to_string(dev));
  }
  uint32_t tr = b.thread_track(p, queue);
  b.mark_gpu_track(tr, static_cast<int32_t>(dev), queue);
  if (b.trace().tracks[tr].name == 0)
    b.trace().tracks[tr].name = b.intern("queue " + std::to_string(queue));
  return std::pair<uint32_t, int64_t>{tr, dev};
}

void add_dispatches(element records, RocTool& t) {
  TraceBuilder& b = t.b;
  const RocKeys& k = t.k;
  array dispatches;
  if (records["kernel_dispatch"].get_array().get(dispatches) != simdjson::SUCCESS) return;
  for (element r : dispatches) {
    t.report.read("kernel dispatches");
    int64_t start = num(r, "start_timestamp"), end = num(r, "end_timestamp");
    if (checked_duration(start, end) < 0) {
      t.report.skipped("end before start");
      continue;
    }
    element info;
    if (r["dispatch_info"].get(info) != simdjson::SUCCESS) {
      t.report.skipped("dispatches without dispatch_info");
      continue;
    }
    auto [track, dev] = gpu_track(t, handle(info, "agent_id"), handle(info, "queue_id"));
    int64_t kid = num(info, "kernel_id");
    auto kn = t.kernel_name.find(kid);
    StringId nm =
        kn != t.kernel_name.end() ? kn->second : b.intern("kernel " + std::to_string(kid));
    int64_t corr = num(r["correlation_id"], "internal", -1);
    uint32_t mark = b.args_mark();
    b.arg_int(k.k_device, dev);
    b.arg_int(k.k_stream, handle(r, "stream_id"));
    b.arg_int(k.k_queue, handle(info, "queue_id"));
    if (corr >= 0) b.arg_int(k.k_corr, corr);
    b.arg_int(k.k_kernel_id, kid);
    b.arg_json(k.k_items, triple(info, "grid_size"));
    b.arg_json(k.k_block, triple(info, "workgroup_size"));
    b.arg_int(k.k_smem, num(info, "group_segment_size"));
    b.arg_int(k.k_private, num(info, "private_segment_size"));
    b.add_slice(track, start, end - start, nm, k.k_kernel, b.args_since(mark));
    auto l = t.launches.find(corr);
    if (l != t.launches.end())
      b.add_flow(static_cast<uint64_t>(corr), k.k_flow, l->second.track, l->second.ts, track,
                 start);
    else
      ++t.unlinked;
  }
}

void add_copies(element records, RocTool& t) {
  TraceBuilder& b = t.b;
  const RocKeys& k = t.k;
  array copies;
  if (records["memory_copy"].get_array().get(copies) != simdjson::SUCCESS) return;
  for (element r : copies) {
    t.report.read("memory copies");
    int64_t start = num(r, "start_timestamp"), end = num(r, "end_timestamp");
    if (checked_duration(start, end) < 0) {
      t.report.skipped("end before start");
      continue;
    }
    auto [track, dev] = gpu_track(t, handle(r, "dst_agent_id"), -1);
    std::string_view op = op_name(t, num(r, "kind"), num(r, "operation"));
    std::string nm =
        op.find("HOST_TO_DEVICE") != std::string_view::npos   ? "Memcpy HtoD (Host -> Device)"
        : op.find("DEVICE_TO_HOST") != std::string_view::npos ? "Memcpy DtoH (Device -> Host)"
        : op.find("DEVICE_TO_DEVICE") != std::string_view::npos
            ? "Memcpy DtoD (Device -> Device)"
            : "Memcpy Unknown (" + std::string(op) + ")";
    int64_t corr = num(r["correlation_id"], "internal", -1);
    uint32_t mark = b.args_mark();
    b.arg_int(k.k_device, dev);
    if (corr >= 0) b.arg_int(k.k_corr, corr);
    b.arg_int(k.k_bytes, num(r, "bytes"));
    b.add_slice(track, start, end - start, b.intern(nm), k.k_memcpy, b.args_since(mark));
    auto l = t.launches.find(corr);
    if (l != t.launches.end())
      b.add_flow(static_cast<uint64_t>(corr), k.k_flow, l->second.track, l->second.ts, track,
                 start);
  }
}

// One tool entry: its tables, then its records.
void import_tool(element tool, TraceBuilder& b, ImportReport& report, const RocKeys& keys) {
  RocTool t{b, report, keys, {}, {}, {}, 0, {}, 0};
  read_agents(tool, t);
  read_kernel_symbols(tool, t);
  read_op_names(tool, t);
  t.pid = num(tool["metadata"], "pid");
  element records;
  if (tool["buffer_records"].get(records) != simdjson::SUCCESS) {
    report.missing("buffer_records");
    return;
  }
  add_api_calls(records, t);
  add_dispatches(records, t);
  add_copies(records, t);
  if (t.unlinked && t.launches.empty())
    report.note("no HIP API records (run with --hip-trace for launches and flows)");
  else if (t.unlinked)
    report.note(std::to_string(t.unlinked) + " dispatches without their API call");
}

}  // namespace

bool looks_like_rocprofv3(std::string_view head) {
  size_t i = head.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && head[i] == '{' &&
         head.substr(i, 64).find("\"rocprofiler-sdk-tool\"") != std::string_view::npos;
}

Result<Trace> import_rocprofv3(std::string json, const std::string& name) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  json.clear();
  json.shrink_to_fit();
  element doc;
  if (auto err = parser.parse(padded).get(doc); err)
    return Status::error(name + ": not readable rocprofv3 JSON: " + simdjson::error_message(err));
  array tools;
  if (doc["rocprofiler-sdk-tool"].get_array().get(tools) != simdjson::SUCCESS)
    return Status::error(name + ": not rocprofv3 JSON (no \"rocprofiler-sdk-tool\" array)");
  TraceBuilder b;
  ImportReport report;
  const RocKeys keys(b);
  for (element tool : tools) import_tool(tool, b, report, keys);
  ImportStats stats = b.trace().meta.import_stats;
  Trace t = std::move(b).finish();
  t.meta.import_stats = stats;
  t.meta.format = "rocprofv3";
  t.meta.source = name;
  report.store(t, "rocprofv3");
  if (t.event_count() == 0) return Status::error(name + ": a rocprofv3 file without records");
  return t;
}

}  // namespace mlprof::import
