// What each analysis looks like as JSON and as text: one writer per analysis of the analysis
// stage, used by every consumer (`mlprof NAME`, `analyze`, `report`, `serve`, Python), so the JSON
// of an analysis is the same wherever it appears. Renderers only render: results come from the
// AnalysisSet.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mlprof/analysis_set.h"
#include "trace/json_writer.h"

namespace mlprof {

struct TextOptions {
  size_t width = 100;  // terminal columns
  size_t rows = 0;     // rows per table (0 = each table's default)
  size_t depth = 3;    // tree levels shown (modules)
};

// The analysis's JSON value; {"unavailable": "why"} when the input has no data for it.
void write_analysis_json(JsonWriter& w, AnalysisSet& set, AnalysisId id);
std::string analysis_json(AnalysisSet& set, AnalysisId id);  // compact
// One JSON object {name: analysis JSON} over `ids`, computed in parallel first.
std::string analyses_json(AnalysisSet& set, const std::vector<AnalysisId>& ids);

// The analysis as the terminal shows it (a one-line note when it is unavailable).
std::string render_analysis_text(AnalysisSet& set, AnalysisId id, const TextOptions& options = {});

// The analyses a report (and `serve`) shows, in tab order, and the ones `mlprof analyze` prints.
const std::vector<AnalysisId>& report_analyses();
const std::vector<AnalysisId>& analyze_analyses();

// Compact JSON re-indented for people (`--json` on the terminal): the same tokens in the same
// order, so it parses to exactly what the compact form does.
std::string pretty_json(std::string_view compact);
// The same handed to `write` in pieces of about 64 KB, for output too large to hold twice (the
// ranks of a thousand-rank job).
void pretty_json(std::string_view compact, const std::function<void(std::string_view)>& write);

}  // namespace mlprof
