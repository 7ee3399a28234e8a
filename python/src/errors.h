// mlprof's Python exceptions: mlprof.Error and its subclasses, raised with the CLI's one-line
// message (errors.cpp creates them when the module loads).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace mlprof::python {

enum class ErrorKind { kError, kLoad, kSession, kAnalysis };

void add_errors(pybind11::module_& m);
// Throws the Python exception of this kind (error_already_set) with `message`.
[[noreturn]] void raise(ErrorKind kind, const std::string& message);

}  // namespace mlprof::python
