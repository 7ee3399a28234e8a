// The pieces of mlprof._core, one bind_* function per file.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mlprof/analysis_set.h"
#include "mlprof/trace.h"

namespace mlprof::python {

// A loaded or recorded trace as Python holds it: the analysis stage over one trace, or over every
// rank of a rank directory (the slowest rank is the trace analyzed in depth, as `mlprof analyze
// DIR`). Results with default options are computed once and kept in `set`; each other options
// key (analysis name + its keyword arguments) gets one AnalysisSet over the same traces, kept in
// `option_sets`, so asking again with the same options computes nothing.
struct TraceHandle {
  std::unique_ptr<AnalysisSet> set;
  std::map<std::string, std::unique_ptr<AnalysisSet>> option_sets;  // touched with the GIL held
  std::vector<std::string> rank_errors;  // files of the directory that could not be read
  // load(capture=...): graph capture passes every set joins to the replays (GraphsOptions).
  std::vector<GraphCaptureInput> captures;
  const Trace& trace() const { return set->trace(); }
};

// The set that answers analysis `id` with these keyword options: the default set when there are
// none, else the one cached under the options key (made on first use; called with the GIL held).
AnalysisSet& set_for(TraceHandle& h, AnalysisId id, const pybind11::dict& options);

void bind_record(pybind11::module_& m);
void bind_trace(pybind11::module_& m);
void bind_stats(pybind11::module_& m);
void bind_analysis(pybind11::module_& m);
void bind_tables(pybind11::module_& m);

}  // namespace mlprof::python
