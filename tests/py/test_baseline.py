"""`mlprof baseline save/list/show` and `compare --against` (docs/baselines.md), on real traces:

- a baseline's rows against an independent count of the trace's own events (Python's json: GPU
  kernels/memcpys/memsets per name, their calls and total time; ProfilerStep# annotations), and
  its device and world size against deviceProperties / distributedInfo;
- the same trace against its own baseline: comparable (score 1), no regression, exit 0 under
  --fail-on-regression 5, and the same per-row deltas as `compare TRACE TRACE`;
- a run made 30% slower (every event's start and duration scaled, written here) against the
  original's baseline: exit 3 under --fail-on-regression 5;
- another model (or another device) against it: refused, exit 4, one line with the reasons;
  --force compares anyway;
- hostile baseline files (not JSON, an array, a foreign or newer schema, wrong types, negative
  counts, cut in half, deep nesting): one line naming the file, exit 2; bad names exit 2;
- a failed save (read-only store) leaves the previous baseline byte for byte.

Usage: test_baseline.py MLPROF DATA_DIR (shared traces through MLPROF_SHARED_DIR; the parts that
need them are skipped with a message when absent)."""
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
CPU = os.path.join(DATA, "a_mlp_b32_w64.kineto.json.gz")
OTHER = os.path.join(DATA, "mlp_bs64.json.gz")


def run(*args):
    return subprocess.run([MLPROF, *args], capture_output=True, text=True)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def slower(src, dst, factor):
    """The same run with every event's start and duration scaled: each op factor x slower."""
    d = load(src)
    events = d["traceEvents"] if isinstance(d, dict) else d
    t0 = min(e["ts"] for e in events if "ts" in e)
    for e in events:
        if "ts" in e:
            e["ts"] = t0 + (e["ts"] - t0) * factor
        if "dur" in e:
            e["dur"] = e["dur"] * factor
    with gzip.open(dst, "wt") as f:
        json.dump(d, f)


with tempfile.TemporaryDirectory() as tmp:
    store = os.path.join(tmp, "store")
    S = ["--store", store]

    # ---- save, list, show on the small CPU trace ---------------------------------------------
    p = run("baseline", "save", "cpu", CPU, *S)
    check(p.returncode == 0 and "saved baseline cpu" in p.stdout, f"save: {p.stdout}{p.stderr}")
    path = os.path.join(store, "cpu.json")
    b = json.load(open(path))
    check(b["schema"] == "mlprof.baseline/1", "the file is mlprof.baseline/1")
    check(not [f for f in os.listdir(store) if f != "cpu.json"], "no temporary file left")
    steps = sum(1 for e in load(CPU)["traceEvents"]
                if e.get("name", "").startswith("ProfilerStep#") and e.get("ph") == "X"
                and e.get("cat") == "user_annotation")
    check(b["totals"]["steps"] == steps and len(b["step_durations_ns"]) == steps,
          f"steps {b['totals']['steps']} == the trace's ProfilerStep# events {steps}")
    check(b["device"] == "cpu" and b["world_size"] == 1 and b["step_model"] == "steps",
          f"device/world/step model {b['device']} {b['world_size']} {b['step_model']}")
    check(all(1 <= len(r["durations_ns"]) <= min(256, r["count"]) for r in b["ops"]),
          "durations kept: 1 to min(256, count) per row")
    p = run("baseline", "list", *S)
    check(p.returncode == 0 and p.stdout.startswith("cpu "), f"list: {p.stdout}")
    p = run("baseline", "show", "cpu", *S)
    check(p.returncode == 0 and "top ops by total time" in p.stdout, f"show: {p.stdout[:200]}")
    p = run("baseline", "show", "cpu", "--json", *S)
    check(json.loads(p.stdout) == b, "show --json is the stored file")

    # ---- the same trace against its own baseline -----------------------------------------------
    p = run("compare", "--against", "cpu", CPU, "--fail-on-regression", "5", "--json", *S)
    check(p.returncode == 0, f"same trace: exit {p.returncode} {p.stderr}")
    doc = json.loads(p.stdout)
    c = doc["comparability"]
    check(c["comparable"] and c["score"] == 1 and not c["refusals"] and not c["warnings"],
          f"same trace comparable, score 1: {c}")
    cmp = doc["compare"]
    direct = json.loads(run("compare", "--json", CPU, CPU).stdout)
    check(cmp["regressions"] == 0 and cmp["step_delta_pct"] == 0,
          f"no regression ({cmp['regressions']}), step delta {cmp['step_delta_pct']}")
    key = lambda r: (r["name"], r["category"])  # noqa: E731
    rows = lambda d: {key(r): (r["base_count"], r["new_count"], r["base_total_ns"],  # noqa: E731
                               r["new_total_ns"]) for r in d["ops"] + d.get("python", [])}
    check(rows(cmp) == rows(direct), "per-row counts and totals == compare TRACE TRACE")
    p = run("compare", "--against", "cpu", CPU, *S)
    check(p.returncode == 0 and p.stdout.startswith("Against baseline cpu (") and
          "comparable, op-set overlap 100%" in p.stdout, f"text: {p.stdout[:200]}")

    # ---- 30% slower: a regression ------------------------------------------------------------------
    slow = os.path.join(tmp, "slow.json.gz")
    slower(CPU, slow, 1.3)
    p = run("compare", "--against", "cpu", slow, "--fail-on-regression", "5", *S)
    check(p.returncode == 3 and "regression:" in p.stderr,
          f"30% slower: exit {p.returncode} (want 3): {p.stderr.strip()}")
    p = run("compare", "--against", "cpu", slow, "--fail-on-regression", "50", *S)
    check(p.returncode == 0, f"30% slower under a 50% limit: exit {p.returncode}")

    # ---- another model: not comparable -------------------------------------------------------------
    p = run("compare", "--against", "cpu", OTHER, *S)
    err = p.stderr.strip().splitlines()
    check(p.returncode == 4 and len(err) == 1 and "not comparable with baseline cpu" in err[0],
          f"another model: exit {p.returncode} (want 4): {p.stderr.strip()}")
    p = run("compare", "--against", "cpu", OTHER, "--force", *S)
    check(p.returncode == 0 and "NOT comparable" in p.stdout, f"--force: exit {p.returncode}")

    # ---- hostile files and names ---------------------------------------------------------------------
    good = open(path).read()
    hostile = {
        "notjson": "{\"schema\": ",
        "array": "[1, 2, 3]",
        "foreign": json.dumps({"schema": "mlprof.steps/1"}),
        "newer": good.replace("mlprof.baseline/1", "mlprof.baseline/2"),
        "badmajor": good.replace("mlprof.baseline/1", "mlprof.baseline/1x"),
        "half": good[:len(good) // 2],
        "deep": "[" * 100000 + "]" * 100000,
        "negcount": json.dumps(dict(json.loads(good), ops=[
            {"name": "x", "category": "cpu_op", "count": -1, "total_ns": 5, "durations_ns": [5]}])),
        "types": json.dumps(dict(json.loads(good), world_size="eight")),
        "nandur": good.replace('"durations_ns":[', '"durations_ns":["NaN",', 1),
        "toomany": json.dumps(dict(json.loads(good), ops=[
            {"name": "x", "category": "cpu_op", "count": 1, "total_ns": 5,
             "durations_ns": [5, 6]}])),
        "binary": "\x00\xff\xfe garbage",
    }
    for name, text in hostile.items():
        with open(os.path.join(store, name + ".json"), "w", encoding="latin-1") as f:
            f.write(text)
        for args in (["compare", "--against", name, CPU], ["baseline", "show", name]):
            p = run(*args, *S)
            lines = p.stderr.strip().splitlines()
            check(p.returncode == 2 and len(lines) == 1 and f"{name}.json" in lines[0],
                  f"hostile {name} ({args[0]}): exit {p.returncode}, {p.stderr.strip()[:200]}")
    p = run("baseline", "list", *S)
    check(p.returncode == 0 and p.stdout.startswith("cpu "), "list skips the damaged files")
    for bad in ("../escape", "a/b", ".hidden", "", "x" * 101):
        p = run("baseline", "save", bad, CPU, *S)
        check(p.returncode == 2 and "baseline name" in p.stderr, f"name {bad!r}: exit {p.returncode}")
    p = run("compare", "--against", "nosuch", CPU, *S)
    check(p.returncode == 2 and "no baseline nosuch" in p.stderr, f"missing: {p.stderr.strip()}")

    # ---- a failed save leaves the old baseline ----------------------------------------------------
    if os.geteuid() != 0:
        os.chmod(store, 0o500)
        p = run("baseline", "save", "cpu", OTHER, *S)
        os.chmod(store, 0o700)
        check(p.returncode != 0 and open(path).read() == good,
              "a save that cannot write leaves the previous baseline")
    else:
        ro = os.path.join(store, "ro.json")
        os.mkdir(ro)  # a directory where the file would go: the save is refused
        p = run("baseline", "save", "ro", CPU, *S)
        check(p.returncode != 0 and os.path.isdir(ro), f"save over a directory refused: {p.returncode}")

    # ---- real GPU traces ---------------------------------------------------------------------------
    control = shared_data.shared_path("traces/kineto-gpu/trace_diff/control/control.json.gz")
    test = shared_data.shared_path("traces/kineto-gpu/trace_diff/test/test.json.gz")
    v100 = shared_data.shared_path(
        "traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    ranks = shared_data.shared_path("traces/kineto-gpu/trace_filter")
    if control and test:
        p = run("baseline", "save", "dlrm", control, *S)
        check(p.returncode == 0, f"save control: {p.stderr}")
        b = json.load(open(os.path.join(store, "dlrm.json")))
        d = load(control)
        want = collections.defaultdict(lambda: [0, 0.0])
        for e in d["traceEvents"]:
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X":
                w = want[(e["name"], e["cat"])]
                w[0] += 1
                w[1] += e["dur"] * 1000
        got = {(r["name"], r["category"]): r for r in b["kernels"]}
        check(len(got) == len(want), f"kernel rows {len(got)} == the trace's names {len(want)}")
        bad = [k for k, (n, ns) in want.items()
               if k not in got or got[k]["count"] != n or abs(got[k]["total_ns"] - ns) > 1 + 1e-6 * ns]
        check(not bad, f"each kernel's calls and total time == Python's count ({bad[:3]})")
        check(b["device"] == d["deviceProperties"][0]["name"], f"device {b['device']}")
        check(b["world_size"] == d["distributedInfo"]["world_size"], f"world size {b['world_size']}")
        size = os.path.getsize(os.path.join(store, "dlrm.json"))
        check(size < os.path.getsize(control), f"the baseline ({size} B) is smaller than the trace")
        p = run("compare", "--against", "dlrm", control, "--fail-on-regression", "5", "--json", *S)
        check(p.returncode == 0 and json.loads(p.stdout)["compare"]["regressions"] == 0,
              f"control against itself: exit {p.returncode}")
        # The pair was recorded on different machines (deviceProperties: an A100 and a V100,
        # world sizes 8 and 2): refused; --force compares, with compare's own rows.
        dt = load(test)
        p = run("compare", "--against", "dlrm", test, *S)
        check(p.returncode == 4 and f"run {dt['deviceProperties'][0]['name']}" in p.stderr,
              f"test against control (another GPU): exit {p.returncode} {p.stderr.strip()}")
        p = run("compare", "--against", "dlrm", test, "--force", "--json", *S)
        direct = json.loads(run("compare", "--json", control, test).stdout)
        doc = json.loads(p.stdout)
        check(p.returncode == 0 and not doc["comparability"]["comparable"],
              f"--force: exit {p.returncode}, comparable false")
        check(doc["compare"]["step_delta_pct"] == direct["step_delta_pct"],
              f"step change {doc['compare']['step_delta_pct']} == compare's "
              f"{direct['step_delta_pct']}")
        check(rows(doc["compare"]) == rows(direct), "rows == compare control test")
    base = shared_data.shared_path("traces/kineto-gpu/trace_compare/base/base.json.gz")
    new = shared_data.shared_path("traces/kineto-gpu/trace_compare/test/test.json.gz")
    if base and new:
        run("baseline", "save", "tc", base, *S)
        p = run("compare", "--against", "tc", new, "--json", *S)
        direct = json.loads(run("compare", "--json", base, new).stdout)
        doc = json.loads(p.stdout) if p.returncode == 0 else None
        check(doc is not None and doc["comparability"]["comparable"],
              f"trace_compare pair comparable: exit {p.returncode} {p.stderr.strip()}")
        if doc:
            c = doc["compare"]
            check(c["step_delta_pct"] == direct["step_delta_pct"] and
                  c["regressions"] == direct["regressions"] and rows(c) == rows(direct) and
                  {key(r): r["verdict"] for r in c["kernels"]} ==
                  {key(r): r["verdict"] for r in direct["kernels"]},
                  "trace_compare pair: the baseline's compare == compare BASE NEW (rows, verdicts)")
        if v100:
            p = run("compare", "--against", "dlrm", v100, *S)
            check(p.returncode == 4 and "device: baseline NVIDIA A100" in p.stderr,
                  f"a V100 run against an A100 baseline: exit {p.returncode}: {p.stderr.strip()}")
    if ranks:
        p = run("baseline", "save", "ranks", ranks, *S)
        b = json.load(open(os.path.join(store, "ranks.json")))
        check(p.returncode == 0 and b["world_size"] == 128,
              f"rank directory: world size {b['world_size']} (the job's 128)")
        p = run("compare", "--against", "ranks", ranks, "--fail-on-regression", "5", *S)
        check(p.returncode == 0, f"rank directory against itself: exit {p.returncode} {p.stderr}")

finish()
