"""mlprof.load(path, capture=...) (issue 27): the graph capture pass joined from Python as the CLI's
--capture joins it. The ops, modules, kernels and graphs JSON equal `mlprof NAME TRACE --capture
DIR --json`, and the per-op GPU time of the replays equals the independent reference
(tests/py/graph_replay_reference.py, straight from the Kineto JSON)."""
import json
import os
import sys

import pytest

import mlprof
from conftest import REPO, cli_json, shared_path

sys.path.insert(0, os.path.join(REPO, "tests", "py"))
import graph_replay_reference as ref  # noqa: E402

CASE = "traces/serving/vllm_decode_full"


def close(a, b, n):
    return abs(a - b) <= max(2 * n, 1e-6 * abs(b))  # 1 ns of rounding per kernel summed


@pytest.fixture(scope="module")
def case():
    d = shared_path(CASE)
    trace = os.path.join(d, "graph_execution.json.gz")
    capdir = os.path.join(d, "capture_traces")
    return trace, capdir, mlprof.load(trace, capture=capdir)


def test_same_json_as_the_cli(case):
    trace, capdir, t = case
    for name in ("ops", "modules", "kernels", "graphs"):
        want = cli_json(name, trace, "--capture", capdir)
        assert json.loads(t.analysis_json(name)) == want, name
    # Options ask another set: it keeps the capture.
    assert json.loads(t.analysis_json("ops", top=5)) == cli_json("ops", trace, "--capture", capdir,
                                                                 "--top", "5")


def test_per_op_attribution_matches_the_reference(case):
    trace, capdir, t = case
    want = ref.attribute(ref.load(trace), ref.load_capture_dir(capdir))
    g = t.analysis("graphs").to_dict()
    assert [r["capture"] >= 0 for r in g["replays"]] == [True] * len(want["replays"])
    assert [(r["correlation"], r["kernels"], r["matched"]) for r in g["replays"]] == want["replays"]
    rows = {r["name"]: r for r in g["ops"]}
    assert set(rows) == set(want["ops"])
    for name, ns in want["ops"].items():
        assert close(rows[name]["gpu_ns"], ns, rows[name]["kernels"]), name
    # ops: the replay's GPU time leaves the Python row that called replay() for the captured ops.
    plain = max(mlprof.load(trace).analysis("ops", top=0).to_dict()["ops"],
                key=lambda r: r["device_self_ns"])
    assert "replay" in plain["name"], plain["name"]
    ops = {r["name"]: r for r in t.analysis("ops", top=0).to_dict()["ops"]}
    assert ops[plain["name"]]["device_self_ns"] < plain["device_self_ns"] / 10
    top = max(want["ops"], key=want["ops"].get)
    assert ops[top]["device_self_ns"] >= want["ops"][top]

def test_capture_paths_and_errors(case):
    trace, capdir, t = case
    files = [os.path.join(capdir, f) for f in sorted(os.listdir(capdir)) if ".trace." in f]
    by_file = mlprof.load(trace, capture=files)  # a list of files, details read beside them
    assert by_file.analysis_json("graphs") == t.analysis_json("graphs")
    with pytest.raises(mlprof.TraceNotFoundError):
        mlprof.load(trace, capture=os.path.join(capdir, "nope"))
