// The pieces of mlprof._core, one bind_* function per file.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "mlprof/trace.h"

namespace mlprof::python {

// A loaded or recorded trace as Python holds it: one trace, or every rank of a rank directory
// with the slowest one as the trace single-trace analyses look at (as `mlprof analyze DIR`).
struct TraceHandle {
  std::vector<Trace> traces;  // one, or one per rank
  size_t primary = 0;         // index of the trace analyses look at
  bool rank_dir = false;
  std::vector<std::string> rank_errors;  // files of the directory that could not be read
  Trace& trace() { return traces[primary]; }
};

void bind_record(pybind11::module_& m);
void bind_trace(pybind11::module_& m);
void bind_stats(pybind11::module_& m);

}  // namespace mlprof::python
