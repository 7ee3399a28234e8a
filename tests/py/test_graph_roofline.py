"""roofline and flops charge CUDA/HIP graph replays to the captured ops (issue 27): with
--capture, each replay runs each captured GEMM op again with the shapes the capture recorded.
Checked against tests/py/graph_replay_reference.py (capture-order match straight from the
Kineto JSON, FLOPs 2MNK (+MN bias) from the capture's Input Dims) on the shared serving and
graph traces: the GEMM FLOPs and calls that --capture adds equal the reference's, the graph
launch's op no longer holds the replayed kernels, no kernel time is lost, and flops agrees."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402
import graph_replay_reference as ref  # noqa: E402

MLPROF = sys.argv[1]

CASES = [
    ("traces/serving/vllm_decode_full/graph_execution.json.gz", "traces/serving/vllm_decode_full/capture_traces"),
    ("traces/cuda-graphs/xdit_flux/profile_trace_rank_0.json.gz", "traces/cuda-graphs/xdit_flux/capture_traces"),
    ("traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz", "traces/serving/sglang_decode/capture_traces"),
    ("traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
     "traces/compile/kineto/vllm_prefilldecode_piecewise/capture_traces"),
]
LAUNCH_OPS = ("replay", "cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch")


def gemm(doc):
    row = next((f for f in doc["families"] if f["name"] == "gemm"), None)
    return (row["flops"], row["calls"]) if row else (0, 0)


for rel, caprel in CASES:
    trace = shared_data.shared_path(rel)
    capdir = shared_data.shared_path(caprel)
    if trace is None or capdir is None:
        continue
    want_flops, want_calls = ref.replayed_gemm_flops(ref.load(trace), ref.load_capture_dir(capdir))
    plain = mlprof_json(MLPROF, "roofline", "--top", "0", trace)
    got = mlprof_json(MLPROF, "roofline", "--top", "0", trace, "--capture", capdir)
    tag = os.path.basename(os.path.dirname(trace))
    (f0, c0), (f1, c1) = gemm(plain), gemm(got)
    check(want_calls > 0, f"{tag}: the reference finds replayed GEMM ops ({want_calls})")
    check(c1 - c0 == want_calls,
          f"{tag}: --capture adds {c1 - c0} GEMM calls, want {want_calls} (one per replayed captured op)")
    check(abs((f1 - f0) - want_flops) <= 1e-6 * want_flops,
          f"{tag}: --capture adds {f1 - f0:.6g} GEMM FLOPs, want {want_flops:.6g}")
    check(got["gpu_kernel_ns"] == plain["gpu_kernel_ns"], f"{tag}: GPU kernel time unchanged")
    launch_rows = [u for u in got["unmodeled"] + got["ops"] if any(x in u["name"] for x in LAUNCH_OPS)]
    check(not launch_rows, f"{tag}: with --capture no roofline row is the graph launch's op: "
          f"{[u['name'][:50] for u in launch_rows]}")
    # Without --capture the replayed kernels stay on the graph launch's op, which has no model.
    check(plain["unmodeled"] and plain["unmodeled"][0]["kernel_ns"] > got["unmodeled"][0]["kernel_ns"],
          f"{tag}: without --capture the top op without a model holds the replay "
          f"({plain['unmodeled'][0]['name'][:50]})")
    # Modeled kernel time never exceeds the GPU's, and the replayed calls carry kernel time.
    check(got["kernel_ns"] <= got["gpu_kernel_ns"] and got["kernel_ns"] > plain["kernel_ns"],
          f"{tag}: modeled kernel time {plain['kernel_ns']} -> {got['kernel_ns']} of {got['gpu_kernel_ns']}")
    # flops is a view over the same calls: the same totals.
    fl = mlprof_json(MLPROF, "flops", "--top", "0", trace, "--capture", capdir)
    check(abs(fl["total_flops"] - got["flops"]) <= 1e-9 * got["flops"],
          f"{tag}: flops total {fl['total_flops']:.6g} == roofline {got['flops']:.6g}")
    # A replayed op's module is its captured module (the capture's nn.Module path).
    if any(m for m in got["modules"]):
        check(sum(m["kernel_ns"] for m in got["modules"]) >= sum(m["kernel_ns"] for m in plain["modules"]),
              f"{tag}: per-module kernel time does not shrink with --capture")

finish()
