"""--hta-compatible keeps HTA's numbers on the traces HTA was built for (issue 27 item 4).

Expected values: this script's own reading of the JSON by HTA v0.6.1's definitions:
- launch statistics (hta/analyzers/cuda_kernel_analysis.py get_cuda_kernel_launch_stats): launch
  calls are cudaLaunchKernel, cudaLaunchKernelExC, MTIA's `runFunction -
  job_prep_and_submit_for_execution`, and the memory calls cudaMemcpyAsync/cudaMemsetAsync; a
  call and its GPU row (a row with args.stream) joined on args.correlation;
- queue length (hta/analyzers/trace_counters.py, rows chosen by trace_symbol_table.py
  get_runtime_launch_events_mask: the list above plus cuLaunchKernel(Ex) and the HIP calls): per
  stream +1 at a call's start, -1 at its GPU row's start; summary over the levels after each change;
- HTA's times are whole microseconds: start rounded up, end rounded down;
- the GPU user annotation breakdown (hta/analyzers/breakdown_analysis.py
  get_gpu_user_annotation_breakdown) selects rows by category gpu_user_annotation; those rows
  carry no args.stream, so HTA's loader treats them as CPU rows: with two or more ProfilerStep#N
  the ones starting at or after the last step's start are dropped (hta/common/trace.py
  _filter_irrelevant_gpu_kernels).
"""
import gzip
import json
import math
import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]
MTIA_LAUNCH = "runFunction - job_prep_and_submit_for_execution"
HTA_LAUNCH_STATS = {"cudaLaunchKernel", "cudaLaunchKernelExC", MTIA_LAUNCH, "cudaMemcpyAsync",
                    "cudaMemsetAsync"}
HTA_QUEUE = HTA_LAUNCH_STATS | {"cuLaunchKernel", "cuLaunchKernelEx", "hipLaunchKernel",
                                "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync",
                                "hipMemcpyWithStream"}


def load(path):
    with gzip.open(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def hta_interval(e):
    return math.ceil(e["ts"]), math.floor(e["ts"] + e.get("dur", 0))


# 1. MTIA: the submit call is a launch in HTA mode too (one ProfilerStep: HTA filters nothing).
path = shared_data.require("traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz")
x = load(path)
calls = {e["args"]["correlation"]: e for e in x
         if e.get("cat", "").endswith("_runtime") and "correlation" in e.get("args", {})}
gpu_rows = [e for e in x if e.get("cat") == "mtia_ccp_events" and "stream" in e.get("args", {})]
rows = []
queue = defaultdict(list)
for g in gpu_rows:
    c = g["args"].get("correlation")
    call = calls.get(c)
    if call is None:
        continue
    cs, ce = hta_interval(call)
    gs, ge = hta_interval(g)
    if call["name"] in HTA_LAUNCH_STATS:
        rows.append((ce - cs, ge - gs, max(0, gs - ce)))
    if call["name"] in HTA_QUEUE:
        queue[g["args"]["stream"]] += [(cs, 1), (gs, -1)]
got = mlprof_json(MLPROF, "gpu", path, "--hta-compatible")
ls = got["launch_stats"]
check(len(rows) > 3000, f"the MTIA trace has {len(rows)} HTA launch rows")
check(ls["rows"] == len(rows), f"HTA-mode launch rows {ls['rows']} vs {len(rows)} (was 0)")
for key, col in (("sum_cpu_ns", 0), ("sum_gpu_ns", 1), ("sum_launch_delay_ns", 2)):
    want = sum(r[col] for r in rows) * 1000
    check(ls[key] == want, f"HTA-mode {key} {ls[key]} vs {want}")
queues = {q["stream"]: q for q in got["queue_length"]}
check(sorted(queues) == sorted(queue), f"HTA-mode queue streams {sorted(queues)} vs {sorted(queue)}")
for stream, pts in queue.items():
    pts.sort()
    level, values = 0, []
    for _, d in pts:
        level += d
        values.append(level)
    q = queues.get(stream)
    if q is None:
        continue
    h = q["hta_summary"]
    check(h["count"] == len(values), f"stream {stream}: queue count {h['count']} vs {len(values)}")
    check(h["max"] == max(values), f"stream {stream}: queue max {h['max']} vs {max(values)}")
    mean = sum(values) / len(values)
    check(abs(h["mean"] - mean) <= max(0.02, 0.02 * mean),
          f"stream {stream}: queue mean {h['mean']} vs {mean}")

# 2. gpu_user_annotation rows by category, although they carry no args.stream.
path = shared_data.require(
    "traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
x = load(path)
steps = sorted(e["ts"] for e in x if e["name"].startswith("ProfilerStep#") and
               e.get("cat") != "gpu_user_annotation")
last = steps[-1] if len(steps) >= 2 else float("inf")
ann = [e for e in x if e.get("cat") == "gpu_user_annotation"]
check(all("stream" not in e.get("args", {}) for e in ann), "annotations carry no args.stream")
want = Counter(e["name"] for e in ann if e["ts"] < last)
want_ns = Counter()
for e in ann:
    if e["ts"] < last:
        want_ns[e["name"]] += round(e["dur"] * 1000)
got = mlprof_json(MLPROF, "ops", path, "--hta-compatible", "--category", "gpu_user_annotation",
                  "--top", "0")
mine = Counter({r["name"]: r["count"] for r in got["ops"]})
check(len(want) > 0 and mine == want, f"HTA-mode annotation rows {dict(mine)} vs {dict(want)}")
for r in got["ops"]:
    check(abs(r["total_ns"] - want_ns[r["name"]]) <= r["count"],
          f"{r['name']}: total {r['total_ns']} vs {want_ns[r['name']]}")
full = mlprof_json(MLPROF, "ops", path, "--category", "gpu_user_annotation", "--top", "0")
check(sum(r["count"] for r in full["ops"]) == len(ann),
      f"default mode keeps every annotation ({len(ann)})")
finish()
