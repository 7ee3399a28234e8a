#pragma once

#include <string>
#include <vector>

#include "mlprof/analyze/summary.h"
#include "trace/json_writer.h"

namespace mlprof {

std::string render_summary_text(const SummaryResult& r, size_t width = 100);
void write_summary_json(JsonWriter& w, const SummaryResult& r);
void write_op_stats_json(JsonWriter& w, const OpStats& op);
// "import": {"events_read", "problems": {kind: {"count", "first_byte", "first"}}} (the report
// can show the same block).
void write_import_stats_json(JsonWriter& w, const ImportStats& s);
// The `mlprof ops` table: the first `max_rows` of `ops` (0 = all), noting rows left out of the
// `total_rows` the analysis found.
std::string render_ops_text(const std::vector<OpStats>& ops, uint64_t total_rows, size_t max_rows);

}  // namespace mlprof
