#pragma once

#include <string>

#include "mlprof/analyze/compile.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_compile_text(const CompileResult& r, size_t width = 100);
void write_compile_json(JsonWriter& w, const CompileResult& r);

}  // namespace mlprof
