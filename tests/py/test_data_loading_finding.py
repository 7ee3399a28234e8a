"""The data_loading finding reports the TensorBoard plugin's own DataLoader share on a GPU trace
(the number its rule cites), and the name-based phase without GPU work: one definition each.

Expected share on the plugin's resnet50_num_workers_0 sample, by this script's implementation of
the plugin's step-time classes (kineto tb_plugin, OverallParser: each instant of a step goes to
the first active class of kernel > memcpy > memset > communication > runtime > DataLoader > CPU
op; DataLoader ranges are ops named `enumerate(DataLoader)#...`): DataLoader time = the
DataLoader ranges inside the steps minus the instants a higher class holds, over the steps' time.
"""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
failures = checked = 0


def check(cond, what):
    global failures, checked
    checked += 1
    if not cond:
        failures += 1
        print("FAIL", what)


def union(intervals):
    out = []
    for b, e in sorted(intervals):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def length(intervals):
    return sum(e - b for b, e in intervals)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def finding(path):
    doc = json.loads(subprocess.run([MLPROF, "bottlenecks", path, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    return next((f for f in doc["findings"] if f["kind"] == "data_loading"), None)


path = shared_data.shared_path(
    "peers/tb_plugin/traces/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz")
if path:
    with gzip.open(path, "rt") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    span = lambda e: [e["ts"], e["ts"] + e["dur"]]  # noqa: E731
    steps = union(span(e) for e in events if e["name"].startswith("ProfilerStep#"))
    check(not any("nccl" in e["name"].lower() for e in events), "no communication in the sample")
    higher = union(span(e) for e in events
                   if e.get("cat") in ("Kernel", "Memcpy", "Memset", "Runtime"))
    loader = intersect(union(span(e) for e in events
                             if e["name"].startswith("enumerate(DataLoader)#")), steps)
    expected_us = length(loader) - length(intersect(loader, higher))
    expected_pct = 100 * expected_us / length(steps)
    f = finding(path)
    check(f is not None, "data_loading finding on the plugin's workers_0 sample")
    if f:
        got = f["evidence"]["data_loading_pct"]
        check(abs(got - expected_pct) < 0.01, f"DataLoader share {got:.3f}% vs the plugin's "
              f"{expected_pct:.3f}%")
        check(abs(f["evidence"]["data_loading_ns"] - expected_us * 1000) < 1000,
              f"DataLoader time {f['evidence']['data_loading_ns']} vs {expected_us * 1000}")
        check("DataLoader step class" in f["rule"], f"rule names the plugin's class: {f['rule']}")

# Without GPU work: the name-based phase, and the rule says so.
cpu = os.path.join(DATA, "mlp_bs64.json.gz")
steps_doc = json.loads(subprocess.run([MLPROF, "steps", cpu, "--json"], check=True,
                                      capture_output=True, text=True).stdout)
f = finding(cpu)
check(f is not None and not steps_doc["has_gpu"], "CPU trace: a data_loading finding")
if f:
    check(f["evidence"]["data_loading_ns"] == steps_doc["phase_total_ns"]["data_loading"],
          "CPU trace: the data-loading phase total")
    check("phase" in f["rule"], f"CPU rule names the phase: {f['rule']}")
print(f"{checked - failures}/{checked} checks passed")
sys.exit(1 if failures else (shared_data.SKIP if shared_data._missing else 0))
