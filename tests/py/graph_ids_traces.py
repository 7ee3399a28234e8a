"""A generated Kineto trace whose CUDA graph replays carry CUPTI's `graph id` / `graph node id`
kernel args, and its capture pass (issue 27: replays matched by graph id where the trace has
them). The captured launch calls carry the same two args (the node each launch became) and
args.kernel (the kernel name, as ROCm/vLLM captures name it), so both matching methods apply and
the cases where the kernel-name sequence is wrong are explicit:

- graphs 11 and 12 launch the same kernel names in the same order (two batch sizes of one
  model) from different ops: by name, a replay of graph 12 matches graph 11 (the first capture
  matching as many kernels), charging its time to graph 11's ops;
- graph 11 runs its two GEMMs (same kernel name) on two streams and the second captured one
  starts first in the replay: by name, the replayed kernels are charged in start order, each
  GEMM's time to the other's op;
- one replay of graph 11 carries no ids (an older profiler): matched by kernel names.

write(dir) writes trace.json and capture/capture.json and returns the expected attribution,
computed here from the plan (node id -> op), not from mlprof: per replay (correlation, method,
capture index) and GPU ns per captured op, by graph id and by kernel-name sequence."""
import json
import os
from collections import defaultdict

PID, TID, GPU_PID = 10, 10, 0
STREAMS = (7, 8)

# graph id -> [(node id, op, kernel, stream)] in capture (launch) order
GRAPHS = {
    11: [(101, "attn_qkv_b32", "gemm_bf16_128x128", 7), (102, "mlp_up_b32", "gemm_bf16_128x128", 8),
         (103, "rmsnorm_b32", "rmsnorm_kernel", 7)],
    12: [(201, "attn_qkv_b8", "gemm_bf16_128x128", 7), (202, "mlp_up_b8", "gemm_bf16_128x128", 8),
         (203, "rmsnorm_b8", "rmsnorm_kernel", 7)],
}
# replays: (graph id, ids written, {node: (start offset ns, duration ns)})
REPLAYS = [
    (11, True, {101: (40_000, 100_000), 102: (10_000, 300_000), 103: (350_000, 20_000)}),
    (12, True, {201: (10_000, 50_000), 202: (70_000, 70_000), 203: (150_000, 10_000)}),
    (11, True, {101: (30_000, 110_000), 102: (5_000, 310_000), 103: (340_000, 25_000)}),
    (11, False, {101: (10_000, 120_000), 102: (140_000, 320_000), 103: (470_000, 30_000)}),
]


def us(ns):
    return ns / 1000.0


def _x(ev, cat, name, pid, tid, t, d, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": us(t), "dur": us(d)}
    if args:
        e["args"] = args
    ev.append(e)


def _meta(ev):
    ev += [{"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": "python3"}},
           {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": TID, "args": {"name": "main"}},
           {"name": "process_name", "ph": "M", "ts": 0, "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}}]
    for s in STREAMS:
        ev.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": GPU_PID, "tid": s,
                   "args": {"name": f"stream {s}"}})


def _dump(path, ev):
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "deviceProperties": [
            {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
             "numSms": 132}], "traceEvents": ev}, f)


# shapes=True: the captured ops record "Input Dims" (DIMS) and the graph launch is made inside a
# cpu_op with its own (LAUNCH_OP, LAUNCH_DIMS), as `ops`' groups by input shape see them.
DIMS = {op: [[int(op.rsplit("_b", 1)[1]), 64]] for nodes in GRAPHS.values() for _, op, _, _ in nodes}
LAUNCH_OP, LAUNCH_DIMS = "graph_replay_op", [[1]]


def write_capture(path, shapes=False):
    ev = []
    _meta(ev)
    t, corr, ext = 1_000_000, 500, 900
    for gid, nodes in GRAPHS.items():
        _x(ev, "cuda_runtime", "cudaStreamBeginCapture", PID, TID, t, 5_000)
        t += 10_000
        for node, op, kernel, _ in nodes:
            corr += 1
            ext += 1
            _x(ev, "cpu_op", op, PID, TID, t, 20_000,
               {"External id": ext, **({"Input Dims": DIMS[op]} if shapes else {})})
            _x(ev, "cuda_runtime", "cudaLaunchKernel", PID, TID, t + 5_000, 10_000,
               {"correlation": corr, "External id": ext, "kernel": kernel, "graph id": gid,
                "graph node id": node})
            t += 30_000
        _x(ev, "cuda_runtime", "cudaStreamEndCapture", PID, TID, t, 5_000)
        t += 100_000
    _dump(path, ev)


def write_trace(path, shapes=False):
    ev = []
    _meta(ev)
    t, corr = 10_000_000, 5000
    stream_of = {n: s for nodes in GRAPHS.values() for n, _, _, s in nodes}
    kernel_of = {n: k for nodes in GRAPHS.values() for n, _, k, _ in nodes}
    for gid, with_ids, kernels in REPLAYS:
        corr += 1
        _x(ev, "python_function", "torch/cuda/graphs.py(139): replay", PID, TID, t, 40_000)
        if shapes:
            _x(ev, "cpu_op", LAUNCH_OP, PID, TID, t + 5_000, 30_000, {"Input Dims": LAUNCH_DIMS})
        _x(ev, "cuda_runtime", "cudaGraphLaunch", PID, TID, t + 10_000, 20_000, {"correlation": corr})
        for node, (off, dur) in kernels.items():
            args = {"correlation": corr, "stream": stream_of[node], "device": 0}
            if with_ids:
                args.update({"graph id": gid, "graph node id": node})
            _x(ev, "kernel", kernel_of[node], GPU_PID, stream_of[node], t + 50_000 + off, dur, args)
        t += 1_000_000
    _dump(path, ev)


def expected():
    """{'replays': [(correlation, method, capture index)], 'ops': {op: ns}} where the capture
    index is the graph's place in GRAPHS (the order of the capture pass)."""
    order = list(GRAPHS)
    op_of = {n: op for nodes in GRAPHS.values() for n, op, _, _ in nodes}
    res = {"replays": [], "ops": defaultdict(int)}
    corr = 5000
    for gid, with_ids, kernels in REPLAYS:
        corr += 1
        if with_ids:  # each kernel to its node's op
            res["replays"].append((corr, "graph ids", order.index(gid)))
            for node, (_, dur) in kernels.items():
                res["ops"][op_of[node]] += dur
        else:  # by name in start order: the first capture whose kernel names match (graph 11)
            first = order[0]
            res["replays"].append((corr, "kernel names", 0))
            started = sorted(kernels.items(), key=lambda kv: kv[1][0])
            for (_, (_, dur)), (_, op, _, _) in zip(started, GRAPHS[first]):
                res["ops"][op] += dur
    return res


def expected_by_names():
    """What kernel-name matching alone charges (every replay to graph 11's ops, in start order):
    the numbers graph ids correct."""
    ops = defaultdict(int)
    for _, _, kernels in REPLAYS:
        started = sorted(kernels.items(), key=lambda kv: kv[1][0])
        for (_, (_, dur)), (_, op, _, _) in zip(started, GRAPHS[11]):
            ops[op] += dur
    return ops


def write(d, shapes=False):
    os.makedirs(os.path.join(d, "capture"), exist_ok=True)
    write_trace(os.path.join(d, "trace.json"), shapes)
    write_capture(os.path.join(d, "capture", "capture.json"), shapes)
    return expected()


if __name__ == "__main__":
    import sys
    print(json.dumps(write(sys.argv[1] if len(sys.argv) > 1 else "."), indent=1))
