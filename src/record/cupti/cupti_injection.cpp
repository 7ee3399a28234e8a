// libmlprof_cupti.so: the CUDA driver loads it through CUDA_INJECTION64_PATH at cuInit and
// calls InitializeInjection(). It enables CUPTI activity records (kernels, memcpy, memset,
// runtime API, synchronization, external correlation; driver API with MLPROF_CUPTI_DRIVER=1) and
// writes them, compacted, to $MLPROF_RUN_DIR/gpu.<pid>.<n>.bin from CUPTI's buffer-completed
// callback. CUPTI is given CLOCK_MONOTONIC so GPU and host events share one time base.
#include <cupti.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "record/capture_fd.h"
#include "trace/formats/cupti_format.h"

namespace {

using namespace mlprof::rawgpu;

constexpr size_t kBufferSize = 8 << 20;
// The program may close our descriptor (closefrom, daemons): CaptureFd checks it before each
// write and reopens the file, so records never land in a file of the program's.
mlprof::capture::CaptureFd g_out;
uint64_t g_file_bytes = 0;  // whole records written: a failed write is cut back to it
int g_write_errno = 0;      // the first failed write or reopen: nothing is written after it
uint64_t g_lost_bytes = 0;
std::mutex g_mu;
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_buffers_requested{0}, g_buffers_completed{0};
std::atomic<bool> g_started{false};
std::unordered_map<uint64_t, std::string>* g_api_names = nullptr;  // (domain << 32 | cbid)
std::mutex g_names_mu;  // buffers may complete on several threads at once

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

template <typename T>
void append_record(std::string& out, RecordKind kind, const T& rec, const char* tail = nullptr,
                   size_t tail_len = 0) {
  RecordHeader h{kind, static_cast<uint32_t>(sizeof(T) + tail_len)};
  out.append(reinterpret_cast<const char*>(&h), sizeof(h));
  out.append(reinterpret_cast<const char*>(&rec), sizeof(T));
  if (tail_len) out.append(tail, tail_len);
}

void write_out_locked(const std::string& data) {
  if (g_write_errno || !g_out.ensure()) {
    if (!g_write_errno) g_write_errno = g_out.error() ? g_out.error() : EIO;
    g_lost_bytes += data.size();
    return;
  }
  int fd = g_out.fd();
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      g_write_errno = w < 0 ? errno : EIO;
      g_lost_bytes += data.size();
      if (::ftruncate(fd, static_cast<off_t>(g_file_bytes)) == 0)
        ::lseek(fd, static_cast<off_t>(g_file_bytes), SEEK_SET);
      return;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  g_file_bytes += data.size();
}

void write_out(const std::string& data) {
  std::lock_guard<std::mutex> lock(g_mu);
  write_out_locked(data);
}

const std::string& api_name(CUpti_CallbackDomain domain, uint32_t cbid) {
  uint64_t key = (uint64_t(domain) << 32) | cbid;
  std::lock_guard<std::mutex> lock(g_names_mu);
  auto it = g_api_names->find(key);
  if (it != g_api_names->end()) return it->second;
  const char* name = nullptr;
  std::string s;
  if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name) {
    s = name;
    // CUPTI appends a version suffix ("cudaLaunchKernel_v7000"); Kineto shows the plain name.
    size_t v = s.rfind("_v");
    if (v != std::string::npos && v + 2 < s.size() &&
        s.find_first_not_of("0123456789", v + 2) == std::string::npos)
      s.resize(v);
  } else {
    s = "cuda api " + std::to_string(cbid);
  }
  return g_api_names->emplace(key, std::move(s)).first->second;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, kBufferSize));
  *size = *buffer ? kBufferSize : 0;
  *max_records = 0;
  if (*buffer) g_buffers_requested.fetch_add(1, std::memory_order_relaxed);
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t,
                               size_t valid) {
  g_buffers_completed.fetch_add(1, std::memory_order_relaxed);
  std::string out;
  out.reserve(valid / 2);
  CUpti_Activity* record = nullptr;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
        KernelRecord r{};
        r.start = k->start;
        r.end = k->end;
        r.device = k->deviceId;
        r.context = k->contextId;
        r.stream = k->streamId;
        r.correlation = k->correlationId;
        r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
        r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
        r.static_shared = k->staticSharedMemory;
        r.dynamic_shared = k->dynamicSharedMemory;
        r.registers = k->registersPerThread;
        size_t len = k->name ? std::min<size_t>(std::strlen(k->name), 65535) : 0;
        r.name_len = static_cast<uint16_t>(len);
        r.graph_id = k->graphId;
        append_record(out, kKernel, r, k->name, len);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        MemcpyRecord r{};
        r.start = m->start;
        r.end = m->end;
        r.device = m->deviceId;
        r.context = m->contextId;
        r.stream = m->streamId;
        r.correlation = m->correlationId;
        r.bytes = m->bytes;
        r.copy_kind = m->copyKind;
        r.src_kind = m->srcKind;
        r.dst_kind = m->dstKind;
        append_record(out, kMemcpy, r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<CUpti_ActivityMemset4*>(record);
        MemsetRecord r{};
        r.start = m->start;
        r.end = m->end;
        r.device = m->deviceId;
        r.context = m->contextId;
        r.stream = m->streamId;
        r.correlation = m->correlationId;
        r.bytes = m->bytes;
        r.memory_kind = m->memoryKind;
        r.value = m->value;
        append_record(out, kMemset, r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* a = reinterpret_cast<CUpti_ActivityAPI*>(record);
        bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        const std::string& name =
            api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
        ApiRecord r{};
        r.start = a->start;
        r.end = a->end;
        r.pid = a->processId;
        r.tid = a->threadId;
        r.correlation = a->correlationId;
        r.cbid = a->cbid;
        r.domain = runtime ? 1 : 2;
        r.name_len = static_cast<uint16_t>(std::min<size_t>(name.size(), 65535));
        append_record(out, kApi, r, name.data(), r.name_len);
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* y = reinterpret_cast<CUpti_ActivitySynchronization2*>(record);
        SyncRecord r{};
        r.start = y->start;
        r.end = y->end;
        r.type = y->type;
        r.context = y->contextId;
        r.stream = y->streamId;
        r.correlation = y->correlationId;
        r.event = y->cudaEventId;
        append_record(out, kSync, r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        auto* e = reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record);
        ExternalCorrelationRecord r{};
        r.external_id = e->externalId;
        r.correlation = e->correlationId;
        r.external_kind = e->externalKind;
        append_record(out, kExternalCorrelation, r);
        break;
      }
      default:
        break;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
    g_dropped += dropped;
  free(buffer);
  if (!out.empty()) write_out(out);
}

void finish() {
  if (!g_started.exchange(false)) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::string out;
  append_record(out, kDropped, DroppedRecord{g_dropped.load()});
  append_record(out, kBuffers,
                BuffersRecord{g_buffers_requested.load(), g_buffers_completed.load()});
  std::lock_guard<std::mutex> lock(g_mu);
  // After a failed write, one more try for these last records (space may have come back).
  int first_errno = g_write_errno;
  g_write_errno = 0;
  if (first_errno || g_out.reopened())
    append_record(out, kDescriptor, DescriptorRecord{g_out.reopened(), first_errno, g_lost_bytes});
  append_record(out, kEnd, DroppedRecord{0});
  write_out_locked(out);
  g_out.close();  // only if still ours
}

bool open_output(const char* dir) {
  long pid = static_cast<long>(getpid());
  for (int k = 0; k < 1000; ++k) {
    std::string path =
        std::string(dir) + "/gpu." + std::to_string(pid) + "." + std::to_string(k) + ".bin";
    if (g_out.create(path.c_str())) {
      FileHeader fh{kFileMagic, kFileVersion, pid};
      std::string out(reinterpret_cast<const char*>(&fh), sizeof(fh));
      write_out(out);
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

void report(const char* what, CUptiResult r) {
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  std::fprintf(stderr, "mlprof cupti: %s failed: %s\n", what, msg ? msg : "?");
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* dir = std::getenv("MLPROF_RUN_DIR");
  if (!dir || !*dir || g_started.load()) return 1;
  g_api_names = new std::unordered_map<uint64_t, std::string>();
  if (!open_output(dir)) {
    std::fprintf(stderr, "mlprof cupti: cannot write to %s\n", dir);
    return 1;
  }
  CUptiResult r = cuptiActivityRegisterTimestampCallback(monotonic_ns);
  if (r != CUPTI_SUCCESS) report("cuptiActivityRegisterTimestampCallback", r);
  r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    report("cuptiActivityRegisterCallbacks", r);
    return 1;
  }
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
    r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) report("cuptiActivityEnable", r);
  }
  if (const char* d = std::getenv("MLPROF_CUPTI_DRIVER"); d && *d == '1')
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
  cuptiActivityFlushPeriod(1000);
  g_started = true;
  std::atexit(finish);
  return 1;
}
