"""Findings that read graph captures, and the replay's kernel what-if (issues 25, 27), on traces
generated here with tests/py/advice_eval_traces.py's builder; each truth is computed from the
trace's plan, not from mlprof.

1. A decode batch size without a captured graph, found from ONE trace: every vLLM decode
   iteration (batch 12) launches eagerly; the capture pass (--capture DIR, whose
   execution_details.json names batch sizes 8 and 16) captured graphs for other sizes. Without
   the capture pass nothing in the trace says a graph exists; with it, serving_batch_missed_graph
   is the top finding, and its saving is what replaying a graph in those iterations saves.
2. A capture pass gets no launch-overhead finding: its launches record a graph and run nothing.
   The same launch-bound trace with and without a Stream{Begin,End}Capture window around its
   launches: gpu_launch_overhead only without.
3. kernel_speedup_whatif: a device-bound trace on a device without known peaks; the top kernel
   2x faster shortens each step's GPU chain by half that kernel's time, which the host (launching
   far ahead, then waiting in a device sync) does not hide.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402
import advice_eval_traces as g  # noqa: E402

MLPROF = sys.argv[1]
out = tempfile.mkdtemp(prefix="mlprof_capture_advice_")


def bottlenecks(*args):
    return mlprof_json(MLPROF, "bottlenecks", *args)


def capture_trace(path, kernels):
    """A capture pass: cudaStreamBeginCapture, one launch per kernel naming it (args.kernel, as
    vLLM/ROCm captures do) inside an aten op, cudaStreamEndCapture; no kernel runs."""
    tr = g.Trace()
    tr.x("cuda_runtime", "cudaStreamBeginCapture", tr.t, 5)
    tr.t += 10
    for k in kernels:
        tr.x("cpu_op", "aten::mm", tr.t, 40, args={"External id": tr.ext})
        tr.x("cuda_runtime", "cudaLaunchKernel", tr.t + 20, 15, args={"kernel": k, "correlation": tr.corr})
        tr.corr += 1
        tr.ext += 1
        tr.t += 50
    tr.x("cuda_runtime", "cudaStreamEndCapture", tr.t, 5)
    tr.write(path)


# ---- 1. batch size with no captured graph, from one trace -----------------------------------
tr, truth = g.Trace(), 0
eager_kernel = "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_tn"


def eager():
    tr.host("vllm/v1/core/sched/scheduler.py(300): schedule", 20, cat="python_function")
    for _ in range(10):
        tr.launch("aten::mm", 60, 20, eager_kernel, 30)
    tr.device_sync()


for _ in range(g.STEPS):
    d = tr.iteration(g.vllm_decode(12), eager)
    # A graph replay: the scheduler's 20 us, the 10 kernels' 300 us back to back, the sync's
    # 3 us tail (advice_eval_traces.serving_batch_missed_graph's truth).
    truth += d - (20 + 300 + 3)
trace = os.path.join(out, "decode_b12.json")
tr.write(trace)
capdir = os.path.join(out, "capture_traces")
os.makedirs(capdir)
details = []
for b in (8, 16):
    f = "capture_bs%d.json" % b
    capture_trace(os.path.join(capdir, f), ["ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn"] * 10)
    details.append({"file": f, "batch_size": b, "mode": "FULL"})
with open(os.path.join(capdir, "execution_details.json"), "w") as fh:
    json.dump(details, fh)

plain = bottlenecks(trace)
check(not any(f["kind"] == "serving_batch_missed_graph" for f in plain["findings"]),
      "without the capture pass no finding says a graph exists for another batch size")
got = bottlenecks(trace, "--capture", capdir)
kinds = [f["kind"] for f in got["findings"]]
check(kinds[:1] == ["serving_batch_missed_graph"], f"with --capture the top finding is the missed graph: {kinds}")
miss = next((f for f in got["findings"] if f["kind"] == "serving_batch_missed_graph"), None)
if miss:
    check(abs(miss["est_savings_ns"] - truth * 1000) <= 0.2 * truth * 1000,
          f"missed graph saves {miss['est_savings_ns']} ns, truth {truth * 1000} ns (within 20%)")
    check("8, 16" in miss["why"] and "12" in miss["title"],
          f"the finding names the eager size 12 and the captured sizes 8, 16: {miss['title']} / {miss['why']}")
    ev = miss["evidence"]
    check(ev.get("captured_batch_sizes_from_capture_pass") in (2, {"value": 2}) or
          "captured_batch_sizes_from_capture_pass" in str(ev), f"evidence: {ev}")
    check(not any(f["kind"] == "gpu_launch_overhead" for f in got["findings"]),
          "the eager iterations' launch overhead is the missed graph's, not also gpu_launch_overhead")

# ---- 2. a capture pass gets no launch-overhead finding --------------------------------------
def launch_bound(capture):
    """ProfilerSteps of 50 tiny kernels (5 us) behind 40 us ops: the GPU waits on launches."""
    t = g.Trace()

    def body():
        if capture:
            t.x("cuda_runtime", "cudaStreamBeginCapture", t.t, 5)
            t.t += 10
        for _ in range(50):
            t.launch("aten::add", 40, 10, "elementwise_kernel", 5)
        if capture:
            t.x("cuda_runtime", "cudaStreamEndCapture", t.t, 5)
            t.t += 10
        t.device_sync()
    for n in range(g.STEPS):
        t.step(n, body)
    p = os.path.join(out, "launch_bound_%s.json" % ("capture" if capture else "eager"))
    t.write(p)
    return p


eager_doc = bottlenecks(launch_bound(False))
check(any(f["kind"] == "gpu_launch_overhead" for f in eager_doc["findings"]),
      f"control: the launch-bound trace has gpu_launch_overhead: {[f['kind'] for f in eager_doc['findings']]}")
cap_doc = bottlenecks(launch_bound(True))
check(not any(f["kind"] == "gpu_launch_overhead" for f in cap_doc["findings"]),
      f"a capture pass has no gpu_launch_overhead: {[f['kind'] for f in cap_doc['findings']]}")

# ---- 3. kernel_speedup_whatif against the what-if computed here ------------------------------
tr = g.Trace(name="Acme Accelerator X1")  # no peaks known for it: no roofline
big, small = ("acme_matmul_kernel", 400), ("acme_norm_kernel", 100)
whatif_truth = 0


def gpu_bound():
    global whatif_truth
    for k in (big, small, small, small, big, small, small, small, small, small):
        tr.launch("aten::custom_op", 10, 5, k[0], k[1])
        if k is big:
            whatif_truth += k[1] / 2  # the kernel's time halved, the chain shorter by as much
    tr.device_sync()


for n in range(g.STEPS):
    tr.step(n, gpu_bound)
trace = os.path.join(out, "gpu_bound_no_peaks.json")
tr.write(trace)
doc = bottlenecks(trace)
w = next((f for f in doc["findings"] if f["kind"] == "kernel_speedup_whatif"), None)
check(w is not None, f"kernel_speedup_whatif found: {[f['kind'] for f in doc['findings']]}")
if w:
    check(w["ops"][:1] == [big[0]], f"the what-if names the top kernel: {w['ops']}")
    check(w.get("priced_by") == "replay", f"priced by the replay: {w.get('priced_by')}")
    check(abs(w["saving_alone_ns"] - whatif_truth * 1000) <= 0.01 * whatif_truth * 1000,
          f"what-if alone saves {w['saving_alone_ns']} ns, independent {whatif_truth * 1000:.0f} ns")
    check(abs(w["est_savings_ns"] - whatif_truth * 1000) <= 0.01 * whatif_truth * 1000,
          f"what-if saves {w['est_savings_ns']} ns, independent {whatif_truth * 1000:.0f} ns")

subprocess.run(["rm", "-rf", out])
finish()
