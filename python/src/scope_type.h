// mlprof.profile, the C-level context manager / decorator type (scope_type.cpp).
#pragma once

#include <Python.h>

namespace mlprof::python {

// Adds the type `profile` to the module; false with a Python exception set on failure.
bool add_profile_type(PyObject* module);
// The Python function that wraps a decorated function: (fn, name or None, category) -> wrapper.
void set_decorator(PyObject* fn);

}  // namespace mlprof::python
