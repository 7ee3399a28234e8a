"""`mlprof.load(big).ops()` from Python against `mlprof ops --json` on the same file (issue 12's
bar: within 1.5x), with Python's own json.load of the file beside them, all in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_load_bench.py [FILE] [--runs N]
        [--what ops|summary]

--what summary: `mlprof.load(f).summary()` against `mlprof summary f` (issue 33's bar: within
1.2x). Each run also times the path Python took before the columns/cache (ops: the JSON text
parsed with json.loads into a DataFrame; summary: a second analysis set for top=20) on the same
loaded trace, so the gain is measured in the same run.

Default FILE: $MLPROF_SHARED_DIR/traces/pytorch-cpu/transformer_big.json.gz (117 MB of JSON,
1,046,851 events). Best of N runs each, interleaved; wall time in seconds."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

import mlprof

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shared = os.environ.get("MLPROF_SHARED_DIR", os.path.join(REPO, "..", "shared"))
ap = argparse.ArgumentParser()
ap.add_argument("file", nargs="?",
                default=os.path.join(shared, "traces", "pytorch-cpu", "transformer_big.json.gz"))
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--mlprof", default=os.path.join(REPO, "build", "mlprof"))
ap.add_argument("--no-json-load", action="store_true", help="skip Python's json.load row")
ap.add_argument("--what", choices=("ops", "summary"), default="ops")
a = ap.parse_args()
if not os.path.exists(a.file):
    print(f"SKIP: {a.file} not found (set MLPROF_SHARED_DIR)")
    sys.exit(77)


def cli():
    t0 = time.perf_counter()
    cmd = [a.mlprof, a.what, a.file] + (["--json"] if a.what == "ops" else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


old_path = []  # seconds of the pre-columns path on the trace module() loaded


def module():
    t0 = time.perf_counter()
    t = mlprof.load(a.file)
    loaded = time.perf_counter()
    if a.what == "summary":  # before: summary(top=20) built a second analysis set for top=20
        t.analysis("summary", top=20)
        old_path.append(loaded - t0 + time.perf_counter() - loaded)
        t1 = time.perf_counter()
        assert t.summary().span_ns > 0  # now: the default set
        return loaded - t0 + time.perf_counter() - t1
    ops = t.ops()
    assert len(ops) > 0
    took = time.perf_counter() - t0
    t1 = time.perf_counter()
    from mlprof._results import table  # before: the JSON text, json.loads, rows to a DataFrame
    table(json.loads(t.analysis_json("ops"))["ops"])
    old_path.append(took + time.perf_counter() - t1)
    return took


def pyjson():
    t0 = time.perf_counter()
    opener = gzip.open if a.file.endswith(".gz") else open
    with opener(a.file, "rb") as f:
        json.load(f)
    return time.perf_counter() - t0


best = {"cli": [], "module": [], "json": []}
for _ in range(a.runs):
    best["cli"].append(cli())
    best["module"].append(module())
if not a.no_json_load:
    best["json"].append(pyjson())  # once: seconds and hundreds of MB
c, m = min(best["cli"]), min(best["module"])
print(f"{os.path.basename(a.file)} ({os.path.getsize(a.file) / 1e6:.1f} MB on disk), best of {a.runs}")
o = min(old_path)
if a.what == "ops":
    print(f"  mlprof ops --json (CLI process)      {c:7.3f} s")
    print(f"  mlprof.load(f).ops() (Python)        {m:7.3f} s   {m / c:.2f}x the CLI (bar: <= 1.5x)")
    print(f"  before (+ JSON text, json.loads)     {o:7.3f} s   {o / c:.2f}x (upper bound: counts the columns too)")
else:
    print(f"  mlprof summary (CLI process)         {c:7.3f} s")
    print(f"  mlprof.load(f).summary() (Python)    {m:7.3f} s   {m / c:.2f}x the CLI (bar: <= 1.2x)")
    print(f"  before (a 2nd set for top=20)        {o:7.3f} s   {o / c:.2f}x the CLI")
if best["json"]:
    j = best["json"][0]
    print(f"  json.load(f) (Python, parse only)    {j:7.3f} s   {j / m:.1f}x mlprof.load().ops()")
