#pragma once

#include <string>

#include "mlprof/analyze/compare.h"
#include "mlprof/json_writer.h"

namespace mlprof {

std::string render_compare_text(const CompareResult& r, size_t width = 100);
void write_compare_json(JsonWriter& w, const CompareResult& r);
std::string render_multi_compare_text(const MultiCompareResult& r, size_t width = 100);
void write_multi_compare_json(JsonWriter& w, const MultiCompareResult& r);

}  // namespace mlprof
