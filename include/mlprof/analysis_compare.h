// Comparing runs, the analysis stage's one entry for it: `mlprof compare` (two runs, several, or
// a stored baseline), the report's Compare tab, serve's compare endpoint, MCP and Python's
// compare_json all come here with one CompareOptions. Each side is an AnalysisSet's trace (for a
// rank set, the rank it analyzes in depth), so a comparison reads what the set's results describe.
#pragma once

#include <vector>

#include "mlprof/analysis_set.h"
#include "mlprof/analyze/compare.h"

namespace mlprof {

CompareResult compare_analyses(const AnalysisSet& base, const AnalysisSet& next,
                               const CompareOptions& options = {});
MultiCompareResult compare_analyses(const std::vector<const AnalysisSet*>& runs,
                                    const CompareOptions& options = {});
// A stored baseline's summary against a run's (`mlprof compare --against NAME`).
CompareResult compare_analyses(const CompareSummary& base, const CompareSummary& next,
                               const CompareOptions& options = {});

}  // namespace mlprof
