"""Graph replays matched by CUPTI's graph id / graph node id (issue 27): on the generated trace of
graph_ids_traces.py (two graphs launching the same kernel names from different ops, a graph whose
two same-named GEMMs start in the other order on two streams, a replay without ids), `mlprof graphs
--capture` matches each replay with ids to its own graph and each kernel to its node's op, says
"graph ids" / "kernel names" per replay, and charges the captured ops the GPU time the plan gives
them (expected values from the plan, not from mlprof). `mlprof ops` charges the same, in its
rows and (with the shapes recorded) in its groups by input shape.
Usage: test_graph_ids.py MLPROF DATA_DIR"""
import json
import os
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import graph_ids_traces as gen  # noqa: E402

with tempfile.TemporaryDirectory(prefix="mlprof-graph-ids-") as d:
    want = gen.write(d)
    trace, capture = os.path.join(d, "trace.json"), os.path.join(d, "capture")
    check(dict(want["ops"]) != dict(gen.expected_by_names()),
          "the plan is one where kernel-name matching charges other ops")
    p = subprocess.run([MLPROF, "graphs", trace, "--capture", capture, "--json"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"mlprof graphs: exit {p.returncode}: {p.stderr.strip()[:200]}")
    got = json.loads(p.stdout) if p.returncode == 0 else {"replays": [], "ops": []}
    reps = [(r["correlation"], r.get("matched_by"), r["capture"]) for r in got["replays"]]
    check(reps == want["replays"], f"replays (correlation, matched by, capture): {reps} vs {want['replays']}")
    check(all(r["matched"] == r["kernels"] == 3 for r in got["replays"]), "every kernel matched")
    ops = {r["name"]: r["gpu_ns"] for r in got["ops"]}
    check(ops == dict(want["ops"]), f"GPU ns per captured op: {ops} vs {dict(want['ops'])}")
    # ops charges the replayed kernels the same way (device self of each captured op).
    p = subprocess.run([MLPROF, "ops", trace, "--capture", capture, "--top", "0", "--json"],
                       capture_output=True, text=True)
    rows = {r["name"]: r["device_self_ns"] for r in json.loads(p.stdout)["ops"]} if p.returncode == 0 else {}
    for op, ns in want["ops"].items():
        check(rows.get(op) == ns, f"ops: {op} device self {rows.get(op)} ns, want {ns}")
    # The text says which method matched each replay.
    p = subprocess.run([MLPROF, "graphs", trace, "--capture", capture], capture_output=True, text=True)
    check("matched by" in p.stdout and "graph ids" in p.stdout and "kernel names" in p.stdout,
          "graphs text names the method per replay")
# ops' groups by input shape charge the same GPU time to each captured op's (name, Input Dims),
# and take it out of the group of the op the graph launch was made in (which keeps none: every
# kernel it launched is a matched replay), as the rows do.
with tempfile.TemporaryDirectory(prefix="mlprof-graph-ids-") as d:
    want = gen.write(d, shapes=True)
    trace, capture = os.path.join(d, "trace.json"), os.path.join(d, "capture")
    for args, replayed in (([], False), (["--capture", capture], True)):
        p = subprocess.run([MLPROF, "ops", trace, *args, "--top", "0", "--json"],
                           capture_output=True, text=True)
        groups = {(g["name"], json.dumps(json.loads(g["input_shape"]))): g
                  for g in (json.loads(p.stdout)["by_input_shape"] if p.returncode == 0 else [])}
        launch = groups.get((gen.LAUNCH_OP, json.dumps(gen.LAUNCH_DIMS)), {})
        all_gpu = sum(dur for _, _, ks in gen.REPLAYS for _, dur in ks.values())
        check(launch.get("count") == len(gen.REPLAYS),
              f"groups {args}: the launch op's group counts {launch.get('count')} calls")
        check((launch.get("device_self_ns"), launch.get("device_total_ns")) ==
              ((0, 0) if replayed else (all_gpu, all_gpu)),
              f"groups {args}: the launch op's group keeps {launch.get('device_self_ns')} ns")
        for op, ns in want["ops"].items():
            g = groups.get((op, json.dumps(gen.DIMS[op])), {})
            check((g.get("device_self_ns"), g.get("device_total_ns"), g.get("count")) ==
                  ((ns, ns, 0) if replayed else (None, None, None)),
                  f"groups {args}: {op} {gen.DIMS[op]}: {g} , want {ns} ns, 0 calls")
finish()
