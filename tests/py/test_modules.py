"""`mlprof modules --json` against ../shared/traces/modules: EXPECTED.json (TraceLens's asserted
GPU time of nn.Module: Qwen3Model_0, module counts, roots) and an independent computation here:
the module tree from Python parent ids, each path's calls, and each module call's GPU time as
the union of the GPU events correlated with runtime calls on its thread inside its span.
Also tb_plugin's hand-sized module trace, and a trace without modules (a clear message)."""
import gzip
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

MLPROF, DATA = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require, shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

DIR = os.path.dirname(require("traces/modules/EXPECTED.json"))


def run_json(*args):
    p = subprocess.run([MLPROF, *args, "--json"], capture_output=True)
    if p.returncode != 0:
        check(False, f"{args}: exit {p.returncode}: {p.stderr.decode()[:300]}")
        return None
    return json.loads(p.stdout)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def union(iv):
    iv.sort()
    total, end = 0.0, None
    start = None
    for b, e in iv:
        if end is None or b > end:
            if end is not None:
                total += end - start
            start, end = b, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


class ModuleTree:
    """The nn.Module calls of a Kineto trace: parents through Python parent id, paths, and the
    GPU time each call launched (runtime calls inside it, their kernels/copies by correlation)."""

    def __init__(self, events):
        self.py = [e for e in events if e.get("ph") == "X" and e.get("cat") == "python_function"]
        self.by_id = {e["args"]["Python id"]: e for e in self.py if "Python id" in e.get("args", {})}
        self.mods = [e for e in self.py if e["name"].startswith("nn.Module: ")]
        self.autograd_tids = {(e["pid"], e["tid"]) for e in events
                              if e.get("ph") == "X" and e.get("name", "").startswith("autograd::engine::evaluate_function")}
        self.runtime = defaultdict(list)  # (pid, tid) -> [(ts, correlation)]
        self.gpu = defaultdict(list)      # correlation -> [(ts, end)]
        for e in events:
            c = e.get("args", {}).get("correlation") if e.get("ph") == "X" else None
            if c is None:
                continue
            if e.get("cat") in ("cuda_runtime", "cuda_driver"):
                self.runtime[(e["pid"], e["tid"])].append((e["ts"], c))
            elif e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                self.gpu[c].append((e["ts"], e["ts"] + e["dur"]))
        self._path = {}

    def parent_module(self, e):
        cur = e
        for _ in range(100000):
            pid = cur.get("args", {}).get("Python parent id")
            if pid is None or pid not in self.by_id or self.by_id[pid] is cur:
                return None
            cur = self.by_id[pid]
            if cur["name"].startswith("nn.Module: "):
                return cur
        return None

    def on_autograd_thread(self, e):
        return (e["pid"], e["tid"]) in self.autograd_tids

    def path_of(self, e):
        k = id(e)
        if k not in self._path:
            p = self.parent_module(e)
            name = e["name"][len("nn.Module: "):]
            if p is not None:
                self._path[k] = self.path_of(p) + "/" + name
            else:
                self._path[k] = ("[recompute] " if self.on_autograd_thread(e) else "") + name
        return self._path[k]

    def gpu_us(self, m):
        iv = []
        for ts, c in self.runtime[(m["pid"], m["tid"])]:
            if m["ts"] <= ts <= m["ts"] + m["dur"]:
                iv.extend(self.gpu.get(c, []))
        return union(iv)


def reference(events):
    """path -> [calls, gpu_us_sum]; module parent via Python parent id."""
    tree = ModuleTree(events)
    out = defaultdict(lambda: [0, 0.0])
    for m in tree.mods:
        p = tree.path_of(m)
        out[p][0] += 1
        out[p][1] += tree.gpu_us(m)
    return out, len(tree.mods)


def shared_reference(events):
    """name -> (calls, call sites, GPU us) of module instances called from several parent paths:
    a call site is the parent path of a forward call (a recompute on the autograd thread runs
    the same site again), and a call nested in a call of the same name adds no time (its GPU
    events are inside the outer call's)."""
    tree = ModuleTree(events)
    calls, sites, time = defaultdict(int), defaultdict(set), defaultdict(float)
    for m in tree.mods:
        name = m["name"][len("nn.Module: "):]
        calls[name] += 1
        p = tree.parent_module(m)
        if not tree.on_autograd_thread(m):
            sites[name].add(tree.path_of(p) if p is not None else None)
        nested = False
        while p is not None and not nested:
            nested = p["name"] == m["name"]
            p = tree.parent_module(p)
        if not nested:
            time[name] += tree.gpu_us(m)
    return {n: (calls[n], len(sites[n]), time[n]) for n in calls if len(sites[n]) > 1}


def check_shared(label, path, got):
    ref = shared_reference(load(path))
    listed = {m["name"]: m for m in got["shared"]}
    check(len(listed) == min(20, len(ref)) and set(listed) <= set(ref),
          f"{label}: shared modules {sorted(set(listed) ^ set(ref))[:5]}")
    for n, m in listed.items():
        calls, sites, us = ref.get(n, (0, 0, 0))
        check(m["calls"] == calls and m["call_sites"] == sites and abs(m["gpu_ns"] - us * 1000) <= calls + 2,
              f"{label}: shared {n}: {m} vs calls {calls}, sites {sites}, GPU {us} us")
        check(m["gpu_ns"] <= got["gpu_total_ns"], f"{label}: shared {n} GPU {m['gpu_ns']} within the trace's {got['gpu_total_ns']}")


# "% step" (issue 27): the step model's iterations, found here from the annotations
# (ProfilerStep#N > vLLM execute_*), independent of mlprof. ProfilerStep#: their host time (as
# before); vLLM iterations on a GPU trace: their GPU windows, the TensorBoard plugin's rule (from
# max(host start, previous window's end) to max(host end, end of the GPU work launched by runtime
# calls inside the host window); the first starts after earlier GPU work that ends before its
# own); no iterations: the trace span.
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
VLLM = re.compile(r"^execute_(\d+_context_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)_generation_\d+\(sq\d+sk\d+sqsq\d+sqsk\d+\)"
                  r"|context_\d+\([\d_]+\)_generation_\d+\([\d_]+\))$")


def gpu_windows_ns(events, host):
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    by_corr = defaultdict(list)
    for g in gpu:
        by_corr[g.get("args", {}).get("correlation")].append(g)
    rt = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")),
                key=lambda e: e["ts"])
    launched = []
    for hs, he in host:
        mine = [g for r in rt if r["ts"] >= hs and r["ts"] + r["dur"] <= he
                for g in by_corr.get(r.get("args", {}).get("correlation"), [])]
        launched.append(mine)
    prev = host[0][0]
    if launched[0]:
        first = min(g["ts"] for g in launched[0])
        ids = {id(g) for m in launched for g in m}
        prev = max([prev] + [g["ts"] + g["dur"] for g in gpu if id(g) not in ids and g["ts"] + g["dur"] < first])
    total = 0.0
    for (hs, he), mine in zip(host, launched):
        b = max(prev, hs)
        e = max(he, max((g["ts"] + g["dur"] for g in mine), default=he), b)
        total += e - b
        prev = e
    return round(total * 1000)


def check_step_time(name, path, events, got, profiler_steps=None):
    gpu = any(e.get("cat") in GPU_CATS for e in events)
    gpu_pids = {e["pid"] for e in events if e.get("cat") in GPU_CATS}
    host = [e for e in events if e.get("ph") == "X" and e.get("cat") not in GPU_CATS
            and e.get("cat") != "gpu_user_annotation" and e["pid"] not in gpu_pids]
    steps = [e for e in host if str(e.get("name", "")).startswith("ProfilerStep#")]
    if profiler_steps is not None:
        check(len(steps) == len(profiler_steps), f"{name}: ProfilerStep# count {len(steps)} vs EXPECTED.json")
    vllm = sorted((e for e in host if VLLM.match(str(e.get("name", "")))), key=lambda e: e["ts"])
    if steps:
        want = ("profiler_step", "host", len(steps), sum(round(float(e["dur"]) * 1000) for e in steps))
        text = f"{len(steps)} ProfilerStep{'s' if len(steps) > 1 else ''} "
    elif vllm and gpu:
        want = ("vllm", "gpu", len(vllm), gpu_windows_ns(events, [(e["ts"], e["ts"] + e["dur"]) for e in vllm]))
        text = f"{len(vllm)} vLLM iteration{'s' if len(vllm) > 1 else ''}, GPU windows "
    elif vllm:
        want = ("vllm", "host", len(vllm), sum(round(float(e["dur"]) * 1000) for e in vllm))
        text = f"{len(vllm)} vLLM iteration{'s' if len(vllm) > 1 else ''} "
    else:
        want = ("none", "span", 0, None)
        text = "trace span "
    have = (got.get("step_source"), got.get("step_window"), got.get("steps"))
    check(have == want[:3], f"{name}: step source/window/count {have} vs {want[:3]}")
    if want[3] is not None:
        check(abs(got["step_ns"] - want[3]) <= 2 * max(1, want[2]), f"{name}: step time {got['step_ns']} vs {want[3]}")
    # Each row's share divides by it: GPU time on a GPU trace, else host time.
    for r in got["rows"][:50]:
        t = r["gpu_ns"] if got["has_gpu"] else r["host_ns"]
        check(abs(r["step_share"] - t / got["step_ns"]) < 1e-9, f"{name}: {r['path']} share {r['step_share']}")
    p = subprocess.run([MLPROF, "modules", path], capture_output=True, text=True)
    second = p.stdout.splitlines()[1] if p.stdout.count("\n") > 1 else ""
    check(second.startswith(text), f"{name}: text says {second!r}, want it to start with {text!r}")
    # ... and which time it divides: GPU time on a trace with GPU events (counted here).
    check(f"% step = {'GPU' if gpu else 'host'} time / " in second, f"{name}: % step numerator in {second!r}")
    return p


exp = json.load(open(os.path.join(DIR, "EXPECTED.json")))
for name, f in exp["files"].items():
    path = os.path.join(DIR, name)
    got = run_json("modules", path)
    if got is None:
        continue
    check(got["module_events"] == f["nn_module_events"], f"{name}: module events {got['module_events']}")
    check(got["max_depth"] + 1 == f["max_module_nesting_depth"] or got["max_depth"] == f["max_module_nesting_depth"],
          f"{name}: depth {got['max_depth']}")
    rows = {r["path"]: r for r in got["rows"]}
    by_class = defaultdict(int)
    for r in got["rows"]:
        by_class[r["class"]] += r["calls"]
    check(dict(by_class) == f["nn_module_events_by_class"], f"{name}: calls by class")
    events = load(path)
    ref, n = reference(events)
    p = check_step_time(name, path, events, got, f["profiler_steps"])
    # The rankings name modules whole: each part of a label ("Block_3/../Leaf_3") is a module of
    # the trace (they were cut in the middle, "Qwen3DecoderLayer...ParallelLinear_15").
    names = {e["name"][len("nn.Module: "):] for e in events if str(e.get("name", "")).startswith("nn.Module: ")}
    for title in ("slowest by", "most variable"):
        block = p.stdout.split(title, 1)[1].split("\n\n")[0].splitlines()[2:] if title in p.stdout else []
        labels = [re.split(r"\s{2,}", l.strip())[0].replace("[recompute] ", "") for l in block]
        bad = [x for x in labels if not all(part in names for part in x.split("/") if part != "..")]
        check(not bad and (labels or title != "slowest by"), f"{name}: {title} labels not whole module names: {bad[:3]}")
    check(n == got["module_events"], f"{name}: reference module count")
    check(set(ref) == set(rows), f"{name}: paths differ: {sorted(set(ref) ^ set(rows))[:5]}")
    # mlprof keeps integer ns per event: up to 1 ns of rounding per GPU event.
    bad = [p for p in ref if p in rows and (ref[p][0] != rows[p]["calls"] or
                                            abs(ref[p][1] * 1000 - rows[p]["gpu_ns"]) > rows[p]["gpu_events"] + 2)]
    check(not bad, f"{name}: {len(bad)} paths differ in calls/GPU time, e.g. {bad[:3]}")
    roots = defaultdict(lambda: [0.0, 0])  # root calls of one name summed (one per step)
    for root in f["root_modules"]:
        roots[root["name"][len("nn.Module: "):]][0] += root["gpu_busy_us"]
        roots[root["name"][len("nn.Module: "):]][1] += root["gpu_events_launched"]
    top = {r["name"]: r for r in got["rows"] if r["parent"] < 0}
    check(sorted(top) == sorted(roots), f"{name}: roots {sorted(top)}")
    for rn, (us, events) in roots.items():
        r = top.get(rn)
        check(r is not None and abs(r["gpu_ns"] - us * 1000) <= events + 2, f"{name}: root {rn} GPU")
        check(r is not None and r["gpu_events"] == events, f"{name}: root {rn} events")

# TraceLens's assertion (tests/test_treeperf.py::test_build_nn_module_latency_tree).
ta = exp["tracelens_asserted"]["mi300_sglang_Qwen3-8B_prefilldecode.json.gz"]
got = run_json("modules", os.path.join(DIR, "mi300_sglang_Qwen3-8B_prefilldecode.json.gz"))
if got:
    rows = {r["path"]: r for r in got["rows"]}
    root = rows["Qwen3Model_0"]
    check(abs(root["gpu_ns"] - ta["root_GPU_Time"] * 1000) <= root["gpu_events"], f"Qwen3Model_0 GPU {root['gpu_ns']}")
    kids = [r for r in got["rows"] if r["parent"] >= 0 and got["rows"][r["parent"]]["path"] == "Qwen3Model_0"
            and r["name"].startswith("Qwen3DecoderLayer_")]
    check(len(kids) == ta["root_children_named_Qwen3DecoderLayer_"], f"decoder layers {len(kids)}")
    attn = rows["Qwen3Model_0/Qwen3DecoderLayer_0/Qwen3Attention_0"]
    check(attn["gpu_ns"] > 0 and attn["gpu_self_ns"] > 0, "Qwen3Attention_0 has its own GPU time")
    shared = {s["name"]: s for s in got["shared"]}
    check(shared.get("RotaryEmbedding_0", {}).get("calls") == 36, "RotaryEmbedding_0 shared x36")

# Activation checkpointing: recomputed stages on the autograd thread, per-step DDP GPU time.
got = run_json("modules", os.path.join(DIR, "mi300_resnet_act_checkpoint.json.gz"))
if got:
    check(got["recompute_events"] == 207, f"recompute events {got['recompute_events']}")
    rows = {r["path"]: r for r in got["rows"]}
    ddp = rows["DistributedDataParallel_0"]
    check(ddp["calls"] == 3 and abs(ddp["gpu_ns"] - (2169.23 + 2144.708 + 2187.558) * 1000) <= ddp["gpu_events"],
          f"DDP GPU per README {ddp['gpu_ns']}")
    seq0 = rows["[recompute] Sequential_0"]
    check(seq0["calls"] == 3 and abs(seq0["gpu_ns"] - (421.792 + 422.352 + 437.394) * 1000) <= seq0["gpu_events"],
          "recomputed Sequential_0")

# Shared modules: the ResNet's forward + recompute is one call site (ReLU_N are not shared); vLLM's
# piecewise GraphModule_0 nested in itself counts its GPU time once (it read more than the trace's).
path = os.path.join(DIR, "mi300_resnet_act_checkpoint.json.gz")
if got:
    check(not [m["name"] for m in got["shared"] if re.fullmatch(r"ReLU_\d+", m["name"])],
          f"ResNet: no ReLU_N shared: {[m['name'] for m in got['shared']]}")
    check_shared("ResNet", path, got)
piecewise = shared_path("traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz")
if piecewise:
    got = run_json("modules", piecewise)
    if got:
        gm = {m["name"]: m for m in got["shared"]}.get("GraphModule_0")
        check(gm is not None and gm["gpu_ns"] <= got["gpu_total_ns"],
              f"vLLM piecewise: GraphModule_0 {gm} within the trace's GPU time {got['gpu_total_ns']}")
        check_shared("vLLM piecewise", piecewise, got)

# "% step" on serving and graph traces (issue 27): vLLM iterations by their GPU windows
# (piecewise: 307.7 ms, the host window is 26.4 ms), ProfilerStep# traces by their host time.
for rel in ("traces/serving/vllm_decode_full/graph_execution.json.gz",
            "traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz",
            "traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
            "traces/cuda-graphs/xdit_flux/profile_trace_rank_0.json.gz",
            "traces/cuda-graphs/xdit_flux/capture_traces/capture_trace_rank_0.json.gz"):
    path = shared_path(rel)
    got = run_json("modules", path) if path else None
    if got:
        check_step_time(rel, path, load(path), got)

# tb_plugin's unit module trace (7 module events) and a trace without modules.
tb = shared_path("peers/tb_plugin/unit/build_module_hierarchy.json")
if tb:
    got = run_json("modules", tb)
    if got:
        ref, n = reference(load(tb))
        check(got["module_events"] == n, f"tb_plugin: {got['module_events']} module events vs {n}")
        check({r["path"]: r["calls"] for r in got["rows"]} == {p: v[0] for p, v in ref.items()}, "tb_plugin: tree")
# A trace without modules: the analysis is unavailable (one object, no rows), saying how to
# record them; `analyze` leaves the section out.
got = run_json("modules", os.path.join(DATA, "mlp_bs64.json.gz"))
if got:
    check(list(got) == ["schema", "unavailable"] and "with_modules=True" in got["unavailable"], f"no-module: {got}")
text = subprocess.run([MLPROF, "analyze", os.path.join(DATA, "mlp_bs64.json.gz")], capture_output=True, text=True).stdout
check("== Modules" not in text and "== Summary" in text, "analyze leaves the Modules section out without modules")

finish()
