#include "record/nvml/nvml_sampler.h"

#include <dlfcn.h>

#include <cstring>

namespace mlprof {

// Our own declarations of the few NVML entry points used (nvml.h ships with the driver, not
// the toolkit). Layouts follow nvml.h: nvmlReturn_t is an int enum, 0 = NVML_SUCCESS.
namespace {
using nvmlReturn = int;
using nvmlDevice = void*;
struct nvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory {
  unsigned long long total, free, used;
};
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
}  // namespace

struct NvmlSampler::Api {
  nvmlReturn (*init)();
  nvmlReturn (*shutdown)();
  nvmlReturn (*count)(unsigned int*);
  nvmlReturn (*handle)(unsigned int, nvmlDevice*);
  nvmlReturn (*name)(nvmlDevice, char*, unsigned int);
  nvmlReturn (*utilization)(nvmlDevice, nvmlUtilization*);
  nvmlReturn (*memory)(nvmlDevice, nvmlMemory*);
  nvmlReturn (*temperature)(nvmlDevice, int, unsigned int*);
  nvmlReturn (*power)(nvmlDevice, unsigned int*);
  nvmlReturn (*clock)(nvmlDevice, int, unsigned int*);
  const char* (*error_string)(nvmlReturn);
};

Result<std::unique_ptr<NvmlSampler>> NvmlSampler::open(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  // The machine's state, not the input: no driver is kNotFound, a driver that will not serve
  // (too old, init failing, no device) kFailedPrecondition; `run --gpu` goes on without them.
  if (!lib)
    return Status::error(StatusCode::kNotFound,
                         library + " not found: no NVIDIA driver on this machine");
  std::unique_ptr<NvmlSampler> s(new NvmlSampler());
  s->lib_ = lib;
  s->api_ = std::make_unique<Api>();
  Api& a = *s->api_;
  bool ok = true;
  auto load = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn) ok = false;
  };
  load(a.init, "nvmlInit_v2");
  load(a.shutdown, "nvmlShutdown");
  load(a.count, "nvmlDeviceGetCount_v2");
  load(a.handle, "nvmlDeviceGetHandleByIndex_v2");
  load(a.name, "nvmlDeviceGetName");
  load(a.utilization, "nvmlDeviceGetUtilizationRates");
  load(a.memory, "nvmlDeviceGetMemoryInfo");
  load(a.temperature, "nvmlDeviceGetTemperature");
  load(a.power, "nvmlDeviceGetPowerUsage");
  load(a.clock, "nvmlDeviceGetClockInfo");
  load(a.error_string, "nvmlErrorString");
  // Until nvmlInit succeeds there is nothing to shut down (and with a function missing, maybe no
  // nvmlShutdown to call): the destructor only closes the library.
  if (!ok) {
    s->api_.reset();
    return Status::error(StatusCode::kFailedPrecondition,
                         library + " lacks an expected NVML function (too old?)");
  }
  if (nvmlReturn r = a.init(); r != 0) {
    std::string why = a.error_string(r);
    s->api_.reset();
    return Status::error(StatusCode::kFailedPrecondition, "nvmlInit failed: " + why);
  }
  unsigned int n = 0;
  if (nvmlReturn r = a.count(&n); r != 0 || n == 0) {
    a.shutdown();
    s->api_.reset();
    return Status::error(StatusCode::kFailedPrecondition, "NVML reports no GPU");
  }
  for (unsigned int i = 0; i < n; ++i) {
    nvmlDevice d = nullptr;
    if (a.handle(i, &d) != 0) continue;
    char name[96] = {0};
    a.name(d, name, sizeof(name));
    s->devices_.push_back(d);
    s->names_.emplace_back(name);
  }
  return s;
}

NvmlSampler::~NvmlSampler() {
  if (api_) api_->shutdown();
  if (lib_) dlclose(lib_);
}

void NvmlSampler::sample(int64_t ts) {
  Api& a = *api_;
  for (size_t i = 0; i < devices_.size(); ++i) {
    nvmlDevice d = devices_[i];
    Sample s{ts, static_cast<uint32_t>(i), -1, -1, -1, -1, -1, -1};
    nvmlUtilization u{};
    if (a.utilization(d, &u) == 0) s.util_gpu = u.gpu, s.util_mem = u.memory;
    nvmlMemory m{};
    if (a.memory(d, &m) == 0) s.mem_used = static_cast<double>(m.used);
    unsigned int v = 0;
    if (a.temperature(d, kTemperatureGpu, &v) == 0) s.temperature = v;
    if (a.power(d, &v) == 0) s.power_w = v / 1000.0;  // milliwatts
    if (a.clock(d, kClockSm, &v) == 0) s.sm_clock = v;
    samples_.push_back(s);
  }
}

void NvmlSampler::add_to_trace(TraceBuilder& b, uint32_t process) const {
  struct Metric {
    const char* name;
    const char* unit;
    double Sample::*field;
  };
  static const Metric kMetrics[] = {
      {"utilization", "%", &Sample::util_gpu},
      {"memory utilization", "%", &Sample::util_mem},
      {"memory used", "bytes", &Sample::mem_used},
      {"temperature", "C", &Sample::temperature},
      {"power", "W", &Sample::power_w},
      {"SM clock", "MHz", &Sample::sm_clock},
  };
  for (size_t d = 0; d < devices_.size(); ++d) {
    for (const Metric& m : kMetrics) {
      uint32_t series =
          b.counter_series(process, b.intern("GPU " + std::to_string(d) + " " + m.name));
      b.trace().counter_series[series].unit = b.intern(m.unit);
      for (const Sample& s : samples_)
        if (s.device == d && s.*m.field >= 0) b.add_counter(series, s.ts, s.*m.field);
    }
  }
}

}  // namespace mlprof
