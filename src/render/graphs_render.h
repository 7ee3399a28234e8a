#pragma once

#include <string>

#include "mlprof/analyze/graphs.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_graphs_text(const GraphsResult& r, size_t width = 100);
void write_graphs_json(JsonWriter& w, const GraphsResult& r);

}  // namespace mlprof
