"""HTA's launch and queue-length tables on the MTIA trace (issue 14 items 4 and 5), and the
--hta-compatible stream rule.

Expected values: this script's own implementation of Holistic Trace Analysis' definitions
(HTA v0.6.1 hta/analyzers/cuda_kernel_analysis.py get_cuda_kernel_launch_stats: a launch call
and its GPU event joined on args.correlation, cpu_duration = the call's dur, gpu_duration = the
event's dur, launch_delay = event start - call end, at least 0 as in HTA's published tables
(MTIA's submit call runs until its work has started); hta/analyzers/trace_counters.py
get_queue_length_time_series: per stream, +1 at each launch call's start and -1 at its GPU
event's start, the queue length after each change; summary = pandas describe of those values),
with MTIA's launch call (`runFunction - job_prep_and_submit_for_execution`, category
mtia_runtime) counted as the launch it is. In --hta-compatible mode HTA's GPU rows are the events
with args.stream: on this trace the dma_request events of tid 801 carry none, so they leave the
temporal breakdown and no third stream appears.
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]
LAUNCH = "runFunction - job_prep_and_submit_for_execution"



def run(*args):
    return mlprof_json(MLPROF, *args)


def ns(us):
    return round(us * 1000)


def describe(v):
    v = sorted(v)
    n = len(v)

    def q(p):
        pos = p * (n - 1)
        lo = int(pos)
        hi = min(lo + 1, n - 1)
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)
    return {"count": n, "mean": statistics.fmean(v), "min": v[0], "max": v[-1],
            "p25": q(0.25), "p50": q(0.5), "p75": q(0.75)}


path = shared_data.require("traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz")
with gzip.open(path, "rt") as f:
    events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
launches = {e["args"]["correlation"]: e for e in events
            if e.get("cat") == "mtia_runtime" and e["name"] == LAUNCH and
            "correlation" in e.get("args", {})}
device = [e for e in events if e.get("cat") == "mtia_ccp_events"]

# Launch statistics (default mode: ns, every matched launch).
rows = []
for e in device:
    c = e.get("args", {}).get("correlation")
    if c in launches:
        rt = launches[c]
        # Work that starts while its (synchronous) submit call still runs has delay 0, as in
        # HTA's published launch tables (3442 of 3453 here).
        rows.append((ns(rt["dur"]), ns(e["dur"]),
                     max(0, ns(e["ts"]) - ns(rt["ts"] + rt["dur"]))))
got = run("gpu", path)
ls = got["launch_stats"]
check(ls["rows"] == len(rows) and len(rows) > 0, f"launch rows {ls['rows']} vs {len(rows)}")
check(abs(ls["sum_cpu_ns"] - sum(r[0] for r in rows)) <= len(rows),
      f"sum cpu {ls['sum_cpu_ns']} vs {sum(r[0] for r in rows)}")
check(abs(ls["sum_gpu_ns"] - sum(r[1] for r in rows)) <= len(rows),
      f"sum gpu {ls['sum_gpu_ns']} vs {sum(r[1] for r in rows)}")
check(abs(ls["sum_launch_delay_ns"] - sum(r[2] for r in rows)) <= 2 * len(rows),
      f"sum delay {ls['sum_launch_delay_ns']} vs {sum(r[2] for r in rows)}")
for key, col in (("cpu_duration_us", 0), ("gpu_duration_us", 1), ("launch_delay_us", 2)):
    ref = describe([r[col] / 1000 for r in rows])
    for stat in ("count", "mean", "min", "max", "p50"):
        check(abs(got["launch_stats"][key][stat] - ref[stat]) <= 0.002 + 1e-6 * abs(ref[stat]),
              f"{key}.{stat} {got['launch_stats'][key][stat]} vs {ref[stat]}")

# Queue length per stream (HTA's definition, change points).
by_stream = defaultdict(list)
for e in device:
    c = e.get("args", {}).get("correlation")
    if c in launches:
        stream = e.get("args", {}).get("stream", e["tid"])
        by_stream[stream].append((ns(launches[c]["ts"]), 1))
        by_stream[stream].append((ns(e["ts"]), -1))
queues = {q["stream"]: q for q in got["queue_length"]}
for stream, pts in by_stream.items():
    pts.sort(key=lambda p: (p[0], p[1]))
    level, values = 0, []
    for _, d in pts:
        level += d
        values.append(level)
    ref = describe(values)
    q = queues.get(stream)
    check(q is not None, f"queue of stream {stream} listed ({sorted(queues)})")
    if q is None:
        continue
    h = q["hta_summary"]
    check(h["count"] == ref["count"], f"stream {stream}: queue count {h['count']} vs {ref['count']}")
    check(h["max"] == ref["max"] and q["max_length"] == ref["max"],
          f"stream {stream}: queue max {h['max']} vs {ref['max']}")
    check(abs(h["mean"] - ref["mean"]) <= max(0.02, 0.02 * ref["mean"]),
          f"stream {stream}: queue mean {h['mean']} vs {ref['mean']}")

# --hta-compatible: GPU rows need args.stream.
hta = run("gpu", path, "--hta-compatible")
with_stream = [e for e in device if "stream" in e.get("args", {})]
streams = sorted({e["args"]["stream"] for e in with_stream})
check(sorted({s["stream"] for s in hta["idle_time_breakdown"]}) == streams,
      f"HTA-mode streams {sorted({s['stream'] for s in hta['idle_time_breakdown']})} vs {streams}")
kept = hta["kept_steps"]
check(hta["gpu_events"] <= len(with_stream), f"HTA-mode GPU events {hta['gpu_events']} <= "
      f"{len(with_stream)} with a stream")
finish()
