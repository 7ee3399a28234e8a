#include "mlprof/analyze/gpu_events.h"

namespace mlprof {

GpuEvents collect_gpu_events(const Trace&, const GpuEventsOptions&) { return {}; }
int64_t launch_start(const Trace&, const GpuEvents&, const GpuEvent&) { return 0; }

}  // namespace mlprof
