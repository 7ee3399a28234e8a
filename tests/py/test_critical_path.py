"""`mlprof critical-path --json` against Holistic Trace Analysis' own assertions on its test
traces (HTA tests/test_critical_path_analysis.py, traces in
../shared/traces/kineto-gpu/critical_path/), plus a hand-built trace whose critical path is
worked out below by hand."""
import json
import os
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402


def run_json(*args):
    p = subprocess.run([MLPROF, "critical-path", *args, "--json"], capture_output=True)
    if p.returncode != 0:
        check(False, f"{args}: exit {p.returncode}: {p.stderr.decode()[:300]}")
        return None
    return json.loads(p.stdout)


def one(folder):
    d = shared_path("traces/kineto-gpu/critical_path/" + folder)
    if d is None:
        return None
    return os.path.join(d, sorted(os.listdir(d))[0])


ANN = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
PARTS = ["cpu_bound", "gpu_compute_bound", "gpu_communication_bound",
         "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead"]

# test_critical_path_analysis: 315 nodes, 159 events, 314 edges on simple_add's path.
path = one("simple_add")
if path:
    got = run_json(path, "--annotation", ANN, "--instance", "1")
    if got:
        check((got["path_nodes"], got["path_events"], got["path_edges"]) == (315, 159, 314),
              f"simple_add: {got['path_nodes']} nodes, {got['path_events']} events, {got['path_edges']} edges")
        check(any(y["from"].startswith("void cutlass") or y["to"] == "cudaDeviceSynchronize" for y in got["syncs"]),
              "simple_add: device sync edge")
        check(sum(got["bound_by_ns"][p] for p in PARTS) == got["path_ns"], "simple_add: parts add up")
        # cudaMalloc dominates this path (HTA's test allocates in the measured loop): the advice
        # names the allocations with their share of the path, summed from the path's edges here.
        alloc = sum(e["ns"] for e in got["path"] if e["bound_by"] == "cpu_bound" and
                    e["event"].startswith(("cudaMalloc", "cudaFree")))
        share = f"{100 * alloc / got['path_ns']:.1f}%"
        recs = got.get("recommendations", [])
        check(alloc / got["path_ns"] > 0.5 and recs and recs[0].startswith("allocations on the critical path") and
              share in recs[0] and "caching allocator" in recs[0], f"simple_add: {share} in allocations, advice {recs}")
        text = subprocess.run([MLPROF, "critical-path", path, "--annotation", ANN, "--instance", "1"],
                              capture_output=True, text=True).stdout
        check("\nwhat to change\n  - allocations on the critical path" in text, "simple_add: text ends with what to change")
# ... and 149 nodes on AlexNet's (inter-stream sync with CUDA events); test_critical_path_breakdown:
# five kinds of edges on the path (cpu, gpu compute, launch, kernel-kernel, zero-weight).
path = one("alexnet")
if path:
    got = run_json(path, "--annotation", ANN, "--instance", "1")
    if got:
        check(got["path_nodes"] == 149, f"alexnet: {got['path_nodes']} path nodes")
        kinds = {p for p in PARTS if got["bound_by_ns"][p] > 0}
        check(kinds == {"cpu_bound", "gpu_compute_bound", "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead"},
              f"alexnet: kinds {kinds}")
        check(any(y["gpu_to_gpu"] and y["from"].startswith("void fft2d_c2r_32x32") for y in got["syncs"]),
              "alexnet: GPU->GPU sync from fft2d_c2r_32x32")
# test_critical_path_analysis_event_sync: spin_kernel -> cudaEventSynchronize and -> cudaDeviceSynchronize.
path = one("cuda_event_sync")
if path:
    got = run_json(path, "--annotation", "ProfilerStep")
    if got:
        pairs = {(y["from"], y["to"]) for y in got["syncs"]}
        spin = "at::cuda::(anonymous namespace)::spin_kernel(long)"
        check((spin, "cudaEventSynchronize") in pairs and (spin, "cudaDeviceSynchronize") in pairs,
              f"event sync edges {pairs}")
# test_critical_path_analysis_event_sync_multistream: kernel 1 (corr 27) -> Memset (Device).
path = one("cuda_event_sync_multi_stream")
if path:
    got = run_json(path, "--annotation", "")
    if got:
        check(any(y["gpu_to_gpu"] and y["from_correlation"] == 27 and y["to"] == "Memset (Device)"
                  for y in got["syncs"]), "multi-stream wait event edge")
# test_ns_resolution_trace: sub-microsecond trace, ProfilerStep instance 1 succeeds.
ns = shared_path("traces/kineto-gpu/ns_resolution_trace")
if ns:
    got = run_json(os.path.join(ns, sorted(os.listdir(ns))[0]), "--instance", "1")
    check(got is not None and "message" not in got and got["path_ns"] > 0, "ns resolution trace")

# By hand: thread 1 runs op A [0, 100] us containing cudaLaunchKernel [10, 20] (kernel K on
# stream 7 [30, 300]); then cudaDeviceSynchronize [100, 310] whose Context Sync ends at 309.
# Path: A.start -10-> launch.start -20-> K.start (launch delay) -270-> K.end: CPU 10, launch
# overhead 20, GPU 270, 300 us in all (the sync edge K.end -> sync end weighs 0).
ev = [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 400},
    {"ph": "X", "cat": "cpu_op", "name": "A", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 10,
     "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "K", "pid": 0, "tid": 7, "ts": 30, "dur": 270,
     "args": {"correlation": 1, "stream": 7, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1, "ts": 100, "dur": 210,
     "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1, "ts": 101, "dur": 208,
     "args": {"correlation": 2, "stream": -1, "device": 0}},
]
with tempfile.TemporaryDirectory() as tmp:
    p = os.path.join(tmp, "hand.json")
    json.dump({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "X"}]}, open(p, "w"))
    got = run_json(p)
    if got:
        b = got["bound_by_ns"]
        check(got["path_ns"] == 300_000, f"hand: path {got['path_ns']}")
        check(b["cpu_bound"] == 10_000 and b["gpu_kernel_launch_overhead"] == 20_000 and
              b["gpu_compute_bound"] == 270_000, f"hand: parts {b}")
        check(any(y["from"] == "K" and y["to"] == "cudaDeviceSynchronize" for y in got["syncs"]),
              "hand: the Context Sync edge K -> cudaDeviceSynchronize")
        # 270 of 300 us in the kernel: GPU compute-bound (90.0%), the only part over its threshold.
        recs = got.get("recommendations", [])
        check(len(recs) == 1 and recs[0].startswith("GPU compute-bound: kernels are 90.0% (270") and "K" in recs[0],
              f"hand: advice {recs}")
    # An annotation the trace lacks, asked for: bad input (exit 2), one line on stderr naming the
    # file and listing what it has (one step, no other annotation).
    r = subprocess.run([MLPROF, "critical-path", p, "--annotation", "NoSuchStep"], capture_output=True, text=True)
    check(r.returncode == 2 and r.stdout == "" and r.stderr ==
          f"mlprof: {p}: no instance 0 of an annotation matching 'NoSuchStep' (0 found; 1 step in the trace: #1; "
          "no annotations (record_function); --annotation \"\" takes the whole trace)\n",
          f"missing annotation: exit {r.returncode}, stderr {r.stderr!r}")
    # No ProfilerStep: the default window is missing, so the analysis is unavailable (exit 0, as
    # any analysis a trace lacks) and says which annotations there are to pick.
    q = os.path.join(tmp, "nostep.json")
    json.dump({"traceEvents": [dict(e, name="forward") if e["name"].startswith("ProfilerStep") else e for e in ev] +
               [{"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 1, "tid": 1, "ts": 500, "dur": 10}],
               "deviceProperties": [{"id": 0, "name": "X"}]}, open(q, "w"))
    got = run_json(q)
    check(got is not None and list(got) == ["schema", "unavailable"] and
          "no ProfilerStep in the trace; annotations: 'forward' x2;" in got["unavailable"], f"no step: {got}")
    got = run_json(q, "--annotation", "forward")
    check(got is not None and got.get("path_ns") == 300_000, "no step: --annotation forward analyzes the first")

finish()
