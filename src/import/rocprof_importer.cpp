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
  StringId k_kernel = b.intern("kernel"), k_memcpy = b.intern("gpu_memcpy"),
           k_runtime = b.intern("cuda_runtime"), k_corr = b.intern("correlation"),
           k_device = b.intern("device"), k_stream = b.intern("stream"),
           k_queue = b.intern("queue"), k_items = b.intern("grid (work-items)"),
           k_block = b.intern("block"), k_smem = b.intern("shared memory"),
           k_private = b.intern("private memory"), k_bytes = b.intern("bytes"),
           k_flow = b.intern("ac2g"), k_kernel_id = b.intern("kernel id");
  for (element tool : tools) {
    // Agents: handle -> GPU index (and device properties).
    std::unordered_map<int64_t, int64_t> gpu_of;
    array agents;
    if (tool["agents"].get_array().get(agents) == simdjson::SUCCESS) {
      for (element a : agents) {
        if (num(a, "type") != 2) continue;  // 1 = CPU
        int64_t index = num(a, "gpu_index", static_cast<int64_t>(gpu_of.size()));
        gpu_of[handle(a, "id")] = index;
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
    std::unordered_map<int64_t, StringId> kernel_name;
    array symbols;
    if (tool["kernel_symbols"].get_array().get(symbols) == simdjson::SUCCESS) {
      for (element k : symbols) {
        std::string_view n = str(k, "formatted_kernel_name");
        if (n.empty()) n = str(k, "demangled_kernel_name");
        if (n.empty()) n = str(k, "kernel_name");
        kernel_name[num(k, "kernel_id")] = b.intern(n);
      }
    }
    // Operation names per record kind (strings.buffer_records[kind].operations[op]).
    std::vector<std::vector<std::string_view>> ops;
    array kinds;
    if (tool["strings"]["buffer_records"].get_array().get(kinds) == simdjson::SUCCESS) {
      for (element k : kinds) {
        ops.emplace_back();
        array names;
        if (k["operations"].get_array().get(names) == simdjson::SUCCESS)
          for (element n : names) {
            std::string_view s;
            ops.back().push_back(n.get_string().get(s) == simdjson::SUCCESS ? s : "");
          }
      }
    }
    auto op_name = [&](int64_t kind, int64_t op) -> std::string_view {
      if (kind < 0 || static_cast<size_t>(kind) >= ops.size()) return {};
      const auto& v = ops[static_cast<size_t>(kind)];
      return op >= 0 && static_cast<size_t>(op) < v.size() ? v[static_cast<size_t>(op)] : "";
    };
    int64_t pid = num(tool["metadata"], "pid");
    struct Launch {
      uint32_t track;
      int64_t ts;
    };
    std::unordered_map<int64_t, Launch> launches;
    element records;
    if (tool["buffer_records"].get(records) != simdjson::SUCCESS) {
      report.missing("buffer_records");
      continue;
    }
    // HIP API calls first (the launches that GPU work links to).
    for (const char* key : {"hip_api", "marker_api", "rccl_api", "hsa_api"}) {
      array rows;
      if (records[key].get_array().get(rows) != simdjson::SUCCESS) continue;
      for (element r : rows) {
        report.read(std::string(key) + " records");
        int64_t start = num(r, "start_timestamp"), end = num(r, "end_timestamp");
        if (checked_duration(start, end) < 0) {
          report.skipped("end before start");
          continue;
        }
        uint32_t track = b.thread_track(b.process(pid), num(r, "thread_id"));
        int64_t corr = num(r["correlation_id"], "internal", -1);
        std::string_view nm = op_name(num(r, "kind"), num(r, "operation"));
        uint32_t mark = b.args_mark();
        if (corr >= 0) b.arg_int(k_corr, corr);
        b.add_slice(track, start, end - start,
                    b.intern(nm.empty() ? std::string(key) : std::string(nm)),
                    std::string_view(key) == "marker_api" ? b.intern("user_annotation") : k_runtime,
                    b.args_since(mark));
        if (corr >= 0) launches.emplace(corr, Launch{track, start});
      }
    }
    auto gpu_track = [&](int64_t agent, int64_t queue) {
      auto it = gpu_of.find(agent);
      int64_t dev = it == gpu_of.end() ? agent : it->second;
      uint32_t p = b.process(dev);
      Process& pr = b.trace().processes[p];
      if (!pr.is_gpu) {
        pr.is_gpu = true;
        pr.name = b.intern("GPU " + std::to_string(dev));
      }
      uint32_t t = b.thread_track(p, queue);
      b.mark_gpu_track(t, static_cast<int32_t>(dev), queue);
      if (b.trace().tracks[t].name == 0)
        b.trace().tracks[t].name = b.intern("queue " + std::to_string(queue));
      return std::pair<uint32_t, int64_t>{t, dev};
    };
    uint64_t unlinked = 0;
    array dispatches;
    if (records["kernel_dispatch"].get_array().get(dispatches) == simdjson::SUCCESS) {
      for (element r : dispatches) {
        report.read("kernel dispatches");
        int64_t start = num(r, "start_timestamp"), end = num(r, "end_timestamp");
        if (checked_duration(start, end) < 0) {
          report.skipped("end before start");
          continue;
        }
        element info;
        if (r["dispatch_info"].get(info) != simdjson::SUCCESS) {
          report.skipped("dispatches without dispatch_info");
          continue;
        }
        auto [track, dev] = gpu_track(handle(info, "agent_id"), handle(info, "queue_id"));
        int64_t kid = num(info, "kernel_id");
        auto kn = kernel_name.find(kid);
        StringId nm =
            kn != kernel_name.end() ? kn->second : b.intern("kernel " + std::to_string(kid));
        int64_t corr = num(r["correlation_id"], "internal", -1);
        uint32_t mark = b.args_mark();
        b.arg_int(k_device, dev);
        b.arg_int(k_stream, handle(r, "stream_id"));
        b.arg_int(k_queue, handle(info, "queue_id"));
        if (corr >= 0) b.arg_int(k_corr, corr);
        b.arg_int(k_kernel_id, kid);
        b.arg_json(k_items, triple(info, "grid_size"));
        b.arg_json(k_block, triple(info, "workgroup_size"));
        b.arg_int(k_smem, num(info, "group_segment_size"));
        b.arg_int(k_private, num(info, "private_segment_size"));
        b.add_slice(track, start, end - start, nm, k_kernel, b.args_since(mark));
        auto l = launches.find(corr);
        if (l != launches.end())
          b.add_flow(static_cast<uint64_t>(corr), k_flow, l->second.track, l->second.ts, track,
                     start);
        else
          ++unlinked;
      }
    }
    array copies;
    if (records["memory_copy"].get_array().get(copies) == simdjson::SUCCESS) {
      for (element r : copies) {
        report.read("memory copies");
        int64_t start = num(r, "start_timestamp"), end = num(r, "end_timestamp");
        if (checked_duration(start, end) < 0) {
          report.skipped("end before start");
          continue;
        }
        auto [track, dev] = gpu_track(handle(r, "dst_agent_id"), -1);
        std::string_view op = op_name(num(r, "kind"), num(r, "operation"));
        std::string nm =
            op.find("HOST_TO_DEVICE") != std::string_view::npos   ? "Memcpy HtoD (Host -> Device)"
            : op.find("DEVICE_TO_HOST") != std::string_view::npos ? "Memcpy DtoH (Device -> Host)"
            : op.find("DEVICE_TO_DEVICE") != std::string_view::npos
                ? "Memcpy DtoD (Device -> Device)"
                : "Memcpy Unknown (" + std::string(op) + ")";
        int64_t corr = num(r["correlation_id"], "internal", -1);
        uint32_t mark = b.args_mark();
        b.arg_int(k_device, dev);
        if (corr >= 0) b.arg_int(k_corr, corr);
        b.arg_int(k_bytes, num(r, "bytes"));
        b.add_slice(track, start, end - start, b.intern(nm), k_memcpy, b.args_since(mark));
        auto l = launches.find(corr);
        if (l != launches.end())
          b.add_flow(static_cast<uint64_t>(corr), k_flow, l->second.track, l->second.ts, track,
                     start);
      }
    }
    if (unlinked && launches.empty())
      report.note("no HIP API records (run with --hip-trace for launches and flows)");
    else if (unlinked)
      report.note(std::to_string(unlinked) + " dispatches without their API call");
  }
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
