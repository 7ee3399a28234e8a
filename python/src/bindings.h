// The pieces of mlprof._core, one bind_* function per file.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "mlprof/analysis_set.h"
#include "mlprof/trace.h"

namespace mlprof::python {

// A loaded or recorded trace as Python holds it: the analysis stage over one trace, or over every
// rank of a rank directory (the slowest rank is the trace analyzed in depth, as `mlprof analyze
// DIR`). Results with default options are computed once and kept; other options get a
// short-lived AnalysisSet over the same traces.
struct TraceHandle {
  std::unique_ptr<AnalysisSet> set;
  std::vector<std::string> rank_errors;  // files of the directory that could not be read
  const Trace& trace() const { return set->trace(); }
};

void bind_record(pybind11::module_& m);
void bind_trace(pybind11::module_& m);
void bind_stats(pybind11::module_& m);
void bind_analysis(pybind11::module_& m);

}  // namespace mlprof::python
