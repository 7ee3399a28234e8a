#pragma once

#include <string>

#include "mlprof/analyze/heap.h"
#include "mlprof/json_writer.h"

namespace mlprof {

std::string render_heap_text(const HeapResult& r, size_t width = 100);
void write_heap_json(JsonWriter& w, const HeapResult& r);

}  // namespace mlprof
