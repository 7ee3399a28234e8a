// rocprofv3's JSON output (`rocprofv3 --kernel-trace --output-format json`, the
// "rocprofiler-sdk-tool" document): kernel dispatches with their kernel symbols and agents, and
// where recorded HIP API calls and memory copies, mapped onto the Trace as Kineto records a ROCm
// run (docs/traces.md has the table).
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::import {

bool looks_like_rocprofv3(std::string_view head);
Result<Trace> import_rocprofv3(std::string json, const std::string& name);

}  // namespace mlprof::import
