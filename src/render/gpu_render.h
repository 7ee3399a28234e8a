#pragma once

#include <string>

#include "mlprof/analyze/gpu.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_gpu_text(const GpuResult& r, size_t width = 100);
void write_gpu_json(JsonWriter& w, const GpuResult& r);
// The TensorBoard plugin's GPU summary alone (the report's Overview, `analyze` text).
std::string render_gpu_summary_text(const GpuSummary& g, size_t width = 100);
void write_gpu_summary_json(JsonWriter& w, const GpuSummary& g);

}  // namespace mlprof
