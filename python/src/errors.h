// mlprof's Python exceptions: mlprof.Error and its subclasses, raised with the CLI's one-line
// message (errors.cpp creates them when the module loads).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "mlprof/status.h"

namespace mlprof::python {

void add_errors(pybind11::module_& m);
// Throws the Python exception of `code` (status.h's one mapping; error_already_set) with
// `message`.
[[noreturn]] void raise(StatusCode code, const std::string& message);
[[noreturn]] inline void raise(const Status& s) { raise(s.code(), s.message()); }

}  // namespace mlprof::python
