// GPU metrics through NVML, loaded with dlopen at run time (the library ships with the NVIDIA
// driver; mlprof never needs it to start). One sample reads, per device: GPU and memory
// utilization, memory used, temperature, power and SM clock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof {

class NvmlSampler {
 public:
  // Fails with a one-line reason when there is no driver or no device. `library` is what
  // dlopen is given: the driver's library by default; tests name a fake one.
  static Result<std::unique_ptr<NvmlSampler>> open(
      const std::string& library = "libnvidia-ml.so.1");
  ~NvmlSampler();

  size_t device_count() const { return devices_.size(); }
  const std::vector<std::string>& device_names() const { return names_; }
  void sample(int64_t ts_ns);
  // Counter series "GPU N utilization" (%), "GPU N memory utilization" (%), "GPU N memory used"
  // (bytes), "GPU N temperature" (C), "GPU N power" (W), "GPU N SM clock" (MHz) in `process`.
  void add_to_trace(TraceBuilder& b, uint32_t process) const;
  size_t samples() const { return samples_.size(); }

 private:
  NvmlSampler() = default;
  struct Sample {
    int64_t ts;
    uint32_t device;
    double util_gpu, util_mem, mem_used, temperature, power_w, sm_clock;
  };
  void* lib_ = nullptr;
  std::vector<void*> devices_;
  std::vector<std::string> names_;
  std::vector<Sample> samples_;
  struct Api;
  std::unique_ptr<Api> api_;
};

}  // namespace mlprof
