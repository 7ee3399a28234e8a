#pragma once

#include <string>

#include "mlprof/analyze/critical_path.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_critical_path_text(const CriticalPathResult& r, size_t width = 100);
void write_critical_path_json(JsonWriter& w, const CriticalPathResult& r);

}  // namespace mlprof
