#pragma once

#include <string>

#include "mlprof/analyze/steps.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_steps_text(const StepsResult& r, size_t width = 100);
void write_steps_json(JsonWriter& w, const StepsResult& r);

}  // namespace mlprof
