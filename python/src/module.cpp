// mlprof._core: the C++ side of `import mlprof` (the pure-Python package is python/mlprof).
#include "bindings.h"
#include "errors.h"
#include "scope_type.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "mlprof's engine: recorder, trace loading and analyses (use the mlprof package)";
  mlprof::python::add_errors(m);
  if (!mlprof::python::add_profile_type(m.ptr())) throw py::error_already_set();
  m.def(
      "_set_decorator", [](py::object fn) { mlprof::python::set_decorator(fn.ptr()); },
      "Registers the Python function that builds decorated wrappers.");
  mlprof::python::bind_record(m);
  mlprof::python::bind_trace(m);
  mlprof::python::bind_stats(m);
  mlprof::python::bind_analysis(m);
  mlprof::python::bind_tables(m);
}
