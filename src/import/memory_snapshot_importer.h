// CUDA memory snapshots from a byte source (load_trace and load_memory_snapshot share this).
#pragma once

#include <string>
#include <string_view>

#include "import/byte_source.h"
#include "mlprof/memory_snapshot.h"

namespace mlprof::import {

// True when the first (decompressed) bytes look like a snapshot: the pickle PROTO opcode, or a
// JSON object whose first key is "segments" or "device_traces".
bool looks_like_memory_snapshot(std::string_view head);

Result<MemorySnapshot> import_memory_snapshot(ByteSource& src, const std::string& name,
                                              bool pickle);

}  // namespace mlprof::import
