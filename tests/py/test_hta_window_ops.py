"""--hta-compatible on `ops` (issue 14 item 5) and the trace's begin without Kineto's profiler span.

HTA's loader rules, implemented here from HTA v0.6.1's documented behaviour (hta/common/trace.py:
with two or more ProfilerStep#N, CPU events from the last step's start are dropped; GPU rows
are those with args.stream; a GPU event whose launch was dropped or is missing goes too), and
the trace's begin as HTA takes it (the earliest event other than the `Trace`-category span
"PyTorch Profiler (0)"). Checked on HTA's own test trace (simple_add) and the MTIA trace.
"""
import gzip
import json
import os
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]



def run(*args):
    return mlprof_json(MLPROF, *args)


def ns(us):
    return round(us * 1000)


for rel in ["traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
            "traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz"]:
    path = shared_data.shared_path(rel)
    if not path:
        continue
    name = os.path.basename(path)
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    x = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    gpu_pids = {e["pid"] for e in x if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset",
                                                        "mtia_ccp_events")}
    cpu = [e for e in x if e["pid"] not in gpu_pids and e.get("cat") != "Trace"]
    steps = sorted(e["ts"] for e in cpu if e["name"].startswith("ProfilerStep#"))
    last = steps[-1] if len(steps) >= 2 else float("inf")

    # ops --hta-compatible: CPU rows of cpu_op slices before the last step.
    want = Counter(e["name"] for e in cpu if e.get("cat") == "cpu_op" and e["ts"] < last)
    got = run("ops", path, "--hta-compatible", "--category", "cpu_op", "--top", "0")
    mine = Counter({r["name"]: r["count"] for r in got["ops"]})
    check(mine == want, f"{name}: ops --hta-compatible cpu_op counts differ: "
          f"{sorted((mine - want).items())[:3]} / {sorted((want - mine).items())[:3]}")
    # ... and annotation rows too.
    want = Counter(e["name"] for e in cpu if e.get("cat") == "user_annotation" and e["ts"] < last)
    got = run("ops", path, "--hta-compatible", "--category", "user_annotation", "--top", "0")
    check(Counter({r["name"]: r["count"] for r in got["ops"]}) == want,
          f"{name}: ops --hta-compatible annotation rows")
    if len(steps) >= 2:
        full = run("ops", path, "--category", "cpu_op", "--top", "0")
        check(sum(r["count"] for r in full["ops"]) > sum(mine.values()),
              f"{name}: the default keeps the last step")

    # The trace's begin and end leave out the profiler span.
    begin = min(ns(e["ts"]) for e in x if e.get("cat") != "Trace")
    end = max(ns(e["ts"] + e.get("dur", 0)) for e in x if e.get("cat") != "Trace")
    s = run("summary", path)
    check(s["begin_ns"] <= begin and s["end_ns"] >= end - 1,
          f"{name}: span [{s['begin_ns']}, {s['end_ns']}] covers the events [{begin}, {end}]")
    trace_span = [e for e in x if e.get("cat") == "Trace"]
    if trace_span:
        t0 = min(ns(e["ts"]) for e in trace_span)
        check(s["begin_ns"] > t0 or begin <= t0,
              f"{name}: begin {s['begin_ns']} is not the profiler span's {t0}")
    # Timeline: CPU busy is the union of top-level CPU slices without the profiler span.
    tl = run("timeline", path)
    check(tl["cpu_busy_ns"] < s["span_ns"], f"{name}: CPU busy {tl['cpu_busy_ns']} < span "
          f"{s['span_ns']}")

finish()
