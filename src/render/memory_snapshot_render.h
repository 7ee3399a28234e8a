#pragma once

#include <string>

#include "mlprof/analyze/memory_snapshot.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_memory_snapshot_text(const SnapshotResult& r, size_t width = 100);
void write_memory_snapshot_json(JsonWriter& w, const SnapshotResult& r);

}  // namespace mlprof
