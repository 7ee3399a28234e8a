// Perfetto protobuf traces (`.pftrace`): TrackEvent data as mlprof export writes it and as
// PyTorch's CUPTI-backend exporter writes it (track descriptors for processes, threads and
// other tracks, nested begin/end slices, instants, counters, flows, debug annotations, interned
// names per sequence). Other packet kinds (ftrace, process trees, ...) are counted as skipped.
#pragma once

#include <string>
#include <string_view>

#include "mlprof/status.h"
#include "mlprof/trace.h"

namespace mlprof::import {

// A first TracePacket (Trace field 1) that parses within `head` and uses TracePacket fields.
bool looks_like_perfetto(std::string_view head);
Result<Trace> import_perfetto(std::string_view bytes, const std::string& name);

}  // namespace mlprof::import
