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

struct GpuWork {
  uint32_t track;
  int64_t ts;
  uint32_t correlation;
};

// The names every capture file's rows use, interned once (in this order) per call.
struct GpuKeys {
  StringId k_kernel, k_memcpy, k_memset, k_runtime, k_driver, k_flow;
  StringId a_corr, a_device, a_stream, a_context, a_grid, a_block, a_regs, a_smem, a_bytes, a_bw,
      a_cbid, a_external, a_graph, k_sync;

  explicit GpuKeys(TraceBuilder& b)
      : k_kernel(b.intern("kernel")),
        k_memcpy(b.intern("gpu_memcpy")),
        k_memset(b.intern("gpu_memset")),
        k_runtime(b.intern("cuda_runtime")),
        k_driver(b.intern("cuda_driver")),
        k_flow(b.intern("ac2g")),
        a_corr(b.intern("correlation")),
        a_device(b.intern("device")),
        a_stream(b.intern("stream")),
        a_context(b.intern("context")),
        a_grid(b.intern("grid")),
        a_block(b.intern("block")),
        a_regs(b.intern("registers per thread")),
        a_smem(b.intern("shared memory")),
        a_bytes(b.intern("bytes")),
        a_bw(b.intern("memory bandwidth (GB/s)")),
        a_cbid(b.intern("cbid")),
        a_external(b.intern("External id")),
        a_graph(b.intern("graph id")),
        k_sync(b.intern("cuda_sync")) {}
};

// One capture file being read: its bytes, and what its records leave for later ones.
struct GpuFile {
  TraceBuilder& b;
  GpuCaptureStats& stats;
  const GpuKeys& k;
  const std::string& d;
  const FileHeader& fh;
  uint32_t proc;
  std::unordered_map<uint32_t, ApiCall> launches;  // correlation -> API call
  std::vector<GpuWork> work;
  bool ended = false;
  // What later records need from any record of the file: external ids (PyTorch's op ids) by
  // correlation, and each context's device (sync records name only the context).
  std::unordered_map<uint32_t, uint64_t> external_ids;
  std::unordered_map<uint32_t, uint32_t> context_device;
  std::vector<SyncRecord> syncs;
};

// The gpu.*.bin files of `dir`, sorted.
Status gpu_capture_paths(const std::string& dir, std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("gpu.", 0) == 0 && name.size() > 8 && name.substr(name.size() - 4) == ".bin")
      paths.push_back(entry.path().string());
  }
  if (ec) return Status::error(StatusCode::kIo, dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());
  return Status::ok();
}

std::string read_capture_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::move(ss).str();
}

// Records in file order; `fn(kind, offset of the body, body size)`.
template <typename Fn>
void for_each_record(const std::string& d, Fn&& fn) {
  size_t at = sizeof(FileHeader);
  while (at + sizeof(RecordHeader) <= d.size()) {
    RecordHeader h;
    std::memcpy(&h, d.data() + at, sizeof(h));
    size_t body = at + sizeof(h);
    if (body + h.size > d.size()) break;
    at = body + h.size;
    fn(h.kind, body, h.size);
  }
}

// First pass: external ids by correlation, and each context's device.
void index_records(GpuFile& f) {
  for_each_record(f.d, [&](uint32_t kind, size_t body, size_t size) {
    if (kind == kExternalCorrelation) {
      ExternalCorrelationRecord r;
      if (read_struct(f.d, body, size, r)) {
        f.external_ids[r.correlation] = r.external_id;
        ++f.stats.external_correlations;
      }
    } else if (kind == kKernel || kind == kMemcpy || kind == kMemset) {
      WorkPrefix r;
      if (read_struct(f.d, body, size, r)) f.context_device.emplace(r.context, r.device);
    }
  });
}

void add_external(GpuFile& f, uint32_t correlation) {
  auto it = f.external_ids.find(correlation);
  if (it != f.external_ids.end()) f.b.arg_int(f.k.a_external, static_cast<int64_t>(it->second));
}

uint32_t gpu_track(GpuFile& f, uint32_t device, uint32_t stream) {
  TraceBuilder& b = f.b;
  uint32_t p = b.process(device);
  Process& pr = b.trace().processes[p];
  pr.is_gpu = true;
  if (pr.name == 0) pr.name = b.intern("GPU " + std::to_string(device));
  uint32_t t = b.thread_track(p, stream);
  b.mark_gpu_track(t, static_cast<int32_t>(device), stream);
  if (b.trace().tracks[t].name == 0)
    b.trace().tracks[t].name = b.intern("stream " + std::to_string(stream));
  return t;
}

bool valid_times(GpuFile& f, uint64_t start, uint64_t end) {
  if (start == 0 || end < start) {
    ++f.stats.bad_timestamps;
    return false;
  }
  return true;
}

void add_kernel(GpuFile& f, size_t body, size_t size) {
  TraceBuilder& b = f.b;
  const GpuKeys& k = f.k;
  KernelRecord r;
  if (!read_struct(f.d, body, size, r) || sizeof(r) + r.name_len > size) return;
  if (!valid_times(f, r.start, r.end)) return;
  std::string name = demangle(std::string(f.d.data() + body + sizeof(r), r.name_len));
  uint32_t track = gpu_track(f, r.device, r.stream);
  uint32_t mark = b.args_mark();
  b.arg_int(k.a_corr, r.correlation);
  b.arg_int(k.a_device, r.device);
  b.arg_int(k.a_stream, r.stream);
  b.arg_int(k.a_context, r.context);
  b.arg_json(k.a_grid, json_triple(r.grid));
  b.arg_json(k.a_block, json_triple(r.block));
  b.arg_int(k.a_regs, r.registers);
  b.arg_int(k.a_smem, int64_t{r.static_shared} + r.dynamic_shared);
  if (r.graph_id) b.arg_int(k.a_graph, r.graph_id);
  add_external(f, r.correlation);
  b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
              b.intern(name), k.k_kernel, b.args_since(mark));
  f.work.push_back({track, static_cast<int64_t>(r.start), r.correlation});
  ++f.stats.kernels;
}

void add_memcpy(GpuFile& f, size_t body, size_t size) {
  TraceBuilder& b = f.b;
  const GpuKeys& k = f.k;
  MemcpyRecord r;
  if (!read_struct(f.d, body, size, r) || !valid_times(f, r.start, r.end)) return;
  uint32_t track = gpu_track(f, r.device, r.stream);
  std::string name = std::string("Memcpy ") + copy_kind_name(r.copy_kind) + " (" +
                     memory_kind_name(r.src_kind) + " -> " + memory_kind_name(r.dst_kind) + ")";
  uint32_t mark = b.args_mark();
  b.arg_int(k.a_corr, r.correlation);
  b.arg_int(k.a_device, r.device);
  b.arg_int(k.a_stream, r.stream);
  b.arg_int(k.a_context, r.context);
  b.arg_int(k.a_bytes, static_cast<int64_t>(r.bytes));
  double dur = static_cast<double>(r.end - r.start);
  b.arg_double(k.a_bw, dur > 0 ? r.bytes / dur : 0.0);  // bytes/ns = GB/s
  add_external(f, r.correlation);
  b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
              b.intern(name), k.k_memcpy, b.args_since(mark));
  f.work.push_back({track, static_cast<int64_t>(r.start), r.correlation});
  ++f.stats.memcpys;
}

void add_memset(GpuFile& f, size_t body, size_t size) {
  TraceBuilder& b = f.b;
  const GpuKeys& k = f.k;
  MemsetRecord r;
  if (!read_struct(f.d, body, size, r) || !valid_times(f, r.start, r.end)) return;
  uint32_t track = gpu_track(f, r.device, r.stream);
  uint32_t mark = b.args_mark();
  b.arg_int(k.a_corr, r.correlation);
  b.arg_int(k.a_device, r.device);
  b.arg_int(k.a_stream, r.stream);
  b.arg_int(k.a_bytes, static_cast<int64_t>(r.bytes));
  add_external(f, r.correlation);
  b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
              b.intern(std::string("Memset (") + memory_kind_name(r.memory_kind) + ")"), k.k_memset,
              b.args_since(mark));
  f.work.push_back({track, static_cast<int64_t>(r.start), r.correlation});
  ++f.stats.memsets;
}

void add_api_call(GpuFile& f, size_t body, size_t size) {
  TraceBuilder& b = f.b;
  const GpuKeys& k = f.k;
  ApiRecord r;
  if (!read_struct(f.d, body, size, r) || sizeof(r) + r.name_len > size) return;
  if (!valid_times(f, r.start, r.end)) return;
  uint32_t track = b.thread_track(f.proc, r.tid);
  uint32_t mark = b.args_mark();
  b.arg_int(k.a_corr, r.correlation);
  b.arg_int(k.a_cbid, r.cbid);
  add_external(f, r.correlation);
  b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
              b.intern(std::string(f.d.data() + body + sizeof(r), r.name_len)),
              r.domain == 1 ? k.k_runtime : k.k_driver, b.args_since(mark));
  f.launches[r.correlation] = ApiCall{track, static_cast<int64_t>(r.start)};
  ++f.stats.api_calls;
}

// The tracer's own health records: a capture file it had to reopen or failed to write.
void note_descriptor(GpuFile& f, size_t body, size_t size) {
  DescriptorRecord r;
  if (!read_struct(f.d, body, size, r)) return;
  if (r.reopened)
    f.stats.notes.push_back(
        "pid " + std::to_string(f.fh.pid) + " closed the GPU tracer's capture file " +
        std::to_string(r.reopened) +
        " time(s) (closefrom or the daemon pattern); it was reopened each time");
  if (r.write_errno)
    f.stats.notes.push_back(
        "pid " + std::to_string(f.fh.pid) + ": writing the GPU capture failed (" +
        std::strerror(static_cast<int>(r.write_errno)) + "): " + std::to_string(r.lost_bytes) +
        " bytes of GPU records after that are missing");
}

// Buffers another CUPTI client took over.
void note_buffers(GpuFile& f, size_t body, size_t size) {
  BuffersRecord r;
  if (!read_struct(f.d, body, size, r) || r.completed >= r.requested) return;
  f.stats.notes.push_back(
      "pid " + std::to_string(f.fh.pid) + ": another CUPTI client in the process (torch." +
      "profiler's Kineto, Nsight Systems, ...) took over CUPTI's activity buffers: " +
      std::to_string(r.requested - r.completed) + " of " + std::to_string(r.requested) +
      " buffers mlprof handed to CUPTI went to it, and the GPU activity they held is " +
      "missing here (and, on the H100, from torch.profiler's trace too). CUPTI serves " +
      "one activity client per process: profile GPU work with one of them (mlprof " +
      "analyze reads torch.profiler's trace)");
}

// Second pass: every record in file order to rows (syncs kept for later).
void decode_records(GpuFile& f) {
  for_each_record(f.d, [&](uint32_t kind, size_t body, size_t size) {
    switch (kind) {
      case kKernel:
        add_kernel(f, body, size);
        break;
      case kMemcpy:
        add_memcpy(f, body, size);
        break;
      case kMemset:
        add_memset(f, body, size);
        break;
      case kApi:
        add_api_call(f, body, size);
        break;
      case kDropped: {
        DroppedRecord r;
        if (read_struct(f.d, body, size, r)) f.stats.dropped_records += r.count;
        break;
      }
      case kSync: {
        SyncRecord r;
        if (!read_struct(f.d, body, size, r) || !valid_times(f, r.start, r.end)) break;
        f.syncs.push_back(r);  // placed once every API call (their thread) is known
        break;
      }
      case kDescriptor:
        note_descriptor(f, body, size);
        break;
      case kBuffers:
        note_buffers(f, body, size);
        break;
      case kEnd:
        f.ended = true;
        break;
      default:
        break;
    }
  });
}

// Waits: a stream's on that stream; a context or event sync (no stream) on the thread that
// waited, inside its cudaDeviceSynchronize/cudaEventSynchronize, as Kineto's cuda_sync.
void place_syncs(GpuFile& f) {
  TraceBuilder& b = f.b;
  const GpuKeys& k = f.k;
  for (const SyncRecord& r : f.syncs) {
    auto dev = f.context_device.find(r.context);
    uint32_t device = dev == f.context_device.end() ? 0 : dev->second;
    uint32_t track;
    if (r.stream != kNoStream) {
      track = gpu_track(f, device, r.stream);
    } else if (auto it = f.launches.find(r.correlation); it != f.launches.end()) {
      track = it->second.track;
    } else {
      track = gpu_track(f, device, kNoStream);
    }
    uint32_t mark = b.args_mark();
    b.arg_int(k.a_corr, r.correlation);
    b.arg_int(k.a_device, device);
    if (r.stream != kNoStream) b.arg_int(k.a_stream, r.stream);
    b.arg_int(k.a_context, r.context);
    add_external(f, r.correlation);
    b.add_slice(track, static_cast<int64_t>(r.start), static_cast<int64_t>(r.end - r.start),
                b.intern(sync_type_name(r.type)), k.k_sync, b.args_since(mark));
    ++f.stats.syncs;
  }
}

// Launch -> GPU work, as Kineto's ac2g flows (CUDA-graph kernels have no launch record).
void add_launch_flows(GpuFile& f) {
  for (const GpuWork& w : f.work) {
    auto it = f.launches.find(w.correlation);
    if (w.correlation == 0 || it == f.launches.end()) continue;
    f.b.add_flow(w.correlation, f.k.k_flow, it->second.track, it->second.ts, w.track, w.ts);
    ++f.stats.flows;
  }
}

}  // namespace

Status add_gpu_captures(const std::string& dir, TraceBuilder& b, GpuCaptureStats& stats) {
  std::vector<std::string> paths;
  MLPROF_RETURN_IF_ERROR(gpu_capture_paths(dir, paths));
  const GpuKeys keys(b);

  for (const std::string& path : paths) {
    std::string d = read_capture_file(path);
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
    GpuFile f{b, stats, keys, d, fh, b.process(fh.pid), {}, {}, false, {}, {}, {}};
    index_records(f);
    decode_records(f);
    place_syncs(f);
    add_launch_flows(f);
    if (!f.ended)
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
