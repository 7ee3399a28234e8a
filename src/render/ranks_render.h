#pragma once

#include <string>

#include "mlprof/analyze/ranks.h"
#include "trace/json_writer.h"

namespace mlprof {

// Text: summary lines, warnings, stragglers with their evidence, distributions over ranks, one row
// per rank up to `rows` ranks (0: 10), the worst `rows` beyond; latest arrivals; collectives.
std::string render_ranks_text(const RanksResult& r, size_t width = 100, size_t rows = 0);
void write_ranks_json(JsonWriter& w, const RanksResult& r);

}  // namespace mlprof
