"""The Python baseline for bench/analyze_bench.sh: what a user's notebook does with a trace
(json.load + a few dict passes): per-op totals, per-step times, kernel totals and GPU busy time,
memory peak. Prints a one-line digest so the work cannot be optimised away."""
import gzip
import json
import sys
from collections import defaultdict

path = sys.argv[1]
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
with opener(path, "rt") as f:
    doc = json.load(f)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
ops = defaultdict(lambda: [0, 0.0])
steps = {}
kernels = defaultdict(float)
gpu = []
mem_peak = 0
for e in events:
    ph = e.get("ph")
    if ph == "X":
        row = ops[(e.get("name"), e.get("cat"))]
        row[0] += 1
        row[1] += e.get("dur", 0)
        name = e.get("name", "")
        if name.startswith("ProfilerStep#"):
            steps[name] = e.get("dur", 0)
        if e.get("cat") in ("kernel", "Kernel", "gpu_memcpy", "gpu_memset"):
            kernels[name] += e.get("dur", 0)
            gpu.append((e["ts"], e["ts"] + e.get("dur", 0)))
    elif ph in ("i", "I") and e.get("name") == "[memory]":
        mem_peak = max(mem_peak, e.get("args", {}).get("Total Allocated", 0))
gpu.sort()
busy, end = 0.0, None
for s, t in gpu:
    if end is None or s > end:
        busy += t - s
        end = t
    elif t > end:
        busy += t - end
        end = t
print(len(ops), len(steps), len(kernels), round(busy), mem_peak)
