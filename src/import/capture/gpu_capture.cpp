#include "import/capture/gpu_capture.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "trace/formats/cupti_format.h"

namespace mlprof {

namespace {

using namespace rawgpu;

std::string demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status == 0 && d) {
    std::string s(d);
    std::free(d);
    return s;
  }
  return name;
}

// CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind as Kineto names them.
const char* copy_kind_name(uint8_t k) {
  switch (k) {
    case 1:
      return "HtoD";
    case 2:
      return "DtoH";
    case 3:
      return "HtoA";
    case 4:
      return "AtoH";
    case 5:
      return "AtoA";
    case 6:
      return "AtoD";
    case 7:
      return "DtoA";
    case 8:
      return "DtoD";
    case 9:
      return "HtoH";
    case 10:
      return "PtoP";
    default:
      return "Unknown";
  }
}

const char* memory_kind_name(uint32_t k) {
  switch (k) {
    case 1:
      return "Pageable";
    case 2:
      return "Pinned";
    case 3:
      return "Device";
    case 4:
      return "Array";
    case 5:
      return "Managed";
    case 6:
      return "Device Static";
    case 7:
      return "Managed Static";
    default:
      return "Unknown";
  }
}

// Kineto's names for CUpti_ActivitySynchronizationType.
const char* sync_type_name(uint32_t t) {
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

std::string json_triple(const int32_t v[3]) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         "]";
}

template <typename T>
bool read_struct(const std::string& d, size_t off, size_t size, T& out) {
  if (size < sizeof(T) || off + sizeof(T) > d.size()) return false;
  std::memcpy(&out, d.data() + off, sizeof(T));
  return true;
}

// The fields that lead KernelRecord, MemcpyRecord and MemsetRecord alike.
struct WorkPrefix {
  uint64_t start, end;
  uint32_t device, context;
};

struct ApiCall {
  uint32_t track;
  int64_t ts;
};

}  // namespace

Status add_gpu_captures(const std::string& dir, TraceBuilder& b, GpuCaptureStats& stats) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("gpu.", 0) == 0 && name.size() > 8 && name.substr(name.size() - 4) == ".bin")
      paths.push_back(entry.path().string());
  }
  if (ec) return Status::error(StatusCode::kIo, dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());

  StringId k_kernel = b.intern("kernel"), k_memcpy = b.intern("gpu_memcpy"),
           k_memset = b.intern("gpu_memset"), k_runtime = b.intern("cuda_runtime"),
           k_driver = b.intern("cuda_driver"), k_flow = b.intern("ac2g");
  StringId a_corr = b.intern("correlation"), a_device = b.intern("device"),
           a_stream = b.intern("stream"), a_context = b.intern("context"),
           a_grid = b.intern("grid"), a_block = b.intern("block"),
           a_regs = b.intern("registers per thread"), a_smem = b.intern("shared memory"),
           a_bytes = b.intern("bytes"), a_bw = b.intern("memory bandwidth (GB/s)"),
           a_cbid = b.intern("cbid"), a_external = b.intern("External id"),
           a_graph = b.intern("graph id"), k_sync = b.intern("cuda_sync");

  for (const std::string& path : paths) {
    std::string d;
    {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      d = std::move(ss).str();
    }
    FileHeader fh{};
    if (d.size() < sizeof(fh)) {
      stats.notes.push_back(path + ": empty GPU capture");
      continue;
    }
    std::memcpy(&fh, d.data(), sizeof(fh));
    if (fh.magic != kFileMagic || fh.version != kFileVersion) {
      stats.notes.push_back(path + ": not an mlprof GPU capture (bad magic)");
      continue;
    }
    ++stats.files;
    uint32_t proc = b.process(fh.pid);
    std::unordered_map<uint32_t, ApiCall> launches;  // correlation -> API call
    struct GpuWork {
      uint32_t track;
      int64_t ts;
      uint32_t correlation;
    };
    std::vector<GpuWork> work;
    bool ended = false;
    // Records in file order; `fn(kind, offset of the body, body size)`.
    auto for_each_record = [&](auto&& fn) {
      size_t at = sizeof(fh);
      while (at + sizeof(RecordHeader) <= d.size()) {
        RecordHeader h;
        std::memcpy(&h, d.data() + at, sizeof(h));
        size_t body = at + sizeof(h);
        if (body + h.size > d.size()) break;
        at = body + h.size;
        fn(h.kind, body, h.size);
      }
    };
    // What later records need from any record of the file: external ids (PyTorch's op ids) by
    // correlation, and each context's device (sync records name only the context).
    std::unordered_map<uint32_t, uint64_t> external_ids;
    std::unordered_map<uint32_t, uint32_t> context_device;
    for_each_record([&](uint32_t kind, size_t body, size_t size) {
      if (kind == kExternalCorrelation) {
        ExternalCorrelationRecord r;
        if (read_struct(d, body, size, r)) {
          external_ids[r.correlation] = r.external_id;
          ++stats.external_correlations;
        }
      } else if (kind == kKernel || kind == kMemcpy || kind == kMemset) {
        WorkPrefix r;
        if (read_struct(d, body, size, r)) context_device.emplace(r.context, r.device);
      }
    });
    auto add_external = [&](uint32_t correlation) {
      auto it = external_ids.find(correlation);
      if (it != external_ids.end()) b.arg_int(a_external, static_cast<int64_t>(it->second));
    };
    std::vector<SyncRecord> syncs;
    size_t off = sizeof(fh);
    auto gpu_track = [&](uint32_t device, uint32_t stream) {
      uint32_t p = b.process(device);
      Process& pr = b.trace().processes[p];
      pr.is_gpu = true;
      if (pr.name == 0) pr.name = b.intern("GPU " + std::to_string(device));
      uint32_t t = b.thread_track(p, stream);
      b.mark_gpu_track(t, static_cast<int32_t>(device), stream);
      if (b.trace().tracks[t].name == 0)
        b.trace().tracks[t].name = b.intern("stream " + std::to_string(stream));
      return t;
    };
    auto valid_times = [&](uint64_t start, uint64_t end) {
      if (start == 0 || end < start) {
        ++stats.bad_timestamps;
        return false;
      }
      return true;
    };
    while (off + sizeof(RecordHeader) <= d.size()) {
      RecordHeader h;
      std::memcpy(&h, d.data() + off, sizeof(h));
      size_t body = off + sizeof(h);
      if (body + h.size > d.size()) break;
      off = body + h.size;
      switch (h.kind) {
        case kKernel: {
          KernelRecord r;
          if (!read_struct(d, body, h.size, r) || sizeof(r) + r.name_len > h.size) break;
          if (!valid_times(r.start, r.end)) break;
          std::string name = demangle(std::string(d.data() + body + sizeof(r), r.name_len));
          uint32_t track = gpu_track(r.device, r.stream);
          uint32_t mark = b.args_mark();
          b.arg_int(a_corr, r.correlation);
          b.arg_int(a_device, r.device);
          b.arg_int(a_stream, r.stream);
          b.arg_int(a_context, r.context);
          b.arg_json(a_grid, json_triple(r.grid));
          b.arg_json(a_block, json_triple(r.block));
          b.arg_int(a_regs, r.registers);
          b.arg_int(a_smem, int64_t{r.static_shared} + r.dynamic_shared);
          if (r.graph_id) b.arg_int(a_graph, r.graph_id);
          add_external(r.correlation);
          b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
                      b.intern(name), k_kernel, b.args_since(mark));
          work.push_back({track, static_cast<int64_t>(r.start), r.correlation});
          ++stats.kernels;
          break;
        }
        case kMemcpy: {
          MemcpyRecord r;
          if (!read_struct(d, body, h.size, r) || !valid_times(r.start, r.end)) break;
          uint32_t track = gpu_track(r.device, r.stream);
          std::string name = std::string("Memcpy ") + copy_kind_name(r.copy_kind) + " (" +
                             memory_kind_name(r.src_kind) + " -> " + memory_kind_name(r.dst_kind) +
                             ")";
          uint32_t mark = b.args_mark();
          b.arg_int(a_corr, r.correlation);
          b.arg_int(a_device, r.device);
          b.arg_int(a_stream, r.stream);
          b.arg_int(a_context, r.context);
          b.arg_int(a_bytes, static_cast<int64_t>(r.bytes));
          double dur = static_cast<double>(r.end - r.start);
          b.arg_double(a_bw, dur > 0 ? r.bytes / dur : 0.0);  // bytes/ns = GB/s
          add_external(r.correlation);
          b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
                      b.intern(name), k_memcpy, b.args_since(mark));
          work.push_back({track, static_cast<int64_t>(r.start), r.correlation});
          ++stats.memcpys;
          break;
        }
        case kMemset: {
          MemsetRecord r;
          if (!read_struct(d, body, h.size, r) || !valid_times(r.start, r.end)) break;
          uint32_t track = gpu_track(r.device, r.stream);
          uint32_t mark = b.args_mark();
          b.arg_int(a_corr, r.correlation);
          b.arg_int(a_device, r.device);
          b.arg_int(a_stream, r.stream);
          b.arg_int(a_bytes, static_cast<int64_t>(r.bytes));
          add_external(r.correlation);
          b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
                      b.intern(std::string("Memset (") + memory_kind_name(r.memory_kind) + ")"),
                      k_memset, b.args_since(mark));
          work.push_back({track, static_cast<int64_t>(r.start), r.correlation});
          ++stats.memsets;
          break;
        }
        case kApi: {
          ApiRecord r;
          if (!read_struct(d, body, h.size, r) || sizeof(r) + r.name_len > h.size) break;
          if (!valid_times(r.start, r.end)) break;
          uint32_t track = b.thread_track(proc, r.tid);
          uint32_t mark = b.args_mark();
          b.arg_int(a_corr, r.correlation);
          b.arg_int(a_cbid, r.cbid);
          add_external(r.correlation);
          b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
                      b.intern(std::string(d.data() + body + sizeof(r), r.name_len)),
                      r.domain == 1 ? k_runtime : k_driver, b.args_since(mark));
          launches[r.correlation] = ApiCall{track, static_cast<int64_t>(r.start)};
          ++stats.api_calls;
          break;
        }
        case kDropped: {
          DroppedRecord r;
          if (read_struct(d, body, h.size, r)) stats.dropped_records += r.count;
          break;
        }
        case kSync: {
          SyncRecord r;
          if (!read_struct(d, body, h.size, r) || !valid_times(r.start, r.end)) break;
          syncs.push_back(r);  // placed once every API call (their thread) is known
          break;
        }
        case kDescriptor: {
          DescriptorRecord r;
          if (!read_struct(d, body, h.size, r)) break;
          if (r.reopened)
            stats.notes.push_back(
                "pid " + std::to_string(fh.pid) + " closed the GPU tracer's capture file " +
                std::to_string(r.reopened) +
                " time(s) (closefrom or the daemon pattern); it was reopened each time");
          if (r.write_errno)
            stats.notes.push_back("pid " + std::to_string(fh.pid) +
                                  ": writing the GPU capture failed (" +
                                  std::strerror(static_cast<int>(r.write_errno)) +
                                  "): " + std::to_string(r.lost_bytes) +
                                  " bytes of GPU records after that are missing");
          break;
        }
        case kBuffers: {
          BuffersRecord r;
          if (!read_struct(d, body, h.size, r) || r.completed >= r.requested) break;
          stats.notes.push_back(
              "pid " + std::to_string(fh.pid) + ": another CUPTI client in the process (torch." +
              "profiler's Kineto, Nsight Systems, ...) took over CUPTI's activity buffers: " +
              std::to_string(r.requested - r.completed) + " of " + std::to_string(r.requested) +
              " buffers mlprof handed to CUPTI went to it, and the GPU activity they held is " +
              "missing here (and, on the H100, from torch.profiler's trace too). CUPTI serves " +
              "one activity client per process: profile GPU work with one of them (mlprof " +
              "analyze reads torch.profiler's trace)");
          break;
        }
        case kEnd:
          ended = true;
          break;
        default:
          break;
      }
    }
    // Waits: a stream's on that stream; a context or event sync (no stream) on the thread that
    // waited, inside its cudaDeviceSynchronize/cudaEventSynchronize, as Kineto's cuda_sync.
    for (const SyncRecord& r : syncs) {
      auto dev = context_device.find(r.context);
      uint32_t device = dev == context_device.end() ? 0 : dev->second;
      uint32_t track;
      if (r.stream != kNoStream) {
        track = gpu_track(device, r.stream);
      } else if (auto it = launches.find(r.correlation); it != launches.end()) {
        track = it->second.track;
      } else {
        track = gpu_track(device, kNoStream);
      }
      uint32_t mark = b.args_mark();
      b.arg_int(a_corr, r.correlation);
      b.arg_int(a_device, device);
      if (r.stream != kNoStream) b.arg_int(a_stream, r.stream);
      b.arg_int(a_context, r.context);
      add_external(r.correlation);
      b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
                  b.intern(sync_type_name(r.type)), k_sync, b.args_since(mark));
      ++stats.syncs;
    }
    // Launch -> GPU work, as Kineto's ac2g flows (CUDA-graph kernels have no launch record).
    for (const GpuWork& w : work) {
      auto it = launches.find(w.correlation);
      if (w.correlation == 0 || it == launches.end()) continue;
      b.add_flow(w.correlation, k_flow, it->second.track, it->second.ts, w.track, w.ts);
      ++stats.flows;
    }
    if (!ended)
      stats.notes.push_back(
          "pid " + std::to_string(fh.pid) +
          ": GPU capture not closed (process killed?): last records may be missing");
  }
  if (stats.bad_timestamps)
    stats.notes.push_back(std::to_string(stats.bad_timestamps) +
                          " GPU records with zero or reversed timestamps skipped");
  return Status::ok();
}

}  // namespace mlprof
