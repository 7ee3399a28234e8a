#pragma once

#include <string>

#include "mlprof/analyze/compare.h"
#include "trace/json_writer.h"

namespace mlprof {

// The text shows the first `top` rows of each table (0: all); the JSON every row of the result.
inline constexpr size_t kCompareTextTop = 40;
std::string render_compare_text(const CompareResult& r, size_t width = 100,
                                size_t top = kCompareTextTop);
void write_compare_json(JsonWriter& w, const CompareResult& r);
std::string render_multi_compare_text(const MultiCompareResult& r, size_t width = 100,
                                      size_t top = kCompareTextTop);
void write_multi_compare_json(JsonWriter& w, const MultiCompareResult& r);

}  // namespace mlprof
