// The stage's entry for comparisons (mlprof/analysis_compare.h).
#include "mlprof/analysis_compare.h"

namespace mlprof {

CompareResult compare_analyses(const AnalysisSet& base, const AnalysisSet& next,
                               const CompareOptions& options) {
  return compare_traces(base.trace(), next.trace(), options);
}

MultiCompareResult compare_analyses(const std::vector<const AnalysisSet*>& runs,
                                    const CompareOptions& options) {
  std::vector<const Trace*> traces;
  traces.reserve(runs.size());
  for (const AnalysisSet* r : runs) traces.push_back(&r->trace());
  return compare_many(traces, options);
}

CompareResult compare_analyses(const CompareSummary& base, const CompareSummary& next,
                               const CompareOptions& options) {
  return compare_summaries(base, next, options);
}

}  // namespace mlprof
