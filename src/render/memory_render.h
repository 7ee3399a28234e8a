#pragma once

#include <string>

#include "mlprof/analyze/leaks.h"
#include "mlprof/analyze/memory.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_memory_text(const MemoryResult& r, size_t width = 100);
void write_memory_json(JsonWriter& w, const MemoryResult& r);
std::string render_leaks_text(const LeakResult& r, size_t width = 100);
void write_leaks_json(JsonWriter& w, const LeakResult& r);

}  // namespace mlprof
