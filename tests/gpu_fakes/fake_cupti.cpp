// A stand-in for libcupti.so.13, so the CUPTI injection library (src/record/cupti/) runs on a
// machine with no GPU and no driver. It exports the functions the injection library calls, with
// the same symbol version, and on cuptiActivityFlushAll delivers one scripted capture through
// the registered buffer callbacks: records laid out by the real CUDA 13 headers
// (CUpti_ActivityKernel10, Memcpy6, Memset4, API, Synchronization2, ExternalCorrelation), in two
// buffers completed from two threads (per-thread buffers), each with a dropped-record count.
// Only the kinds the injection library enabled are delivered, as CUPTI does.
//
// Times: every record is BASE + an offset in ns, BASE read from the timestamp callback the
// injection library registered when it enabled the first kind (CUPTI's own clock otherwise,
// which the fake makes deliberately far from CLOCK_MONOTONIC, so a missing registration shows).
// The scenario is written out in tests/cupti_fake_capture_test.cpp, which checks the Trace.
#include <cupti.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

CUpti_BuffersCallbackRequestFunc g_requested = nullptr;
CUpti_BuffersCallbackCompleteFunc g_completed = nullptr;
CUpti_TimestampCallbackFunc g_clock = nullptr;
bool g_enabled[CUPTI_ACTIVITY_KIND_COUNT] = {};
uint64_t g_base = 0;
bool g_delivered = false;
// Real CUPTI asks for a buffer as soon as activity is enabled and completes it, later, to whichever
// client's callback is registered *then*: a second client (torch.profiler's Kineto) registering in
// between is handed the first client's buffer.
uint8_t* g_pending = nullptr;
size_t g_pending_size = 0;
thread_local size_t t_dropped = 0;  // reported for the buffer this thread completes

uint64_t now_ns() {
  if (g_clock) return g_clock();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  // CUPTI's default clock is not the host's: an offset of a day makes a mix-up obvious.
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec) + 86400ull * 1000000000ull;
}

size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    default:
      return 0;
  }
}

// Records of one buffer, each padded to CUPTI's 8-byte record alignment.
struct Buffer {
  std::vector<uint8_t> bytes;
  size_t dropped = 0;
  template <typename T>
  void add(const T& rec) {
    if (!g_enabled[rec.kind] && !(rec.kind == CUPTI_ACTIVITY_KIND_KERNEL &&
                                  g_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]))
      return;
    size_t at = bytes.size();
    bytes.resize(at + ((sizeof(T) + 7) & ~size_t{7}), 0);
    std::memcpy(bytes.data() + at, &rec, sizeof(T));
  }
};

uint64_t at(uint64_t offset_ns) { return g_base + offset_ns; }

CUpti_ActivityAPI api(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint32_t corr, uint64_t start,
                      uint64_t end, uint32_t tid) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = at(start);
  a.end = at(end);
  a.processId = static_cast<uint32_t>(getpid());
  a.threadId = tid;
  a.correlationId = corr;
  return a;
}

CUpti_ActivityKernel10 kernel(const char* name, uint32_t corr, uint32_t device, uint32_t ctx,
                              uint32_t stream, uint64_t start, uint64_t end) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.correlationId = corr;
  k.deviceId = device;
  k.contextId = ctx;
  k.streamId = stream;
  k.start = start ? at(start) : 0;
  k.end = at(end);
  k.gridX = k.gridY = k.gridZ = 1;
  k.blockX = k.blockY = k.blockZ = 1;
  return k;
}

CUpti_ActivityMemcpy6 memcpy_rec(uint8_t copy, uint8_t src, uint8_t dst, uint64_t bytes,
                                 uint32_t corr, uint32_t device, uint32_t stream, uint64_t start,
                                 uint64_t end) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy;
  m.srcKind = src;
  m.dstKind = dst;
  m.bytes = bytes;
  m.correlationId = corr;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = stream;
  m.start = at(start);
  m.end = at(end);
  return m;
}

CUpti_ActivitySynchronization2 sync_rec(CUpti_ActivitySynchronizationType type, uint32_t corr,
                                        uint32_t stream, uint64_t start, uint64_t end) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.correlationId = corr;
  s.contextId = 1;
  s.streamId = stream;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.start = at(start);
  s.end = at(end);
  return s;
}

// The main thread's buffer: one of each kind of work, the bad records, 3 dropped.
Buffer main_buffer(uint32_t tid) {
  constexpr uint64_t us = 1000;
  Buffer b;
  b.dropped = 3;
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11,
            100 * us, 110 * us, tid));
  CUpti_ActivityKernel10 k = kernel("_Z10vector_addPfS_S_i", 11, 0, 1, 7, 120 * us, 150 * us);
  k.gridX = 4, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 512;
  b.add(k);
  CUpti_ActivityExternalCorrelation ext{};
  ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  ext.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  ext.externalId = 4242;
  ext.correlationId = 11;
  b.add(ext);
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 12,
            200 * us, 205 * us, tid));
  b.add(memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 12, 0, 7, 210 * us, 214 * us));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 13, 300 * us,
            320 * us, tid));
  b.add(memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                   CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 1 << 20, 13, 0, 7, 305 * us, 315 * us));
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, 14, 330 * us,
            332 * us, tid));
  b.add(memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 8192, 14, 0, 8, 335 * us, 337 * us));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 15,
            395 * us, 398 * us, tid));
  CUpti_ActivityMemset4 ms{};
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.value = 0;
  ms.bytes = 256;
  ms.start = at(400 * us);
  ms.end = at(402 * us);
  ms.deviceId = 0;
  ms.contextId = 1;
  ms.streamId = 7;
  ms.correlationId = 15;
  ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  b.add(ms);
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 16, 500 * us,
            505 * us, tid));
  b.add(kernel("simple_kernel", 16, 0, 1, 8, 510 * us, 520 * us));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 17,
            598 * us, 702 * us, tid));
  b.add(
      sync_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 17, 7, 600 * us, 700 * us));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 18,
            798 * us, 902 * us, tid));
  b.add(sync_rec(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 18,
                 CUPTI_SYNCHRONIZATION_INVALID_VALUE, 800 * us, 900 * us));
  // A kernel of a CUDA graph: its correlation id is the graph launch's, of which there is no
  // API record here, so it gets no launch link.
  CUpti_ActivityKernel10 g = kernel("graph_kernel", 19, 0, 1, 7, 1000 * us, 1010 * us);
  g.graphId = 5;
  b.add(g);
  // A kernel with no start time and a copy that ends before it starts: counted, not plotted.
  b.add(kernel("never_started", 20, 0, 1, 7, 0, 1020 * us));
  b.add(memcpy_rec(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 64, 21, 0, 7, 1040 * us, 1030 * us));
  return b;
}

// A second host thread's buffer, launching on GPU 1: 4 dropped.
Buffer worker_buffer(uint32_t tid) {
  constexpr uint64_t us = 1000;
  Buffer b;
  b.dropped = 4;
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 31,
            1100 * us, 1105 * us, tid));
  b.add(kernel("_Z13worker_kernelv", 31, 1, 2, 3, 1110 * us, 1130 * us));
  return b;
}

void complete(const Buffer& b) {
  uint8_t* buf = nullptr;
  size_t size = 0, max_records = 0;
  g_requested(&buf, &size, &max_records);
  if (!buf || size < b.bytes.size()) return;
  std::memcpy(buf, b.bytes.data(), b.bytes.size());
  t_dropped = b.dropped;
  g_completed(nullptr, 0, buf, size, b.bytes.size());
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
  g_clock = f;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  if (!requested || !completed) return CUPTI_ERROR_INVALID_PARAMETER;
  g_requested = requested;
  g_completed = completed;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
    return CUPTI_ERROR_INVALID_KIND;
  if (g_base == 0) g_base = now_ns();
  g_enabled[kind] = true;
  if (!g_pending && g_requested) {
    size_t max_records = 0;
    g_requested(&g_pending, &g_pending_size, &max_records);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  if (g_delivered || !g_requested || !g_completed) return CUPTI_SUCCESS;
  g_delivered = true;
  if (g_pending) {  // nothing recorded in it: the script comes in fresh buffers
    t_dropped = 0;
    g_completed(nullptr, 0, g_pending, g_pending_size, 0);
    g_pending = nullptr;
  }
  uint32_t main_tid = static_cast<uint32_t>(gettid());
  Buffer a = main_buffer(main_tid), b = worker_buffer(main_tid + 1);
  std::thread t1([&] { complete(a); });
  std::thread t2([&] { complete(b); });
  t1.join();
  t2.join();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid,
                                                CUpti_Activity** record) {
  size_t off = 0;
  if (*record) {
    size_t cur = reinterpret_cast<uint8_t*>(*record) - buffer;
    off = cur + ((record_size((*record)->kind) + 7) & ~size_t{7});
  }
  if (off + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + off);
  size_t size = record_size(next->kind);
  if (size == 0 || off + size > valid) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = t_dropped;
  t_dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char** name) {
  struct Name {
    CUpti_CallbackDomain domain;
    uint32_t cbid;
    const char* name;
  };
  static const Name kNames[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
       "cudaLaunchKernel_v7000"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
       "cudaMemcpyAsync_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
       "cudaMemsetAsync_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
       "cudaStreamSynchronize_v3020"},
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
       "cudaDeviceSynchronize_v3020"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
       "cuMemcpyDtoDAsync_v2"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
  };
  for (const Name& n : kNames)
    if (n.domain == domain && n.cbid == cbid) {
      *name = n.name;
      return CUPTI_SUCCESS;
    }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "fake CUPTI error";
  return CUPTI_SUCCESS;
}

}  // extern "C"
