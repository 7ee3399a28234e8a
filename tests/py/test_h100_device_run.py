"""What the H100 run showed (issue 31), kept checked without a GPU.

tests/data/h100/ holds what scripts/gpu_check.sh recorded on an NVIDIA H100 80GB HBM3 (driver
580.159.04, CUDA 13.0, PyTorch 2.11.0+cu130): two `mlprof run --gpu` captures, torch.profiler
traces of a 3-layer bf16 transformer training step eager / torch.compile / reduce-overhead, a CUDA
memory snapshot, the compiled run's TORCH_TRACE log, and (device_run/) what the programs measured
themselves. Expected values come from the programs' own numbers (CUDA events, counts they launched,
torch.cuda.memory_allocated) or from tests/py/h100_reference.py over the same files.
"""
import collections
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
DATA = os.path.join(sys.argv[2], "h100")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import h100_reference as ref  # noqa: E402
from checks import check, finish  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "check_run", os.path.join(HERE, "..", "..", "scripts", "gpu", "check_run.py"))
check_run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_run)


def path(name):
    return os.path.join(DATA, name)


def device(name):
    with open(path(os.path.join("device_run", name))) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def mlprof_json(*args):
    r = subprocess.run([MLPROF, *args, "--json"], capture_output=True, text=True)
    check(r.returncode == 0, f"mlprof {' '.join(args)} --json: exit {r.returncode} {r.stderr[:300]}")
    return json.loads(r.stdout) if r.returncode == 0 else {}


def export_json(capture, tmp):
    out = os.path.join(tmp, os.path.basename(capture) + ".json")
    r = subprocess.run([MLPROF, "export", capture, "-o", out], capture_output=True, text=True)
    check(r.returncode == 0, f"export {capture}: {r.stderr[:200]}")
    return check_run.load(out)


tmp = tempfile.mkdtemp()

# 1. The CUDA example under `mlprof run --gpu --memory`: the capture against the program.
expect = device("cuda_vector_add_expect.json")
ev = export_json(path("h100_cuda_vector_add.mlprof"), tmp)
kern, other = check_run.gpu_events(ev)
names = collections.Counter(check_run.short(e["name"]) for e in kern)
for k, n in expect["kernels"].items():
    check(names[k] == n, f"cuda: {k} kernels captured {names[k]}, the program launched {n}")
memcpy = collections.Counter(e["name"] for e in other if e.get("cat") == "gpu_memcpy")
check(sum(n for k, n in memcpy.items() if "HtoD" in k) == expect["memcpy_htod"], "cuda: memcpy HtoD count")
check(sum(n for k, n in memcpy.items() if "DtoH" in k) == expect["memcpy_dtoh"], "cuda: memcpy DtoH count")
check(sum(1 for e in other if e.get("cat") == "gpu_memset") == expect["memsets"], "cuda: memset count")
loop = [e for e in kern if check_run.short(e["name"]) in expect["kernels"]]
span_ms = (max(e["ts"] + e["dur"] for e in loop) - min(e["ts"] for e in loop)) / 1e3
# The program's CUDA events bracket the 40 kernels: 0.799 ms in the plain run (1.02 ms in the
# captured one, CUPTI's cost): the captured kernels' span fits inside, within 20%.
ev_ms = expect["loop_ms"]
check(0.8 * ev_ms <= span_ms <= ev_ms, f"cuda: kernel loop span {span_ms:.3f} ms within the events' {ev_ms} ms")
# Every launch is linked to its GPU work (45 = 40 kernels + 4 memcpys + 1 memset).
flows = sum(1 for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g")
check(flows == sum(expect["kernels"].values()) + 5, f"cuda: launch->GPU links {flows}")
kj = mlprof_json("kernels", path("h100_cuda_vector_add.mlprof"))
kcount = {check_run.short(r["name"]): r["count"] for r in kj.get("kernels", [])}
check(kcount.get("vector_add") == 20 and kcount.get("scale") == 20, f"cuda: kernels --json counts {kcount}")
launch = [r for r in kj.get("kernels", []) if check_run.short(r["name"]) == "vector_add"]
check(launch and launch[0]["launch"]["grid"] == [expect["grid"], 1, 1] and
      launch[0]["launch"]["block"] == [expect["block"], 1, 1], "cuda: grid/block as launched")
# NVML: the Chrome export keeps the GPU counters (they were dropped: their process has no track).
series = collections.defaultdict(list)
for e in ev:
    if e.get("ph") == "C":
        series[e["name"]].append(e["args"]["value"])
nvml = {k: v for k, v in series.items() if k.startswith("GPU 0 ")}
check(len(nvml) >= 4, f"cuda: NVML series in the Chrome export: {sorted(nvml)}")
for k, v in nvml.items():
    if "utilization" in k:
        check(0 <= min(v) and max(v) <= 100, f"cuda: {k} within 0..100")
    if "power" in k:
        check(20 <= min(v) and max(v) <= 800, f"cuda: {k} {min(v)}..{max(v)} W plausible for an H100")

# 2. The transformer step under `mlprof run --gpu` (kernels within 1-2% of torch.profiler's), cut into steps by the program's 100 ms
# gaps, against its CUDA events and torch.profiler's trace of the same program.
res = device("h100_torch_eager_result.json")
cap = export_json(path("h100_torch_eager.mlprof"), tmp)
ck, _ = check_run.gpu_events(cap)
bursts = check_run.bursts(ck, 30_000)[-res["steps"]:]
counts = [len(b) for b in bursts]
check(counts[1:] == [208] * (res["steps"] - 1), f"torch: kernels per step after the first {counts}")
for i, b in enumerate(bursts[1:], 1):
    span = (max(e["ts"] + e["dur"] for e in b) - b[0]["ts"]) / 1e3
    ev_ms = res["step_gpu_ms"][i]
    check(0.85 * ev_ms <= span <= ev_ms, f"torch: step {i} kernel span {span:.3f} ms within CUDA events {ev_ms:.3f} ms")
prof = check_run.load(path("h100_eager_gaps.json.gz"))
pk = [e for e in prof if e.get("ph") == "X" and e.get("cat") == "kernel"]
launch_ts = {e["args"].get("correlation"): e["ts"] for e in prof
             if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")}
marks = [e for e in prof if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")
         and e.get("cat") != "gpu_user_annotation"]
for m in marks:
    inside = [k for k in pk if m["ts"] <= launch_ts.get(k["args"].get("correlation"), -1) <= m["ts"] + m["dur"]]
    by_name = collections.Counter(check_run.short(k["name"]) for k in inside)
    cap_names = collections.Counter(check_run.short(k["name"]) for k in bursts[-1])
    check(by_name == cap_names, f"torch: {m['name']}: torch.profiler's kernels by name equal the capture's ({len(inside)})")

# Kernel durations: the capture's per-step kernel time and each kernel's mean against
# torch.profiler's (two runs of the same program: 2,491.9 vs 2,486.0 us per step on the H100).
cap_d, prof_d = collections.defaultdict(list), collections.defaultdict(list)
for b in bursts[1:]:
    for e in b:
        cap_d[check_run.short(e["name"])].append(e["dur"])
for k in pk:
    prof_d[check_run.short(k["name"])].append(k["dur"])
cap_step = sum(map(sum, cap_d.values())) / len(bursts[1:])
prof_step = sum(map(sum, prof_d.values())) / max(1, len(marks))
check(abs(cap_step - prof_step) <= 0.02 * prof_step,
      f"torch: kernel time per step {cap_step:.1f} us (capture) vs {prof_step:.1f} us (torch.profiler)")
far = {k: (round(sum(v) / len(v), 2), round(sum(prof_d[k]) / len(prof_d[k]), 2)) for k, v in cap_d.items()
       if prof_d[k] and sum(prof_d[k]) / len(prof_d[k]) >= 5 and
       abs(sum(v) / len(v) - sum(prof_d[k]) / len(prof_d[k])) > 0.10 * sum(prof_d[k]) / len(prof_d[k])}
check(not far, f"torch: every kernel's mean duration within 10% of torch.profiler's; off: {far}")

# 3. Eager trace: GPU time per op (the op whose own launch started the kernel) as computed here.
ns, count, api = ref.device_time_by_op(path("h100_eager.json.gz"))
ops = {r["name"]: r for r in mlprof_json("ops", path("h100_eager.json.gz")).get("ops", [])}
bad = [(n, v, ops.get(n, {}).get("device_self_ns")) for n, v in ns.items()
       if abs(ops.get(n, {}).get("device_self_ns", -1) - v) > 2 * count[n]]
check(not bad, f"eager: device_self_ns of {len(ns)} ops equal the reference's; differ: {bad[:4]}")
kj = mlprof_json("kernels", path("h100_eager.json.gz"))
got = collections.Counter({r["name"]: r["count"] for r in kj.get("kernels", []) if r.get("kind") == "kernel"})
want = ref.kernels_by_name(path("h100_eager.json.gz"))
check(got == want, f"eager: kernel counts by name ({sum(want.values())} kernels, {len(want)} names)")

# 4. reduce-overhead: the kernels of each CUDA graph replay belong to the op that called
# cudaGraphLaunch (PyTorch 2.11's Kineto puts no graph id on them: correlation only).
ns, count, api = ref.device_time_by_op(path("h100_graphs.json.gz"))
check(api["cudaGraphLaunch"] == 328, f"graphs: GPU events started by cudaGraphLaunch: {api['cudaGraphLaunch']}")
check(count["CompiledFunction"] + count["CompiledFunctionBackward"] == 328,
      "graphs: the graph replays' GPU events belong to CompiledFunction / CompiledFunctionBackward")
ops = {r["name"]: r for r in mlprof_json("ops", path("h100_graphs.json.gz")).get("ops", [])}
bad = [(n[:60], v, ops.get(n, {}).get("device_self_ns")) for n, v in ns.items()
       if abs(ops.get(n, {}).get("device_self_ns", -1) - v) > 2 * count[n]]
check(not bad, f"graphs: device_self_ns of {len(ns)} ops (graph replays included) equal the reference's; differ: {bad[:4]}")
bj = mlprof_json("bottlenecks", path("h100_graphs.json.gz"))
launch_findings = [f for f in bj.get("findings", []) if f.get("rule") == "gpu_launch_overhead"]
for f in launch_findings:
    text = (f.get("recommendation", "") + " " + f.get("do", "")).lower()
    check("already" in text and "graph" in text,
          f"graphs: the launch finding knows the step already replays CUDA graphs: {text[:160]}")

# The advice's price against a real after: on the eager trace the launch finding, priced by the
# step replay, says CUDA graphs save X% of the step; the same program under
# torch.compile(mode="reduce-overhead"), profiled the same way, took Y% less per ProfilerStep
# (measured here from both traces' ProfilerStep ranges).
def step_ms(name):
    ev = check_run.load(path(name))
    d = [e["dur"] for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")
         and e.get("cat") != "gpu_user_annotation"]
    return sum(d) / len(d) / 1e3


eager_ms, graphs_ms = step_ms("h100_eager.json.gz"), step_ms("h100_graphs.json.gz")
measured = 100 * (eager_ms - graphs_ms) / eager_ms
ej = mlprof_json("bottlenecks", path("h100_eager.json.gz"))
launch = [f for f in ej.get("findings", []) if f.get("kind") == "gpu_launch_overhead"]
predicted = 100 * launch[0]["est_savings_ns"] / ej["basis_ns"] if launch else -1
check(launch and launch[0].get("priced_by") == "replay" and abs(predicted - measured) <= 5,
      f"advice: CUDA graphs priced at {predicted:.1f}% of the eager step; reduce-overhead measured "
      f"{measured:.1f}% ({eager_ms:.2f} -> {graphs_ms:.2f} ms per ProfilerStep)")

# 5. torch.compile: compiled regions' GPU work as computed here, and the TORCH_TRACE log.
cj = mlprof_json("compile", path("h100_compile.json.gz"))
regions = {r["name"]: r for r in (cj.get("runtime") or {}).get("regions", [])}
for name, want in ref.compiled_regions(path("h100_compile.json.gz")).items():
    got = regions.get(name, {})
    check(got.get("calls") == want["calls"] and got.get("gpu_events") == want["gpu_events"] and
          got.get("triton_kernels") == want["triton_kernels"] and
          abs(got.get("gpu_busy_ns", -1) - want["gpu_busy_ns"]) <= 2 * want["gpu_events"],
          f"compile: {name[:40]}: {want} vs mlprof {{calls {got.get('calls')}, gpu_events {got.get('gpu_events')}, "
          f"triton {got.get('triton_kernels')}, busy {got.get('gpu_busy_ns')}}}")
log = ref.torch_trace_log(path("h100_compile_torch_trace.log.gz"))
lj = mlprof_json("compile", path("h100_compile_torch_trace.log.gz"))
ids = sorted(c.get("id", "").strip("[]") for c in lj.get("compiles", []))
check(ids == log["compile_ids"], f"compile log: compile ids {ids} == {log['compile_ids']}")
check(all(c.get("status") == "ok" for c in lj.get("compiles", [])), "compile log: every compile ok")
check(not lj.get("graph_breaks") and not lj.get("recompiles"), "compile log: no graph breaks, no recompiles")

# 6. The memory snapshot: the dump against the program's own torch.cuda.memory_allocated(), and
# the active-memory replay against the reference's.
snap = device("h100_snapshot_result.json")
mj = mlprof_json("memory", path("h100_eager_snapshot.pickle.gz"))
want = ref.snapshot(path("h100_eager_snapshot.pickle.gz"))
check(mj.get("allocated_bytes") == snap["memory_allocated_end"] == want["allocated_bytes"],
      f"snapshot: allocated {mj.get('allocated_bytes')} == program's memory_allocated() {snap['memory_allocated_end']}")
check(mj.get("reserved_bytes") == want["reserved_bytes"], "snapshot: reserved bytes")
dev = (mj.get("devices") or [{}])[0]
for k in ("start_active_bytes", "peak_active_bytes", "end_active_bytes", "blocks_not_in_trace"):
    check(dev.get(k) == want[k], f"snapshot: {k} {dev.get(k)} == {want[k]}")
# The replay counts requested bytes (memory_viz's unit); the program's max_memory_allocated()
# counts the allocator's rounded blocks: within 0.5% here.
check(abs(want["peak_active_bytes"] - snap["max_memory_allocated"]) <= 0.005 * snap["max_memory_allocated"],
      f"snapshot: replayed peak {want['peak_active_bytes']} near max_memory_allocated {snap['max_memory_allocated']}")
sites = [r.get("site", r.get("frame", "")) for r in mj.get("live_by_site", [])]
check(sites and not any("unwind" in s or "CapturedTraceback" in s for s in sites),
      f"snapshot: allocation sites skip PyTorch's own unwinder frames: {sites[:3]}")

finish()
