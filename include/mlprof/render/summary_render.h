#pragma once

#include <string>

#include "mlprof/analyze/summary.h"
#include "mlprof/json_writer.h"

namespace mlprof {

std::string render_summary_text(const SummaryResult& r, size_t width = 100);
void write_summary_json(JsonWriter& w, const SummaryResult& r);
void write_op_stats_json(JsonWriter& w, const OpStats& op);

}  // namespace mlprof
