"""An independent, short re-implementation of the TensorBoard profiler plugin's Overview numbers
(pytorch/kineto@041e7ce, tb_plugin/torch_tb_profiler/profiler/), for checking mlprof against:

* event types by category (trace.py EventTypeMap / create_trace_event);
* steps as the GPU sees them (event_parser.py StepParser._find_device_steps and
  _update_steps_duration): a runtime call wholly inside a host step window attributes the GPU
  events of its correlation id to that step; the step then ends at max(host end, last such GPU
  end) and starts at max(host start, previous step's end); tail steps with no (or < 80% of the
  previous step's) GPU events are dropped;
* step-time classes (StepParser._parse_step role ranges, overall_parser.py OverallParser: each
  instant goes to the first active role of kernel > memcpy > memset > communication > runtime >
  DataLoader > CPU op, the rest is other);
* the GPU summary (gpu_metrics_parser.py GPUMetricsParser: utilization, approximated SM
  efficiency, averaged occupancy over [first step start, last step end]);
* device time per operator (op_agg.py / node.py: an op's device self time is the duration of
  the kernels launched by runtime calls whose external id is the op's own; total adds its
  children's).

Times stay in the trace's microseconds (floats allowed). Written from the plugin's published
code and docs, not copied.
"""
import gzip
import json
import sys
from collections import defaultdict
from decimal import Decimal

NCCL_OPS = {"nccl:broadcast", "nccl:reduce", "nccl:all_reduce", "nccl:all_gather",
            "nccl:reduce_scatter"}
GLOO_OPS = {"gloo:broadcast", "gloo:reduce", "gloo:all_reduce", "gloo:all_gather",
            "gloo:reduce_scatter"}
TYPE = {"trace": "Trace", "cpu_op": "Operator", "operator": "Operator", "runtime": "Runtime",
        "cuda_runtime": "Runtime", "mtia_runtime": "Runtime", "glow_runtime": "Runtime",
        "xpu_runtime": "Runtime", "privateuse1_runtime": "Runtime", "kernel": "Kernel",
        "memcpy": "Memcpy", "gpu_memcpy": "Memcpy", "memset": "Memset", "gpu_memset": "Memset",
        "python": "Python", "python_function": "python_function",
        "user_annotation": "user_annotation", "gpu_user_annotation": "user_annotation"}
KERNEL, MEMCPY, MEMSET, COMM, RUNTIME, DATALOADER, CPUOP, OTHER = range(8)
ROLE_NAMES = ["kernel", "memcpy", "memset", "communication", "runtime", "data_loader", "cpu_op",
              "other"]


BASE_US = 0  # load() rebases times on the whole microsecond of the first event (see there)


def load(path):
    """The trace's duration events with their plugin type. Timestamps are read exactly
    (Decimal) and rebased on BASE_US: epoch-scale float microseconds (1.7e15) hold only 0.25 us
    as doubles, which would blur sub-microsecond traces; absolute time = BASE_US + ts."""
    global BASE_US
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    stamps = [e["ts"] for e in events if e.get("ph") == "X" and "ts" in e]
    BASE_US = int(min(stamps)) if stamps else 0
    for e in events:
        for k in ("ts", "dur"):
            if k in e and isinstance(e[k], (int, Decimal)):
                v = e[k] - BASE_US if k == "ts" else e[k]
                e[k] = int(v) if v == int(v) else float(v)
        a = e.get("args")
        if isinstance(a, dict):
            for k, v in a.items():
                if isinstance(v, Decimal):
                    a[k] = float(v)
    out = []
    for e in events:
        if e.get("ph") != "X":
            continue
        t = TYPE.get(str(e.get("cat", "")).lower())
        if t is None:
            continue
        e = dict(e)
        e["type"] = t
        name = e.get("name", "")
        if t in ("Operator", "user_annotation") and name.startswith("ProfilerStep#"):
            e["type"] = "ProfilerStep"
        e["end"] = e["ts"] + e.get("dur", 0)
        out.append(e)
    out.sort(key=lambda e: e["ts"])
    return out


def args(e):
    return e.get("args") or {}


def ext_id(e):
    a = args(e)
    return a.get("external id", a.get("External id"))


def merge(ranges):
    out = []
    for b, e in sorted(ranges):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return [tuple(r) for r in out]


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a, b):
    out = []
    for lo, hi in a:
        cur = lo
        for blo, bhi in b:
            if bhi <= cur or blo >= hi:
                continue
            if blo > cur:
                out.append((cur, blo))
            cur = max(cur, bhi)
        if cur < hi:
            out.append((cur, hi))
    return out


def total(ranges):
    return sum(e - b for b, e in ranges)


def device_steps(events):
    """(steps [(begin, end)] after the GPU extension and tail removal, names, host steps)."""
    steps = [(e["ts"], e["end"], e["name"]) for e in events if e["type"] == "ProfilerStep"]
    if not steps:
        cpu = [e for e in events if e["type"] in ("Python", "Operator", "ProfilerStep")]
        steps = [(min(e["ts"] for e in cpu), max(e["end"] for e in cpu), "0")]
    device = [e for e in events if e["type"] in ("Kernel", "Memcpy", "Memset")]
    by_corr = defaultdict(list)
    for d in device:
        by_corr[args(d).get("correlation")].append(d)
    runtimes = sorted((e for e in events if e["type"] == "Runtime"), key=lambda e: e["ts"])
    n = len(steps)
    dev = [None] * n
    counts = [0] * n
    matched = set()
    i = r = 0
    lo = hi = None
    while i < n and r < len(runtimes):
        rt = runtimes[r]
        hb, he = steps[i][0], steps[i][1]
        if rt["ts"] < hb:
            r += 1
        elif rt["end"] <= he:
            for d in by_corr.get(args(rt).get("correlation"), []):
                lo = d["ts"] if lo is None else min(lo, d["ts"])
                hi = d["end"] if hi is None else max(hi, d["end"])
                matched.add(id(d))
                counts[i] += 1
            r += 1
        elif rt["ts"] < he:
            r += 1
        else:
            dev[i] = (lo, hi) if lo is not None else None
            i += 1
            lo = hi = None
    while i < n:
        dev[i] = (lo, hi) if lo is not None else None
        lo = hi = None
        i += 1
    out = [(b, e) for b, e, _ in steps]
    keep = n
    if matched:
        prev = steps[0][0]
        if dev[0] is not None:
            for d in device:
                if id(d) not in matched and d["end"] < dev[0][0]:
                    prev = max(prev, d["end"])
        for k in range(n):
            b = max(prev, steps[k][0])
            e = steps[k][1]
            e = max(e, b) if dev[k] is None else max(max(e, dev[k][1]), b)
            out[k] = (b, e)
            prev = e
        if n > 1:
            last = n - 1
            while last >= 0 and counts[last] == 0:
                last -= 1
            if last >= 0:
                keep = last + 1
                if last > 0 and counts[last - 1] * 0.8 > counts[last]:
                    keep = last
    return out[:keep], [s[2] for s in steps][:keep], out


def roles(events):
    comm_ext = {ext_id(e) for e in events
                if e["type"] in ("Python", "Operator", "user_annotation") and
                e["name"] in NCCL_OPS | GLOO_OPS}
    r = [[] for _ in range(7)]
    for e in events:
        t, span, name = e["type"], (e["ts"], e["end"]), e.get("name", "")
        if t == "Kernel":
            r[COMM if ext_id(e) in comm_ext else KERNEL].append(span)
        elif t == "Memcpy":
            r[MEMCPY].append(span)
        elif t == "Memset":
            r[MEMSET].append(span)
        elif t == "Runtime":
            r[RUNTIME].append(span)
        elif t in ("Operator", "user_annotation") and (
                (name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__")) or
                name.startswith("enumerate(DataPipe)#")):
            r[DATALOADER].append(span)
        elif t in ("Python", "Operator", "user_annotation"):
            r[COMM if name in NCCL_OPS | GLOO_OPS else CPUOP].append(span)
    return [merge(x) for x in r]


def step_costs(events, steps):
    """Per step, the time of each of the 8 classes (OverallParser)."""
    role = roles(events)
    slots = merge(steps)
    cost = []
    for k in range(7):
        got = intersect(slots, role[k])
        cost.append(got)
        slots = subtract(slots, got)
    cost.append(slots)
    return [[total(intersect([s], c)) for c in cost] for s in steps]


def gpu_summary(events, steps):
    """{device: (utilization, sm_efficiency or None, occupancy or None)}."""
    lo, hi = steps[0][0], steps[-1][1]
    kernels = defaultdict(list)
    for e in events:
        if e["type"] == "Kernel" and args(e).get("device") is not None:
            kernels[args(e)["device"]].append(e)
    out = {}
    for dev, ks in kernels.items():
        busy = total(intersect(merge((k["ts"], k["end"]) for k in ks), [(lo, hi)]))
        points = []
        for k in ks:
            b = args(k).get("blocks per SM")
            if b is not None and b > 0:
                points += [(k["ts"], 0, b), (k["end"], 1, -b)]
        sm = None
        if points:
            points.sort(key=lambda p: (p[0], p[1]))
            level, prev, acc = 0.0, points[0][0], 0.0
            for t, _, v in points:
                if t > prev and level > 0:
                    a, b = max(prev, lo), min(t, hi)
                    if b > a:
                        acc += min(level, 1.0) * (b - a)
                prev = t
                level += v
            sm = acc / (hi - lo)
        occ_w = occ_t = 0
        for k in ks:
            o = args(k).get("est. achieved occupancy %")
            if o is not None and o >= 0:
                a, b = max(k["ts"], lo), min(k["end"], hi)
                if a < b:
                    occ_w += o * (b - a)
                    occ_t += b - a
        out[dev] = (busy / (hi - lo), sm, occ_w / occ_t if occ_t else None)
    return out


def op_device_times(events):
    """{op name: [device self, device total]} summed over the Operator-type ops the plugin's
    Operator view lists (node.py is_operator_node; OperatorNode.fill_stats)."""
    device = [e for e in events if e["type"] in ("Kernel", "Memcpy", "Memset")]
    dur_by_corr = defaultdict(float)
    for d in device:
        dur_by_corr[args(d).get("correlation")] += d["end"] - d["ts"]
    by_ext = defaultdict(float)
    for rt in events:
        if rt["type"] == "Runtime" and ext_id(rt) not in (None, 0):
            by_ext[ext_id(rt)] += dur_by_corr.get(args(rt).get("correlation"), 0)
    nodes = [e for e in events
             if e["type"] in ("Operator", "user_annotation", "Python", "ProfilerStep") or
             (e["type"] == "python_function" and args(e).get("Python module id") is not None)]
    by_tid = defaultdict(list)
    for n in nodes:
        by_tid[n["tid"]].append(n)
    out = defaultdict(lambda: [0.0, 0.0])
    for lst in by_tid.values():
        lst.sort(key=lambda e: (e["ts"], -(e["end"] - e["ts"])))
        total = {}
        stack = []
        order = []
        for n in lst:
            while stack and not (n["ts"] >= stack[-1]["ts"] and n["end"] <= stack[-1]["end"]):
                stack.pop()
            n["_parent"] = stack[-1] if stack else None
            stack.append(n)
            order.append(n)
        for n in order:
            total[id(n)] = by_ext.get(ext_id(n), 0) if ext_id(n) is not None else 0
            n["_self"] = total[id(n)]
        for n in reversed(order):
            if n["_parent"] is not None:
                total[id(n["_parent"])] += total[id(n)]
        for n in order:
            name = n["name"]
            if n["type"] == "Operator" and not (
                    name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__")) \
                    and not name.startswith("Optimizer.") and name not in (
                        "DataParallel.forward", "DistributedDataParallel.forward"):
                out[name][0] += n["_self"]
                out[name][1] += total[id(n)]
    return dict(out)


if __name__ == "__main__":
    ev = load(sys.argv[1])
    st, names, host = device_steps(ev)
    print("steps", list(zip(names, st)))
    print("gpu", gpu_summary(ev, st))
    for n, c in zip(names, step_costs(ev, st)):
        print(n, dict(zip(ROLE_NAMES, c)))
