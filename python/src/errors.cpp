#include "errors.h"

namespace mlprof::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_load_error = nullptr;
PyObject* g_not_found_error = nullptr;
PyObject* g_session_error = nullptr;
PyObject* g_analysis_error = nullptr;

// `base`: a class, or a tuple of them.
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
  PyObject* bases = PyTuple_Pack(2, g_load_error, PyExc_FileNotFoundError);
  if (!bases) throw pybind11::error_already_set();
  g_not_found_error = add(m, "TraceNotFoundError", bases,
                          "The path given to mlprof.load() does not exist, or a directory holds "
                          "no trace.");
  Py_DECREF(bases);
  g_session_error = add(m, "SessionError", g_error,
                        "A recording session could not start (another one is recording, or "
                        "MLPROF_ENABLED=0).");
  g_analysis_error =
      add(m, "AnalysisError", g_error, "An analysis could not run on this trace (bad options).");
}

void raise(StatusCode code, const std::string& message) {
  std::string_view name = error_mapping(code).python_exception;
  // Not found is a LoadError; its own subclass is also Python's FileNotFoundError.
  PyObject* type = code == StatusCode::kNotFound ? g_not_found_error
                   : name == "LoadError"         ? g_load_error
                   : name == "SessionError"      ? g_session_error
                   : name == "AnalysisError"     ? g_analysis_error
                                                 : g_error;
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

}  // namespace mlprof::python
