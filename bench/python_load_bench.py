"""`mlprof.load(big).ops()` from Python against `mlprof ops --json` on the same file (issue 12's
bar: within 1.5x), with Python's own json.load of the file beside them, all in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_load_bench.py [FILE] [--runs N]

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
a = ap.parse_args()
if not os.path.exists(a.file):
    print(f"SKIP: {a.file} not found (set MLPROF_SHARED_DIR)")
    sys.exit(77)


def cli():
    t0 = time.perf_counter()
    subprocess.run([a.mlprof, "ops", a.file, "--json"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def module():
    t0 = time.perf_counter()
    ops = mlprof.load(a.file).ops()
    assert len(ops) > 0
    return time.perf_counter() - t0


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
print(f"  mlprof ops --json (CLI process)      {c:7.3f} s")
print(f"  mlprof.load(f).ops() (Python)        {m:7.3f} s   {m / c:.2f}x the CLI (bar: <= 1.5x)")
if best["json"]:
    j = best["json"][0]
    print(f"  json.load(f) (Python, parse only)    {j:7.3f} s   {j / m:.1f}x mlprof.load().ops()")
