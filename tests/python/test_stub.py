"""The type stub shipped with the package (mlprof/__init__.pyi, py.typed): it declares every
public name the package exports and every public method/property of the exported classes, and
nothing the package does not have, so it cannot drift from the code (read by introspection)."""
import ast
import inspect
import os

import mlprof


def stub_path():
    return os.path.join(os.path.dirname(mlprof.__file__), "__init__.pyi")


def stub_names():
    """{top-level name: set of member names (classes) or None}."""
    tree = ast.parse(open(stub_path()).read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for n in node.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(n.name)
                elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    members.add(n.target.id)
            out[node.name] = members
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = None
    return out


def public_members(cls):
    names = set()
    for klass in cls.__mro__:
        if klass.__module__ in ("builtins",) or not klass.__module__.startswith("mlprof"):
            continue
        names |= {n for n in vars(klass) if not n.startswith("_") or n in ("__enter__", "__exit__")}
    return names


def test_stub_and_marker_ship_with_the_package():
    here = os.path.dirname(mlprof.__file__)
    assert os.path.exists(stub_path())
    assert os.path.exists(os.path.join(here, "py.typed"))


def test_stub_declares_every_exported_name():
    stub = stub_names()
    exported = set(mlprof.__all__) | {"__version__"}
    missing = sorted(exported - set(stub))
    assert not missing, f"__init__.pyi lacks {missing}"
    # And declares nothing public the package lacks.
    extra = sorted(n for n in stub if not n.startswith("_") and not hasattr(mlprof, n))
    assert not extra, f"__init__.pyi declares {extra}, which mlprof does not have"


def test_stub_declares_every_public_method():
    stub = stub_names()
    for name in mlprof.__all__:
        obj = getattr(mlprof, name)
        if not inspect.isclass(obj) or issubclass(obj, BaseException):
            continue
        have = public_members(obj)
        declared = stub[name] or set()
        missing = sorted(have - declared)
        assert not missing, f"__init__.pyi: class {name} lacks {missing}"
        extra = sorted(n for n in declared - have
                       if not n.startswith("_") and not hasattr(obj, n) and n not in _INSTANCE_ATTRS.get(name, ()))
        assert not extra, f"__init__.pyi: class {name} declares {extra}, which it does not have"


# Attributes set in __init__ (not visible on the class).
_INSTANCE_ATTRS = {
    "Session": {"trace"},
    "BenchmarkResult": {"name", "times_ns", "mean_ns", "std_ns", "min_ns", "max_ns", "median_ns",
                        "ci95_ns", "ops", "trace"},
}
