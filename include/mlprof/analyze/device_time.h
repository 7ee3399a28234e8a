// Device time per operator: the GPU time of the kernels, memcpys and memsets each CPU slice
// launched, through launch correlation and External id (the TensorBoard plugin's Operator view
// "device self / total duration", TraceLens's ops summary kernel time).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "mlprof/analyze/gpu_events.h"
#include "mlprof/trace.h"

namespace mlprof {

// The op a GPU event is charged to: the CPU slice whose External id its launch call carries
// (the TensorBoard plugin's rule; Kineto gives each op and annotation its own id, and the launch
// may run on another thread), else the launch call's innermost enclosing slice that is not a
// runtime/driver call; -1 when the event has no matched launch.
class OpAttribution {
 public:
  explicit OpAttribution(const Trace& trace);
  int32_t op_of(const GpuEvent& e) const;

 private:
  const Trace& trace_;
  StringId key_a_ = StringPool::kNotFound, key_b_ = StringPool::kNotFound;
  std::unordered_map<int64_t, int32_t> by_ext_;
};

struct DeviceTime {
  // Per slice (index into Trace::slices): device self = GPU time of the events it launched
  // itself; device total = self + its descendants' (the plugin's OperatorNode.fill_stats).
  std::vector<int64_t> self_ns, total_ns;
  bool has_gpu = false;
};
DeviceTime device_time_by_slice(const Trace& trace, const GpuEvents& events);
DeviceTime device_time_by_slice(const Trace& trace);

}  // namespace mlprof
