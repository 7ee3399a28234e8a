#pragma once

#include <string>

#include "mlprof/analyze/ranks.h"
#include "mlprof/json_writer.h"

namespace mlprof {

std::string render_ranks_text(const RanksResult& r, size_t width = 100);
void write_ranks_json(JsonWriter& w, const RanksResult& r);

}  // namespace mlprof
