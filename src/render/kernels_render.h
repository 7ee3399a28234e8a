#pragma once

#include <string>

#include "mlprof/analyze/kernels.h"
#include "trace/json_writer.h"

namespace mlprof {

// `top`: rows shown (0 = all).
std::string render_kernels_text(const KernelsResult& r, size_t width = 100, size_t top = 30);
void write_kernels_json(JsonWriter& w, const KernelsResult& r);

}  // namespace mlprof
