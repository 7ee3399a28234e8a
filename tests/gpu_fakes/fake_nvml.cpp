// A stand-in for libnvidia-ml.so.1 with two GPUs whose readings follow a script, so mlprof's NVML
// sampler (src/record/nvml/) runs on a machine with no driver. Point mlprof at it with
// MLPROF_NVML_LIB=PATH/libnvidia-ml.so.1. Reading k (0, 1, 2, ...; counted per device and per
// metric) of device d returns:
//   utilization gpu = 10*d + k % 100, memory = 5 + k % 50           (%)
//   memory used     = (d + 1) GiB + k MiB                            (bytes)
//   temperature     = 40 + d                                         (C)
//   power           = 100000 + 500*k mW on GPU 0; GPU 1: NVML_ERROR_NOT_SUPPORTED
//   SM clock        = 1410 + d*100 MHz
// The scenario is checked in tests/nvml_fake_sampler_test.cpp.
#include <cstdint>
#include <cstring>

namespace {

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kUninitialized = 1;
constexpr unsigned kDevices = 2;
struct Device {
  unsigned index;
  unsigned util_reads = 0, mem_reads = 0, power_reads = 0;
};
Device g_devices[kDevices] = {{0}, {1}};
bool g_initialized = false;

struct Utilization {
  unsigned int gpu, memory;
};
struct Memory {
  unsigned long long total, free, used;
};

Device* device(void* handle) {
  for (Device& d : g_devices)
    if (handle == &d) return &d;
  return nullptr;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  g_initialized = true;
  return kSuccess;
}
int nvmlShutdown() {
  g_initialized = false;
  return kSuccess;
}
int nvmlDeviceGetCount_v2(unsigned int* n) {
  if (!g_initialized) return kUninitialized;
  *n = kDevices;
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** handle) {
  if (i >= kDevices) return kInvalidArgument;
  *handle = &g_devices[i];
  return kSuccess;
}
int nvmlDeviceGetName(void* handle, char* name, unsigned int len) {
  Device* d = device(handle);
  if (!d || len < 16) return kInvalidArgument;
  std::strcpy(name, d->index == 0 ? "Fake GPU A" : "Fake GPU B");
  return kSuccess;
}
int nvmlDeviceGetUtilizationRates(void* handle, Utilization* u) {
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  unsigned k = d->util_reads++;
  u->gpu = 10 * d->index + k % 100;
  u->memory = 5 + k % 50;
  return kSuccess;
}
int nvmlDeviceGetMemoryInfo(void* handle, Memory* m) {
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  unsigned k = d->mem_reads++;
  m->total = 80ull << 30;
  m->used = ((d->index + 1ull) << 30) + (uint64_t(k) << 20);
  m->free = m->total - m->used;
  return kSuccess;
}
int nvmlDeviceGetTemperature(void* handle, int sensor, unsigned int* t) {
  Device* d = device(handle);
  if (!d || sensor != 0) return kInvalidArgument;
  *t = 40 + d->index;
  return kSuccess;
}
int nvmlDeviceGetPowerUsage(void* handle, unsigned int* mw) {
  Device* d = device(handle);
  if (!d) return kInvalidArgument;
  if (d->index == 1) return kNotSupported;
  *mw = 100000 + 500 * d->power_reads++;
  return kSuccess;
}
int nvmlDeviceGetClockInfo(void* handle, int type, unsigned int* mhz) {
  Device* d = device(handle);
  if (!d || type != 1) return kInvalidArgument;
  *mhz = 1410 + d->index * 100;
  return kSuccess;
}
const char* nvmlErrorString(int r) { return r == kSuccess ? "Success" : "fake NVML error"; }

}  // extern "C"
