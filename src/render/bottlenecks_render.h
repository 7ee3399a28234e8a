#pragma once

#include <string>

#include "mlprof/analyze/bottlenecks.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_bottlenecks_text(const BottleneckResult& r, size_t width = 100);
void write_bottlenecks_json(JsonWriter& w, const BottleneckResult& r);
// One evidence value formatted by its unit ("12.3 ms", "1.50 MiB", "45.0%").
std::string format_evidence(const Evidence& e);

}  // namespace mlprof
