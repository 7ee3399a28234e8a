// `--csv` on the analysis subcommands: one mechanism for all of them. The CSV is the analysis's
// main table taken from its JSON (analysis_json, the one writer per analysis), so a CSV column
// is always named and valued like the JSON field it comes from.
#pragma once

#include <string>
#include <string_view>

#include "mlprof/analysis_set.h"
#include "mlprof/status.h"

namespace mlprof {

// The JSON key of an analysis's main table ("ops", "steps", "kernels", ...); "" for an analysis
// not listed, whose first array of objects is its table.
std::string_view analysis_main_table(AnalysisId id);

// The main table as CSV; an error when the analysis is unavailable for this input ("no GPU
// streams") or has no table.
Result<std::string> analysis_csv(AnalysisSet& set, AnalysisId id);

}  // namespace mlprof
