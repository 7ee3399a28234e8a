#pragma once

#include <string>

#include "mlprof/analyze/modules.h"
#include "trace/json_writer.h"

namespace mlprof {

// `depth` limits the tree rows printed (the JSON has every row).
std::string render_modules_text(const ModulesResult& r, size_t depth = 3, size_t width = 100);
void write_modules_json(JsonWriter& w, const ModulesResult& r);

}  // namespace mlprof
