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

// Each analysis's writers, one pair per row of the catalogue (mlprof/analysis_catalog.h), defined
// with the analysis's renderer (src/render/NAME_render.cpp; the TextOptions forms of the first
// ones are in analysis_output.cpp).
#define MLPROF_X(Id, name, Result, ...)                     \
  void write_##name##_json(JsonWriter& w, const Result& r); \
  std::string render_##name##_text(const Result& r, const TextOptions& options);
MLPROF_ANALYSES(MLPROF_X)
#undef MLPROF_X

// Every JSON document mlprof writes leads with "schema": "mlprof.NAME/MAJOR"
// (schemas/NAME.schema.json, docs/json.md): fields are added within a major, a rename or removal is
// the next major.
std::string json_schema_id(std::string_view name, int major);
// An analysis's, from its catalogue row: "mlprof.summary/1".
std::string analysis_schema_id(AnalysisId id);

// The analysis's JSON value, led by its "schema"; {"schema": ..., "unavailable": "why"} when the
// input has no data for it.
void write_analysis_json(JsonWriter& w, AnalysisSet& set, AnalysisId id);
// `gpu` or `kernels` under Holistic Trace Analysis' definitions (AnalysisSet::gpu_hta), as
// `mlprof gpu|kernels --hta-compatible --json` prints it: the report's and dashboard's HTA toggle.
// Other ids: the set's own JSON.
std::string hta_analysis_json(AnalysisSet& set, AnalysisId id);
std::string analysis_json(AnalysisSet& set, AnalysisId id);  // compact
// One JSON object {name: analysis JSON} over `ids`, computed in parallel first.
std::string analyses_json(AnalysisSet& set, const std::vector<AnalysisId>& ids);

// The analysis as the terminal shows it (a one-line note when it is unavailable).
std::string render_analysis_text(AnalysisSet& set, AnalysisId id, const TextOptions& options = {});

// From the catalogue: the analyses a report (and `serve`) shows, in tab order; the ones
// `mlprof analyze --json` holds, in its order; the ones with a section in its text, in order.
const std::vector<AnalysisId>& report_analyses();
const std::vector<AnalysisId>& analyze_analyses();
const std::vector<AnalysisId>& analyze_sections();

// Compact JSON re-indented for people (`--json` on the terminal): the same tokens in the same
// order, so it parses to exactly what the compact form does.
std::string pretty_json(std::string_view compact);
// The same handed to `write` in pieces of about 64 KB, for output too large to hold twice (the
// ranks of a thousand-rank job).
void pretty_json(std::string_view compact, const std::function<void(std::string_view)>& write);

}  // namespace mlprof
