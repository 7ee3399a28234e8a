#pragma once

#include <string>

#include "mlprof/analyze/roofline.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_roofline_text(const RooflineResult& r, size_t width = 100, size_t rows = 15);
void write_roofline_json(JsonWriter& w, const RooflineResult& r);

}  // namespace mlprof
