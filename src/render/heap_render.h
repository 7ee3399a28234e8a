#pragma once

#include <string>

#include "mlprof/analyze/heap.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_heap_text(const HeapResult& r, size_t width = 100);
void write_heap_json(JsonWriter& w, const HeapResult& r);
// One table of stacks (innermost first, allocator frames skipped) and its JSON array: the heap
// report's, also used by the leak report of captures with stacks.
std::string render_heap_stacks_text(const std::vector<HeapStack>& stacks, size_t width = 100);
void write_heap_stacks_json(JsonWriter& w, const std::vector<HeapStack>& stacks);

}  // namespace mlprof
