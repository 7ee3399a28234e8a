#include "errors.h"

namespace mlprof::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_load_error = nullptr;
PyObject* g_session_error = nullptr;
PyObject* g_analysis_error = nullptr;

PyObject* add(pybind11::module_& m, const char* name, PyObject* base, const char* doc) {
  std::string qualified = std::string("mlprof.") + name;
  PyObject* e = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!e) throw pybind11::error_already_set();
  m.add_object(name, pybind11::handle(e));
  return e;
}

}  // namespace

void add_errors(pybind11::module_& m) {
  g_error = add(m, "Error", nullptr, "Base class of every error mlprof raises.");
  g_load_error = add(m, "LoadError", g_error,
                     "A trace could not be read: missing, truncated, corrupt or of an unknown "
                     "format. The message is the CLI's one line: 'PATH: what is wrong'.");
  g_session_error = add(m, "SessionError", g_error,
                        "A recording session could not start (another one is recording, or "
                        "MLPROF_ENABLED=0).");
  g_analysis_error =
      add(m, "AnalysisError", g_error, "An analysis could not run on this trace (bad options).");
}

void raise(ErrorKind kind, const std::string& message) {
  PyObject* type = kind == ErrorKind::kLoad       ? g_load_error
                   : kind == ErrorKind::kSession  ? g_session_error
                   : kind == ErrorKind::kAnalysis ? g_analysis_error
                                                  : g_error;
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

}  // namespace mlprof::python
