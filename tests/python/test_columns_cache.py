"""Hot tables as columns (ops, kernels, steps built in C++ from the results, no JSON) equal to the
CLI's --json rows, and results cached per options key (one analysis set per key)."""
import json
import math
import os
import subprocess
import sys

import pytest

import mlprof
from conftest import cli_json, data_path, shared_path

LOCAL = ["a_mlp_b32_w64.kineto.json.gz", "c_leaky.kineto.json.gz", "mlp_bs64.json.gz",
         "tiny_linear.json"]
GPU = "traces/kineto-gpu/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"


def flat_rows(name, rows):
    """The JSON rows in the columns' shape: steps' phase_ns/gpu_class_ns objects flattened,
    kernels' nested launch object left out."""
    out = []
    for r in rows:
        r = dict(r)
        if name == "steps":
            for k, v in r.pop("phase_ns", {}).items():
                r[f"phase_{k}_ns"] = v
            for k, v in r.pop("gpu_class_ns", {}).items():
                r[f"gpu_{k}_ns"] = v
            r.pop("serving", None)
        if name == "kernels":
            r.pop("launch", None)
        out.append(r)
    return out


def assert_columns_equal_rows(cols, rows, where):
    n = len(rows)
    assert all(len(v) == n for v in cols.values()), where
    fields = set()
    for r in rows:
        fields |= set(r)
    if n:  # an empty table still has its columns
        assert set(cols) == fields, f"{where}: columns {sorted(set(cols) ^ fields)}"
    for k, col in cols.items():
        for i, r in enumerate(rows):
            got = col[i]
            got = got.item() if hasattr(got, "item") else got
            if k not in r:
                assert got is None or (isinstance(got, float) and math.isnan(got)), (where, k, i)
            elif r[k] is None:  # a non-finite double in the JSON
                assert isinstance(got, float) and math.isnan(got), (where, k, i)
            else:
                assert got == r[k] and type(got) is type(r[k]) or \
                    (isinstance(r[k], int) and isinstance(got, float) and got == r[k]), \
                    (where, k, i, got, r[k])


def check_trace(path, names):
    t = mlprof.load(path)
    for name in names:
        if t.unavailable(name):
            continue
        rows = flat_rows(name, cli_json(name, path)[name])
        assert_columns_equal_rows(t.columns(name), rows, f"{path}: {name}")
    rows = cli_json("ops", path, "--top", "5", "--sort", "self")["ops"]
    assert_columns_equal_rows(t.columns("ops", top=5, sort="self"), rows, f"{path}: ops top 5")


@pytest.mark.parametrize("name", LOCAL)
def test_columns_equal_the_cli_rows(name):
    check_trace(data_path(name), ["ops", "steps", "kernels"])


def test_columns_equal_the_cli_rows_on_a_gpu_trace():
    check_trace(shared_path(GPU), ["ops", "steps", "kernels"])


def test_ops_frame_is_built_from_the_columns():
    pd = pytest.importorskip("pandas")
    path = data_path("a_mlp_b32_w64.kineto.json.gz")
    t = mlprof.load(path)
    df = t.ops()
    assert isinstance(df, pd.DataFrame)
    want = pd.DataFrame.from_records(cli_json("ops", path)["ops"])
    pd.testing.assert_frame_equal(df[list(want.columns)], want, check_dtype=False)
    steps = t.table("steps")
    assert steps["dur_ns"].tolist() == [s["dur_ns"] for s in cli_json("steps", path)["steps"]]


def test_results_are_cached_per_options_key(monkeypatch):
    t = mlprof.load(data_path("mlp_bs64.json.gz"))
    calls = []
    real = mlprof._core.table_columns
    monkeypatch.setattr(mlprof._core, "table_columns",
                        lambda *a: calls.append(a[1:]) or real(*a))
    a = t.columns("ops", sort="self")
    b = t.columns("ops", sort="self")
    assert a is b and len(calls) == 1  # the second call is a dict lookup
    assert t.cache_info()["option_sets"] == 1
    c = t.columns("ops", sort="count")  # other options: computed again, on its own set
    assert len(calls) == 2 and t.cache_info()["option_sets"] == 2
    assert sorted(c["count"], reverse=True) == list(c["count"])
    t.columns("ops")  # default options: the default set, no new one
    assert t.cache_info()["option_sets"] == 2
    # Parsed results too: the same Result data object for the same options.
    assert t.analysis("summary", top=3).to_dict() is t.analysis("summary", top=3).to_dict()
    assert t.analysis("summary", top=3).to_dict() is not t.analysis("summary", top=4).to_dict()
    # A bad option is an error and caches nothing.
    with pytest.raises(mlprof.AnalysisError):
        t.columns("ops", sort="fastest")
    assert t.cache_info()["option_sets"] == 4
    t.clear_cache()
    assert t.cache_info() == {"results": 0, "option_sets": 0}
    with pytest.raises(mlprof.AnalysisError):
        t.columns("gpu")


def test_without_numpy_and_pandas_the_old_forms_come_back(tmp_path):
    """numpy/pandas made unimportable: columns are lists, ops() is the JSON's list of dicts."""
    path = data_path("mlp_bs64.json.gz")
    code = f"""
import sys, json
sys.modules["numpy"] = None
sys.modules["pandas"] = None
import mlprof
t = mlprof.load({path!r})
cols = t.columns("ops")
assert all(type(v) is list for v in cols.values()), {{k: type(v) for k, v in cols.items()}}
print(json.dumps({{"ops": t.ops(), "cols": cols, "steps": t.columns("steps")}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    want = cli_json("ops", path)["ops"]
    assert doc["ops"] == want
    assert_columns_equal_rows(doc["cols"], want, "no numpy: ops")
    assert_columns_equal_rows(doc["steps"], flat_rows("steps", cli_json("steps", path)["steps"]),
                              "no numpy: steps")
