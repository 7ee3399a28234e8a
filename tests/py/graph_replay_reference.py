"""Independent reference for `mlprof graphs` (issue 27 item 2), straight from the Kineto JSON.

A replay: the GPU kernels sharing a cudaGraphLaunch/hipGraphLaunch's correlation, in start
order. A capture: the runtime calls between Stream{Begin,End}Capture on one thread that name a
kernel (args.kernel), in call order. Replayed kernel i is matched to the next captured launch of
the same name (at most 64 ahead), and its duration charged to the captured launch's op: the
non-runtime CPU event with the launch's External id, else the innermost event enclosing the
launch on its thread; and to the innermost enclosing `nn.Module: X` event.

Kineto on NVIDIA writes no args.kernel on launches made during a capture: there a kernel launch
call (cudaLaunchKernel*, cuLaunchKernel*, hipLaunchKernel, ...) is a captured launch without a
name, which matches the replayed kernel at its position only; an Inductor launch takes its name
from the enclosing op (Inductor's record_function is named after the Triton kernel).
"""
import glob
import gzip
import json
import os
from collections import defaultdict

RUNTIME = ("cuda_runtime", "cuda_driver")
KERNEL_LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                   "cudaLaunchCooperativeKernel", "hipLaunchKernel", "hipExtLaunchKernel")
LOOKAHEAD = 64


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def load_capture_dir(capdir):
    """Every event of a capture_traces/ directory's trace files (execution_details.json is the
    engine's plan, not a trace)."""
    return [e for events in load_capture_files(capdir) for e in events]


def ns(us):
    return round(us * 1000)


def captures(events, gemms=False, op_events=False):
    """[[(kernel, op, module)]] per capture window; gemms: (kernel, op, module, gemm) where gemm
    is (event id, FLOPs) of the outermost GEMM op (gemm_flops) enclosing the launch, or None;
    op_events: (kernel, op, module, event) where event is the op's event (None: the launch call
    itself)."""
    xs = [e for e in events if e.get("ph") == "X"]
    by_ext = {}
    for e in sorted(xs, key=lambda e: e["ts"]):
        if e.get("cat") in RUNTIME or e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        x = (e.get("args") or {}).get("External id")
        if x and x > 0:
            by_ext.setdefault(x, e)
    threads = defaultdict(list)
    for e in xs:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"):
            threads[(e["pid"], e["tid"])].append(e)
    out = []
    for key, evs in threads.items():
        # One sweep in start order (longest first) keeps the events open at each call; those
        # that end before the call are left out (the trace is not always well nested).
        evs.sort(key=lambda e: (ns(e["ts"]), -ns(e.get("dur", 0))))
        stack, cur = [], None
        for e in evs:
            t0 = ns(e["ts"])
            t1 = t0 + ns(e.get("dur", 0))
            while stack and ns(stack[-1]["ts"]) + ns(stack[-1].get("dur", 0)) < t0:
                stack.pop()
            if e.get("cat") in RUNTIME:
                n = e["name"]
                a = e.get("args") or {}
                if n.endswith("StreamBeginCapture"):
                    cur = []
                elif n.endswith("StreamEndCapture"):
                    if cur is not None:
                        out.append(cur)
                    cur = None
                elif cur is not None and (a.get("kernel") or n in KERNEL_LAUNCHES):
                    # a launch call inside another launch call is the same launch
                    if any(p.get("cat") in RUNTIME and (p["name"] in KERNEL_LAUNCHES or
                                                        (p.get("args") or {}).get("kernel"))
                           and ns(p["ts"]) + ns(p.get("dur", 0)) >= t1 for p in stack[-1:]):
                        stack.append(e)
                        continue
                    encl = [p for p in reversed(stack) if p.get("cat") not in RUNTIME and
                            ns(p["ts"]) + ns(p.get("dur", 0)) >= t1]
                    op_ev = by_ext.get(a.get("External id")) if a.get("External id") else None
                    if op_ev is None:
                        op_ev = encl[0] if encl else None
                    op = op_ev["name"] if op_ev else n
                    mod = next((p["name"][len("nn.Module: "):] for p in encl
                                if p["name"].startswith("nn.Module: ")), "")
                    kernel = a.get("kernel") or (op if op.startswith("triton_") else "")
                    if gemms:
                        g = next(((id(p), gemm_flops(p)) for p in reversed(encl)
                                  if gemm_flops(p) is not None), None)
                        cur.append((kernel, op, mod, g))
                    elif op_events:
                        cur.append((kernel, op, mod, op_ev))
                    else:
                        cur.append((kernel, op, mod))
            stack.append(e)
    return out


def gemm_flops(e):
    """FLOPs of a GEMM op from its recorded shapes (2MNK, + MN for a bias), None if not a GEMM
    with shapes: mm [M,K][K,N]; addmm [N][M,K][K,N]; bmm/baddbmm batched; matmul [..,M,K]
    [..,K,N]; linear [..,K][N,K][N]."""
    name = e.get("name", "")
    if not name.startswith("aten::"):
        return None
    op = name[6:]
    d = (e.get("args") or {}).get("Input Dims")
    if op not in ("mm", "addmm", "bmm", "baddbmm", "matmul", "linear") or not d:
        return None
    prod = lambda xs: eval("*".join(str(x) for x in xs) or "1")  # noqa: E731
    try:
        if op == "mm":
            (m, k), (_, n) = d[0], d[1]
            return 2 * m * n * k
        if op == "addmm":
            (m, k), (_, n) = d[1], d[2]
            return 2 * m * n * k + m * n
        if op == "bmm":
            (b, m, k), (_, _, n) = d[0], d[1]
            return b * 2 * m * n * k
        if op == "baddbmm":
            (b, m, k), (_, _, n) = d[1], d[2]
            return b * (2 * m * n * k + m * n)
        if op == "matmul":
            a, w = d[0], d[1]
            if len(a) < 2 or len(w) < 2:
                return None
            return 2 * prod(a[:-1]) * a[-1] * w[-1]
        a, w = d[0], d[1]
        rows = prod(a[:-1])
        return 2 * rows * a[-1] * w[0] + (rows * w[0] if len(d) > 2 and d[2] else 0)
    except (ValueError, TypeError, IndexError):
        return None


def best_capture(names, caps):
    """(alignment, matched count, capture) of the capture whose kernel sequence matches the most
    of a replay's kernel names; (None, -1, None) when there is no capture."""
    best, best_n, best_cap = None, -1, None
    for cap in caps:
        m = align(names, cap)
        n = sum(1 for x in m if x >= 0)
        if n > best_n:
            best, best_n, best_cap = m, n, cap
    return best, best_n, best_cap


def replayed_gemm_flops(trace_events, capture_events):
    """FLOPs of the captured GEMM ops the matched replays ran again: each replay runs each
    captured GEMM op at least one of whose launches it matched once (capture-order match as in
    attribute())."""
    caps = captures(capture_events, gemms=True)
    total, calls = 0, 0
    for corr, ks in replays(trace_events):
        best, best_n, best_cap = best_capture([n for n, _ in ks], caps)
        if best is None or best_n < 0.9 * len(ks):
            continue
        seen = {}
        for (name, d), k in zip(ks, best):
            if k >= 0 and best_cap[k][3] is not None and d > 0:
                seen[best_cap[k][3][0]] = best_cap[k][3][1]
        total += sum(seen.values())
        calls += len(seen)
    return total, calls


def replays(events):
    """[(correlation, [(name, dur_ns)])] per graph launch, by launch time."""
    launches = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in RUNTIME and
                       e["name"].split("_")[0] in ("cudaGraphLaunch", "hipGraphLaunch",
                                                   "cuGraphLaunch")), key=lambda e: e["ts"])
    by_corr = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            by_corr[(e.get("args") or {}).get("correlation")].append(e)
    out = []
    for l in launches:
        c = l["args"]["correlation"]
        ks = sorted(by_corr.get(c, []), key=lambda e: (e["ts"], e["ts"] + e["dur"]))
        out.append((c, [(k["name"], ns(k["ts"] + k["dur"]) - ns(k["ts"])) for k in ks]))
    return out


def align(names, cap):
    m, j = [], 0
    for n in names:
        hit = -1
        for k in range(j, min(len(cap), j + LOOKAHEAD)):
            if cap[k][0] == "" and k != j:
                break  # a launch naming no kernel matches only at its position
            if cap[k][0] in ("", n):
                hit, j = k, k + 1
                break
        m.append(hit)
    return m


def attribute(trace_events, capture_events):
    """{'replays': [(corr, kernels, matched)], 'ops': {op: ns}, 'modules': {...}, 'kernels': {...}}"""
    caps = captures(capture_events)
    res = {"replays": [], "ops": defaultdict(int), "modules": defaultdict(int),
           "kernels": defaultdict(int)}
    for corr, ks in replays(trace_events):
        best, best_n, best_cap = best_capture([n for n, _ in ks], caps)
        if best is None or best_n < 0.9 * len(ks):
            res["replays"].append((corr, len(ks), 0))
            continue
        res["replays"].append((corr, len(ks), best_n))
        for (name, d), k in zip(ks, best):
            if k < 0:
                continue
            _, op, mod = best_cap[k]
            res["ops"][op] += d
            if mod:
                res["modules"][mod] += d
            res["kernels"][name] += d
    return res


GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")


def group_keys(events):
    """{id(event): (name, shape, stack)} for every CPU event with args "Input Dims" (the ops
    grouped by input shape); shape: the dims as canonical JSON; stack: the "Call stack" arg when
    it is a non-empty string, else the names of the python_function events enclosing the op on
    its thread, innermost first, joined by "; " (None when there are none). Enclosing: starting
    no later and ending no earlier (at the same start, the longer first, then file order); a
    frame that ended before the op did does not enclose it, even when a longer event left open
    around both makes the trace look nested."""
    threads = defaultdict(list)
    for i, e in enumerate(events):
        if e.get("ph") == "X" and e.get("cat") not in GPU_CATS:
            t0 = ns(e["ts"])
            threads[(e.get("pid"), e.get("tid"))].append((t0, -ns(e.get("dur", 0)), i, e))
    out = {}
    for evs in threads.values():
        evs.sort(key=lambda x: x[:3])
        frames = []  # (start, end, name) of the python_function events started so far
        for t0, neg, _, e in evs:
            t1 = t0 - neg
            a = e.get("args") or {}
            if "Input Dims" in a:
                cs = a.get("Call stack")
                if isinstance(cs, str) and cs:
                    stack = cs
                else:
                    frames = [f for f in frames if f[1] >= t0]
                    stack = "; ".join(f[2] for f in reversed(frames)
                                      if f[1] >= t1 and (f[1] != t0 or f[0] == t0)) or None
                out[id(e)] = (e["name"], json.dumps(a["Input Dims"]), stack)
            if e.get("cat") == "python_function":
                frames.append((t0, t1, e["name"]))
    return out


def eager_groups(events):
    """({(name, shape): [calls, host ns]}, {(name, shape, stack): [calls, host ns]}) over the
    trace's own ops: `ops`' groups by input shape and by call stack, before any replay."""
    shape, stack = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    by_id = {id(e): e for e in events}
    for i, (name, dims, st) in group_keys(events).items():
        d = ns(by_id[i].get("dur", 0))
        for key, m in (((name, dims), shape), ((name, dims, st), stack)):
            if key[-1] is None:
                continue
            m[key][0] += 1
            m[key][1] += d
    return dict(shape), dict(stack)


def attribute_groups(trace_events, capture_files):
    """The replayed GPU time `ops`' groups gain, as if the graphs had run eagerly:
    ({(name, shape): ns}, {(name, shape, stack): ns}), each matched replayed kernel (capture-order
    match as in attribute()) charged to the group of the op that launched it in the capture pass
    (its name, input shapes and call stack there, by group_keys). capture_files: one event list
    per capture trace file; replayed kernels of an op without input shapes are in no group."""
    keys = {}
    for events in capture_files:
        keys.update(group_keys(events))
    caps = captures([e for events in capture_files for e in events], op_events=True)
    shape, stack = defaultdict(int), defaultdict(int)
    for corr, ks in replays(trace_events):
        best, best_n, best_cap = best_capture([n for n, _ in ks], caps)
        if best is None or best_n < 0.9 * len(ks):
            continue
        for (name, d), k in zip(ks, best):
            ev = best_cap[k][3] if k >= 0 else None
            key = keys.get(id(ev)) if ev is not None else None
            if key is None:
                continue
            shape[key[:2]] += d
            if key[2] is not None:
                stack[key] += d
    return dict(shape), dict(stack)


def load_capture_files(capdir):
    """load_capture_dir's events, one list per trace file (each file is its own trace)."""
    files = [f for f in glob.glob(os.path.join(capdir, "*.json*"))
             if not f.endswith("execution_details.json")]
    return [load(f) for f in files]


def gpu_work_ns(events):
    """Summed duration of every kernel, memcpy and memset (what ops' device self divides)."""
    return sum(ns(e["ts"] + e["dur"]) - ns(e["ts"]) for e in events
               if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
               and (e.get("args") or {}).get("correlation") is not None)
