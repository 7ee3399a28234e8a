"""`mlprof serve DIR --capture CAPTURE` (issue 27): every trace's CUDA/HIP graph replays charged to
the capture pass on every tab. /api/profiler/graphs equals `mlprof graphs TRACE --capture CAPTURE
--json`, its replays matched as the independent reference (graph_replay_reference.py) matches
them, and the ops tab charges the replayed kernels' GPU time to the captured ops instead of the
Python row that called replay(). Without --capture every replay is unmatched.
Usage: test_serve_graph_capture.py MLPROF DATA_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require  # noqa: E402
from checks import check, finish  # noqa: E402
from serve_process import Serve  # noqa: E402
import graph_replay_reference as ref  # noqa: E402

trace = require("traces/serving/vllm_decode_full/graph_execution.json.gz")
capdir = require("traces/serving/vllm_decode_full/capture_traces")
want = ref.attribute(ref.load(trace), ref.load_capture_dir(capdir))
cli = json.loads(subprocess.run([MLPROF, "graphs", trace, "--capture", capdir, "--json"],
                                capture_output=True, check=True).stdout)


def api(srv, name):
    status, _, body = srv.get(f"/api/profiler/{name}?trace=t.json.gz")
    check(status == 200, f"/api/profiler/{name}: HTTP {status}")
    return json.loads(body) if status == 200 else {}


def device_self(ops_doc, name):
    return sum(r.get("device_self_ns", 0) for r in ops_doc.get("ops", []) if r["name"] == name)


tmp = tempfile.mkdtemp(prefix="mlprof-serve-capture-")
try:
    shutil.copy(trace, os.path.join(tmp, "t.json.gz"))
    with Serve(MLPROF, tmp, extra=("--capture", capdir)) as srv:
        graphs = api(srv, "graphs")
        check(graphs == cli, "/api/profiler/graphs equals mlprof graphs --capture --json")
        got = [(r["correlation"], r["kernels"], r["matched"]) for r in graphs.get("replays", [])]
        check(got == want["replays"], f"replays matched as the reference: {got} vs {want['replays']}")
        ops = api(srv, "ops")
    with Serve(MLPROF, tmp) as srv:
        plain_graphs = api(srv, "graphs")
        plain_ops = api(srv, "ops")
    check(all(r["capture"] == -1 for r in plain_graphs.get("replays", [])),
          "without --capture every replay is unmatched")
    # The Python row that called replay() holds the graph's GPU time without the capture pass.
    replay_row = max(plain_ops.get("ops", []), key=lambda r: r.get("device_self_ns", 0))
    name = replay_row["name"]
    check("replay" in name, f"without --capture the top device-self row is replay(): {name[:60]}")
    before, after = device_self(plain_ops, name), device_self(ops, name)
    check(after < before / 10, f"{name[:50]}: device self {before} ns -> {after} ns with --capture")
    top = max(want["ops"], key=want["ops"].get)
    got_top = device_self(ops, top)
    check(got_top >= want["ops"][top] and device_self(plain_ops, top) < got_top,
          f"the top captured op {top!r} gains the replay's GPU time: {got_top} ns, "
          f"replayed {want['ops'][top]} ns")
    # A capture that cannot be read: serve does not start, with a one-line error (exit 2).
    p = subprocess.run([MLPROF, "serve", tmp, "--port", "0", "--capture", os.path.join(tmp, "nope")],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "nope" in p.stderr, f"unreadable capture: exit {p.returncode}: {p.stderr.strip()}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()
