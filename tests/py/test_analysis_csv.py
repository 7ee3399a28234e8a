"""`--csv` on the analysis subcommands: the main table of each analysis's JSON, read back with the
csv module, has the JSON table's rows and values (flattened here independently: nested objects
as dotted columns, arrays as JSON text, null empty). Usage: test_analysis_csv.py MLPROF DATA."""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]

# The main table of each analysis (the JSON key its --csv writes).
MAIN = {"summary": "top_ops", "ops": "ops", "steps": "steps", "memory": "ops",
        "leaks": "surviving_ops", "flops": "ops", "bottlenecks": "findings"}
GPU_MAIN = {"kernels": "kernels", "gpu": "idle_time_breakdown"}


def flatten(v, prefix, out):
    if isinstance(v, dict):
        for k, x in v.items():
            flatten(x, f"{prefix}.{k}" if prefix else k, out)
    else:
        out[prefix or "value"] = v


def same(cell, v):
    if v is None:
        return cell == ""
    if isinstance(v, bool):
        return cell == ("true" if v else "false")
    if isinstance(v, (int, float)):
        return cell != "" and abs(float(cell) - v) <= 1e-12 * max(1.0, abs(v))
    if isinstance(v, list):
        return json.loads(cell) == v
    return cell == v


def check_command(name, key, path):
    p = subprocess.run([MLPROF, name, path, "--json"], capture_output=True, text=True)
    check(p.returncode == 0, f"{name} --json: {p.stderr}")
    table = json.loads(p.stdout)[key]
    rows = table if isinstance(table, list) else [table]
    p = subprocess.run([MLPROF, name, path, "--csv"], capture_output=True, text=True)
    check(p.returncode == 0, f"{name} --csv: exit {p.returncode}: {p.stderr}")
    got = list(csv.DictReader(io.StringIO(p.stdout, newline="")))
    check(len(got) == len(rows), f"{name}: {len(got)} CSV rows vs {len(rows)} in the JSON")
    for g, r in zip(got, rows):
        flat = {}
        flatten(r, "", flat)
        bad = [k for k, v in flat.items() if not same(g.get(k, ""), v)]
        check(not bad, f"{name}: columns {bad[:3]} differ: {[(g.get(k), flat[k]) for k in bad[:2]]}")


cpu = os.path.join(DATA, "a_mlp_b32_w64.kineto.json.gz")
for name, key in MAIN.items():
    check_command(name, key, cpu)
gpu = shared_path("traces/kineto-gpu/critical_path/simple_add/"
                  "benchmark_result_493459_1694039959_trace.json.gz")
if gpu:
    for name, key in GPU_MAIN.items():
        check_command(name, key, gpu)
finish()
