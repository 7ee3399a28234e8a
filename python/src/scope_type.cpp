// mlprof.profile: the context manager and decorator, as a C-level type so that
// `with mlprof.profile("x"): pass` costs about as much as a pair of time.perf_counter_ns() calls.
// pybind11 classes pay a generic dispatcher per call (hundreds of ns); here the type's own
// vectorcall builds the object, the name is interned once into a dict (Python caches a str's
// hash, so the lookup is one probe), and __enter__/__exit__ are METH_NOARGS/METH_FASTCALL
// functions that each store one event through the recorder's inline hot path.
#include "scope_type.h"

#include "mlprof/mlprof.h"
#include "record/recorder_state.h"

namespace mlprof::python {
namespace {

struct ProfileObject {
  PyObject_HEAD uint64_t data;  // NameId << 4 | category << 36, ORed with the event kind
  PyObject* name;               // the name as given (None for a bare `profile()`)
};

PyObject* g_name_ids = nullptr;      // dict str -> int (NameId): interned once per name
PyObject* g_decorate = nullptr;      // Python callable (fn, name, category) -> wrapper
PyObject* g_function_cat = nullptr;  // "function", the decorators' category
PyTypeObject* g_type = nullptr;

// NameId of a str, interned on first sight. -1 with an exception set on failure.
int64_t name_id(PyObject* name) {
  PyObject* cached = PyDict_GetItemWithError(g_name_ids, name);
  if (cached) return PyLong_AsLongLong(cached);
  if (PyErr_Occurred()) return -1;
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (!utf8) return -1;
  NameId id = intern(std::string_view(utf8, static_cast<size_t>(size)));
  PyObject* value = PyLong_FromUnsignedLong(id);
  if (!value) return -1;
  int rc = PyDict_SetItem(g_name_ids, name, value);
  Py_DECREF(value);
  return rc < 0 ? -1 : static_cast<int64_t>(id);
}

PyObject* make(PyTypeObject* type, PyObject* name, PyObject* category) {
  uint64_t data = 0;
  if (name != Py_None) {
    int64_t id = name_id(name);
    if (id < 0) return nullptr;
    data = static_cast<uint64_t>(id) << 4;
  }
  if (category && category != Py_None) {
    if (!PyUnicode_Check(category)) {
      PyErr_SetString(PyExc_TypeError, "profile(): category must be a str");
      return nullptr;
    }
    int64_t cat = name_id(category);
    if (cat < 0) return nullptr;
    data |= static_cast<uint64_t>(cat) << 36;
  }
  auto* self = PyObject_New(ProfileObject, type);
  if (!self) return nullptr;
  self->data = data;
  Py_INCREF(name);
  self->name = name;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* decorate(PyObject* fn, PyObject* name, PyObject* category) {
  if (!g_decorate) {
    PyErr_SetString(PyExc_RuntimeError, "mlprof.profile: the package did not finish loading");
    return nullptr;
  }
  PyObject* args[] = {fn, name, category ? category : g_function_cat};
  return PyObject_Vectorcall(g_decorate, args, 3, nullptr);
}

// profile(name: str, category=None) -> context manager; profile(fn) -> profiled fn;
// profile() -> a decorator named after the function it wraps.
PyObject* profile_vectorcall(PyObject* type, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* category = nullptr;
  if (kwnames) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, i);
      if (PyUnicode_CompareWithASCIIString(key, "category") != 0) {
        PyErr_Format(PyExc_TypeError, "profile() got an unexpected keyword argument '%U'", key);
        return nullptr;
      }
      category = args[nargs + i];
    }
  }
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "profile() takes a name (str) or a function");
    return nullptr;
  }
  PyObject* first = nargs == 1 ? args[0] : Py_None;
  if (PyUnicode_CheckExact(first) || first == Py_None)
    return make(reinterpret_cast<PyTypeObject*>(type), first, category);
  if (PyUnicode_Check(first)) return make(reinterpret_cast<PyTypeObject*>(type), first, category);
  if (PyCallable_Check(first)) return decorate(first, Py_None, category);
  PyErr_SetString(PyExc_TypeError, "profile() takes a name (str) or a function");
  return nullptr;
}

PyObject* profile_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  // Only reached through paths that bypass vectorcall (subclasses, type.__call__ by hand).
  PyObject* name = Py_None;
  PyObject* category = nullptr;
  static const char* kw[] = {"name", "category", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO", const_cast<char**>(kw), &name, &category))
    return nullptr;
  if (name != Py_None && !PyUnicode_Check(name)) {
    if (PyCallable_Check(name)) return decorate(name, Py_None, category);
    PyErr_SetString(PyExc_TypeError, "profile() takes a name (str) or a function");
    return nullptr;
  }
  return make(type, name, category);
}

void profile_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<ProfileObject*>(self)->name);
  Py_TYPE(self)->tp_free(self);
}

PyObject* profile_enter(PyObject* self, PyObject*) {
  detail::record(reinterpret_cast<ProfileObject*>(self)->data | detail::kBeginName);
  Py_INCREF(self);
  return self;
}

PyObject* profile_exit(PyObject* self, PyObject* const*, Py_ssize_t) {
  detail::record(reinterpret_cast<ProfileObject*>(self)->data | detail::kEndName);
  Py_RETURN_NONE;  // never swallows the exception
}

// `@profile("name")`: calling the object with a function decorates it under this name.
PyObject* profile_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 1 || (kwargs && PyDict_GET_SIZE(kwargs) != 0) ||
      !PyCallable_Check(PyTuple_GET_ITEM(args, 0))) {
    PyErr_SetString(PyExc_TypeError, "a profile object decorates one function: @profile(\"name\")");
    return nullptr;
  }
  auto* p = reinterpret_cast<ProfileObject*>(self);
  PyObject* category = nullptr;
  uint64_t cat = p->data >> 36;
  if (cat != 0) {
    std::string c = record::name_of(static_cast<NameId>(cat));
    category = PyUnicode_FromStringAndSize(c.data(), static_cast<Py_ssize_t>(c.size()));
    if (!category) return nullptr;
  }
  PyObject* r = decorate(PyTuple_GET_ITEM(args, 0), p->name, category);
  Py_XDECREF(category);
  return r;
}

PyObject* profile_get_name(PyObject* self, void*) {
  PyObject* n = reinterpret_cast<ProfileObject*>(self)->name;
  Py_INCREF(n);
  return n;
}

PyObject* profile_repr(PyObject* self) {
  return PyUnicode_FromFormat("mlprof.profile(%R)", reinterpret_cast<ProfileObject*>(self)->name);
}

PyMethodDef profile_methods[] = {
    {"__enter__", profile_enter, METH_NOARGS, "Begins the scope."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(profile_exit)),
     METH_FASTCALL, "Ends the scope (exceptions propagate)."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef profile_getset[] = {
    {"name", profile_get_name, nullptr, "the scope's name", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace

bool add_profile_type(PyObject* module) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"  // the C idiom: slots set below
  static PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
#pragma GCC diagnostic pop
  type.tp_name = "mlprof.profile";
  type.tp_basicsize = sizeof(ProfileObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT;
  type.tp_doc =
      "profile(name, category=None): a recorded scope, `with mlprof.profile(\"forward\"): ...`.\n"
      "@profile or @profile(\"name\") on a function records every call of it.";
  type.tp_new = profile_new;
  type.tp_dealloc = profile_dealloc;
  type.tp_call = profile_call;
  type.tp_repr = profile_repr;
  type.tp_methods = profile_methods;
  type.tp_getset = profile_getset;
  type.tp_vectorcall = profile_vectorcall;
  if (PyType_Ready(&type) < 0) return false;
  g_type = &type;
  g_name_ids = PyDict_New();
  g_function_cat = PyUnicode_FromString("function");
  if (!g_name_ids || !g_function_cat) return false;
  Py_INCREF(&type);
  if (PyModule_AddObject(module, "profile", reinterpret_cast<PyObject*>(&type)) < 0) return false;
  return true;
}

void set_decorator(PyObject* fn) {
  Py_XINCREF(fn);
  Py_XSETREF(g_decorate, fn);
}

}  // namespace mlprof::python
