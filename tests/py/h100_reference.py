"""Independent computations over the traces recorded on an H100 by scripts/gpu_check.sh
(tests/data/h100/, issue 31): plain Python over the Kineto JSON, the snapshot pickle and the
TORCH_TRACE log, sharing no code with mlprof. test_h100_device_run.py compares mlprof with these.
"""
import bisect
import collections
import gzip
import json
import pickle
import re

LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def x_events(events):
    return [e for e in events if e.get("ph") == "X" and "dur" in e]


def launches_by_correlation(events):
    return {e["args"]["correlation"]: e for e in x_events(events)
            if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})}


def host_parent_index(events):
    """Per (pid, tid): the ops (cpu_op slices: aten ops, autograd Functions such as
    CompiledFunction) sorted by start, for 'the innermost op containing t'. Python frames and
    user annotations are not ops (the TensorBoard plugin's and TraceLens's rule)."""
    by_thread = collections.defaultdict(list)
    for e in x_events(events):
        if e.get("cat") != "cpu_op":
            continue
        by_thread[(e["pid"], e["tid"])].append(e)
    for v in by_thread.values():
        v.sort(key=lambda e: (e["ts"], -e["dur"]))
    return by_thread


def innermost_containing(slices, ts, end):
    """The slice with the latest start (then the shortest) that contains [ts, end]."""
    i = bisect.bisect_right([s["ts"] for s in slices], ts)
    best = None
    for s in slices[:i]:
        if s["ts"] <= ts and s["ts"] + s["dur"] >= end:
            if best is None or s["ts"] > best["ts"] or (s["ts"] == best["ts"] and s["dur"] < best["dur"]):
                best = s
    return best


def device_time_by_op(path):
    """GPU time and count of the kernels/memcpys/memsets each op's own launch calls started, by
    op name: the launch (cuda_runtime/driver, same correlation) has the op as its innermost
    enclosing cpu_op on its thread. Also: how many GPU events a cudaGraphLaunch started."""
    events = load(path)
    launch = launches_by_correlation(events)
    parents = host_parent_index(events)
    ns = collections.Counter()
    count = collections.Counter()
    by_launch_api = collections.Counter()
    for g in x_events(events):
        if g.get("cat") not in GPU_CATS:
            continue
        l = launch.get(g.get("args", {}).get("correlation"))
        if l is None:
            continue
        by_launch_api[l["name"]] += 1
        p = innermost_containing(parents[(l["pid"], l["tid"])], l["ts"], l["ts"] + l["dur"])
        if p is None:
            continue
        ns[p["name"]] += round(g["dur"] * 1000)
        count[p["name"]] += 1
    return ns, count, by_launch_api


def kernels_by_name(path):
    return collections.Counter(e["name"] for e in x_events(load(path)) if e.get("cat") == "kernel")


def compiled_regions(path):
    """Per compiled-region annotation (Torch-Compiled Region, CompiledFunction[Backward], Call
    CompiledFxGraph): calls, GPU events whose launch lies inside one of its ranges on its thread,
    Triton kernels among them, and their busy time (union of intervals)."""
    events = load(path)
    launch = launches_by_correlation(events)
    pat = re.compile(r"^(Torch-Compiled Region|CompiledFunction|## Call CompiledFxGraph)")
    regions = [e for e in x_events(events) if pat.match(e.get("name", "")) and e.get("cat") != "gpu_user_annotation"]
    gpu = [g for g in x_events(events) if g.get("cat") in GPU_CATS]
    out = {}
    for name in sorted({r["name"] for r in regions}):
        rs = [r for r in regions if r["name"] == name]
        inside = []
        for g in gpu:
            l = launch.get(g.get("args", {}).get("correlation"))
            if l and any(r["pid"] == l["pid"] and r["tid"] == l["tid"] and r["ts"] <= l["ts"] and
                         l["ts"] + l["dur"] <= r["ts"] + r["dur"] for r in rs):
                inside.append(g)
        iv = sorted((g["ts"], g["ts"] + g["dur"]) for g in inside)
        busy, cur_s, cur_e = 0.0, None, None
        for s, e in iv:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    busy += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            busy += cur_e - cur_s
        out[name] = {
            "calls": len(rs),
            "gpu_events": len(inside),
            "triton_kernels": sum(1 for g in inside if g["name"].startswith("triton_")),
            "gpu_busy_ns": busy * 1000,
        }
    return out


def torch_trace_log(path):
    """The compile ids (frame_id/frame_compile_id) and the number of inductor output-code
    artifacts in a TORCH_TRACE log: each line's JSON payload follows the glog header's ']'."""
    ids, outputs, lines = set(), 0, 0
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", errors="replace") as f:
        for line in f:
            if not line.startswith(("V", "I", "W", "E")) or "] {" not in line:
                continue
            try:
                payload = json.loads(line[line.index("] {") + 2:])
            except ValueError:
                continue
            lines += 1
            if "frame_id" in payload and "frame_compile_id" in payload:
                ids.add(f"{payload['frame_id']}/{payload['frame_compile_id']}")
            if "inductor_output_code" in payload:
                outputs += 1
    return {"compile_ids": sorted(ids), "inductor_output_code": outputs, "records": lines}


def snapshot(path):
    """The dump's allocated/reserved bytes, and the active-memory replay of the trace in
    memory_viz's unit (the requested bytes of each alloc/free_completed entry, starting from the
    active blocks the trace never allocated)."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        d = pickle.load(f)
    blocks = []
    for s in d["segments"]:
        a = s["address"]
        for b in s["blocks"]:
            blocks.append((a, b))
            a += b["size"]
    tr = d["device_traces"][0]
    allocated_in_trace = {e["addr"] for e in tr if e["action"] == "alloc"}
    pre = [b for a, b in blocks if b["state"] == "active_allocated" and a not in allocated_in_trace]
    cur = sum(b["requested_size"] for b in pre)
    start, peak = cur, cur
    for e in tr:
        if e["action"] == "alloc":
            cur += e["size"]
            peak = max(peak, cur)
        elif e["action"] == "free_completed":
            cur -= e["size"]
    allocated = sum(b["size"] for a, b in blocks if b["state"] == "active_allocated")
    return {
        "allocated_bytes": allocated,
        "reserved_bytes": sum(s["total_size"] for s in d["segments"]),
        "start_active_bytes": start,
        "peak_active_bytes": peak,
        "end_active_bytes": cur,
        "blocks_not_in_trace": len(pre),
    }
