"""Independent Python (stdlib) computations of mlprof's CPU-side analyses, following the rules
written in docs/analysis.md: steps and their phase split, memory totals and never-freed
allocations, leak slopes, FLOPs from Input Dims. Shares only trace_reference's JSON reading."""
import json
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import trace_reference as ref  # noqa: E402


def nest(sl):
    """Parent index of each slice (same track, start order, longest first), and self times."""
    by_track = defaultdict(list)
    for i, s in enumerate(sl):
        by_track[s[0]].append(i)
    parent = [-1] * len(sl)
    order = []
    for idx in by_track.values():
        idx.sort(key=lambda i: (sl[i][1], -sl[i][2], i))
        stack = []
        for i in idx:
            ts = sl[i][1]
            while stack and sl[stack[-1]][1] + sl[stack[-1]][2] <= ts and sl[stack[-1]][1] != ts:
                stack.pop()
            if stack:
                parent[i] = stack[-1]
            stack.append(i)
            order.append(i)
    return parent, ref.self_times(sl), order


def is_step(name):
    if not name.startswith("ProfilerStep#"):
        return False
    return name[len("ProfilerStep#"):].isdigit()


COMM = ["nccl", "gloo", "c10d::", "all_reduce", "allreduce", "all_gather", "allgather",
        "reduce_scatter", "reducescatter", "all_to_all", "alltoall", "record_param_comms", "rccl",
        "hccl"]
PHASES = ["data_loading", "forward", "backward", "optimizer", "communication", "other"]


def phase_of(name):
    if is_step(name):
        return None
    l = name.lower()
    if any(m in l for m in COMM):
        return "communication"
    if "dataloader" in l or "data_load" in l or "dataset" in l:
        return "data_loading"
    if ("optimizer" in l or "zero_grad" in l or l in ("step", "optim")
            or (len(l) > 5 and l.endswith(".step"))):
        return "optimizer"
    if "backward" in l or "bwd" in l:
        return "backward"
    if ("forward" in l or "fwd" in l or l.startswith("nn.module:") or l == "compiledfunction"
            or l.startswith("torch-compiled region")):
        return "forward"
    return None


PRIORITY = ["communication", "data_loading", "optimizer", "backward", "forward"]


def steps(sl):
    """[(name, ts, dur, {phase: ns})] in time order. Each ns of a step goes to the highest-priority
    phase among the classified slices active at that time, else other: slices on the step's
    thread, and on the other threads of its process (autograd's engine threads) the top-level
    slices classified backward and the classified slices inside them."""
    parent, _, _ = nest(sl)

    def root(i):
        while parent[i] >= 0:
            i = parent[i]
        return i

    out = []
    step_idx = sorted((i for i, s in enumerate(sl) if is_step(s[3])), key=lambda i: (sl[i][1], i))
    last_end = None
    for si in step_idx:
        track, ts, dur = sl[si][0], sl[si][1], sl[si][2]
        if last_end is not None and ts < last_end:
            continue
        end = ts + dur
        last_end = end
        spans = []
        for i, s in enumerate(sl):
            if s[0] == track:
                ph = phase_of(s[3])
            elif s[0][0] == track[0] and phase_of(sl[root(i)][3]) == "backward":
                ph = phase_of(s[3])
            else:
                ph = None
            a, b = max(s[1], ts), min(s[1] + s[2], end)
            if ph is not None and b > a:
                spans.append((a, b, ph))
        cuts = sorted({ts, end} | {a for a, _, _ in spans} | {b for _, b, _ in spans})
        phases = dict.fromkeys(PHASES, 0)
        for a, b in zip(cuts, cuts[1:]):
            active = {ph for x, y, ph in spans if x <= a and y >= b}
            win = next((p for p in PRIORITY if p in active), "other")
            phases[win] += b - a
        out.append((sl[si][3], ts, dur, phases))
    return out


def memory_events(events):
    """[(ts_ns, addr, bytes, dev_type, dev_id, total_alloc or None)] in time order."""
    out = []
    for e in events:
        if e.get("name") != "[memory]" or e.get("ph") not in ("i", "I"):
            continue
        a = e.get("args", {})
        out.append((ref.ns(e["ts"]), int(a.get("Addr", 0)), int(a["Bytes"]), int(a.get("Device Type", 0)),
                    int(a.get("Device Id", -1)), a.get("Total Allocated")))
    out.sort(key=lambda m: m[0])
    return out


def theil_sen(y):
    slopes = sorted((y[j] - y[i]) / (j - i) for i in range(len(y)) for j in range(i + 1, len(y)))
    n = len(slopes)
    return slopes[n // 2] if n % 2 else (slopes[n // 2 - 1] + slopes[n // 2]) / 2


def mann_kendall_p(y):
    n = len(y)
    s = sum((y[j] > y[i]) - (y[j] < y[i]) for i in range(n) for j in range(i + 1, n))
    counts = defaultdict(int)
    for v in y:
        counts[v] += 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in counts.values())) / 18
    if var <= 0:
        return 1.0
    z = (s - 1) / math.sqrt(var) if s > 0 else ((s + 1) / math.sqrt(var) if s < 0 else 0)
    return math.erfc(abs(z) / math.sqrt(2))


def _ints(text, n, dflt):
    """A Concrete Inputs entry ("[2, 2]", "2", "") as n ints."""
    text = (text or "").strip()
    if not text:
        return [dflt] * n
    v = json.loads(text if text.startswith("[") else "[" + text + "]")
    return v * n if len(v) == 1 else v


def flop_count(name, dims, concrete=None, types=None):
    """FLOPs of one call following docs/roofline.md's table (TraceLens's PerfModel: a bias add
    is one FLOP per output element), or None. `concrete` gives a convolution's stride, padding,
    dilation and groups; without it the output is the input's size (stride 1, same padding)."""
    op = name[6:] if name.startswith("aten::") else name

    def prod(xs):
        p = 1
        for x in xs:
            p *= x
        return p

    def has(i):  # an optional tensor that was passed
        ok = i < len(dims) and bool(dims[i])
        if ok and types is not None:
            ok = i < len(types) and types[i] not in ("", "Scalar", "ScalarList")
        return ok

    def conc(i):
        return concrete[i] if concrete and i < len(concrete) else ""
    try:
        if op == "mm":
            (m, k), (_, n) = dims[0], dims[1]
            return 2 * m * k * n
        if op == "addmm":
            (m, k), (_, n) = dims[1], dims[2]
            return 2 * m * k * n + m * n
        if op == "linear":
            rows, (n, k) = prod(dims[0][:-1]), dims[1]
            return 2 * rows * n * k + (rows * n if has(2) else 0)
        if op == "bmm":
            (b, m, k), (_, _, n) = dims[0], dims[1]
            return 2 * b * m * k * n
        if op == "baddbmm":
            (b, m, k), (_, _, n) = dims[1], dims[2]
            return 2 * b * m * k * n + b * m * n
        if op in ("conv1d", "conv2d", "conv3d", "convolution", "_convolution", "mkldnn_convolution",
                  "cudnn_convolution"):
            x, w = dims[0], dims[1]
            nd = len(x) - 2
            if concrete:
                if op in ("convolution", "_convolution") and conc(6).strip() == "True":
                    return None  # transposed: not checked here
                pad = conc(4)
                same = "same" in pad
                s = _ints(conc(3), nd, 1)
                p = [0] * nd if same or "valid" in pad else _ints(pad, nd, 0)
                d = _ints(conc(5), nd, 1)
                out = [x[i + 2] if same else (x[i + 2] + 2 * p[i] - d[i] * (w[i + 2] - 1) - 1) // s[i] + 1
                       for i in range(nd)]
            else:
                out = x[2:]
            o = x[0] * w[0] * prod(out)
            return o * 2 * prod(w[1:]) + (o if has(2) else 0)
        if op == "convolution_backward":
            # grad input + grad weight (each 2 * |grad_out| * prod(w[1:])) + grad bias |grad_out|,
            # the output mask unrecorded (all three).
            g, w = dims[0], dims[2]
            return 2 * (2 * prod(g) * prod(w[1:])) + prod(g)
        if op == "matmul":
            a, b = list(dims[0]), list(dims[1])
            if len(a) == 1:
                a = [1] + a
            if len(b) == 1:
                b = b + [1]
            ba, bb = a[:-2], b[:-2]
            nb = max(len(ba), len(bb))
            ba = [1] * (nb - len(ba)) + ba
            bb = [1] * (nb - len(bb)) + bb
            return 2 * prod(max(x, y) for x, y in zip(ba, bb)) * a[-2] * a[-1] * b[-1]
    except (ValueError, IndexError, TypeError):
        return None
    return None


COUNTED = {"aten::mm", "aten::addmm", "aten::linear", "aten::bmm", "aten::baddbmm", "aten::matmul",
           "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution", "aten::_convolution",
           "aten::mkldnn_convolution", "aten::cudnn_convolution", "aten::convolution_backward",
           "aten::scaled_dot_product_attention"}


def flops_total(events):
    """Sum of FLOPs over outermost counted ops (an op inside a counted op is not counted)."""
    xs = [e for e in events if e.get("ph") == "X"]
    sl = [((str(e.get("pid")), str(e.get("tid"))), ref.ns(e["ts"]), max(0, ref.ns(e["dur"])),
           e.get("name", ""), e.get("cat", "")) for e in xs]
    parent, _, _ = nest(sl)
    total = 0
    per_op = defaultdict(int)
    for i, e in enumerate(xs):
        if sl[i][3] not in COUNTED:
            continue
        p, inside = parent[i], False
        while p >= 0:
            if sl[p][3] in COUNTED:
                inside = True
                break
            p = parent[p]
        if inside:
            continue
        dims = e.get("args", {}).get("Input Dims")
        args = e.get("args", {})
        f = flop_count(sl[i][3], dims, args.get("Concrete Inputs"),
                       args.get("Input type")) if dims is not None else None
        if f is not None:
            total += f
            per_op[sl[i][3]] += f
    return total, dict(per_op)


def run_json(mlprof, *args):
    import subprocess
    out = subprocess.run([mlprof, *args, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{args}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)
