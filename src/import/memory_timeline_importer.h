// PyTorch's `export_memory_timeline` raw format (a JSON list of [time_ns, action, bytes,
// category]) as memory events, one track per memory category.
#pragma once

#include <string>

#include "import/byte_source.h"
#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::import {

Result<Trace> import_memory_timeline(ByteSource& src, const std::string& name);

}  // namespace mlprof::import
