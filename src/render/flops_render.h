#pragma once

#include <string>

#include "mlprof/analyze/flops.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_flops_text(const FlopsResult& r, size_t width = 100);
void write_flops_json(JsonWriter& w, const FlopsResult& r);

}  // namespace mlprof
