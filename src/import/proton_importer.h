// Triton Proton profiles (`proton.finalize()`'s hatchet JSON, what proton-viewer reads): a call
// tree of scopes and kernels with per-node metrics (count, time (ns), flops8/16/32/64, bytes)
// and the devices' properties. Each kernel leaf becomes one kernel slice on its device whose
// duration is its total time and whose flops/bytes are the kernel args the roofline reads
// (kernel_flop / kernel_num_gb, as Inductor writes them). docs/traces.md has the table.
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::import {

bool looks_like_proton(std::string_view head);
Result<Trace> import_proton(std::string json, const std::string& name);

}  // namespace mlprof::import
