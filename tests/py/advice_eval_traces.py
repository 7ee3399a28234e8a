#!/usr/bin/env python3
"""The advice evaluation set: Kineto-shaped GPU traces, each with ONE planted problem and its
true saving, computed here from the plan of the trace (not from mlprof).

    python3 tests/py/advice_eval_traces.py OUTDIR      # writes OUTDIR/*.json and truth.json

or, from Python: `import advice_eval_traces as g; g.write_all(outdir)` -> the truth list.

Each trace: one host thread (the step thread), ProfilerStep#N user annotations, cpu_op slices
with cudaLaunchKernel/cudaMemcpyAsync runtime calls inside, kernels/copies on GPU 0 (stream 7
compute, stream 13 communication) linked by args.correlation and ac2g flows, deviceProperties.
All times are whole microseconds. A step's time is its ProfilerStep's duration; the steps'
total is the basis mlprof's savings are a share of.

truth.json, one entry per trace:
  file, kind (the finding kind that must come first), planted (words), steps, step_total_us,
  true_saving_us (what removing the planted cause saves over all steps), and for traces whose
  answer is "nothing to save here" (gpu_bound_sync) max_saving_us instead: no finding may claim
  more. The compare pair: base/test files and the regressed op, its calls and mean.

The assumptions the truths share with mlprof's replay model (docs/analysis.md "Replay model"):
a copy from pinned memory runs at the host link's bandwidth (85% of the PCI-SIG x16 rate of the
GPU's PCIe generation; an H100 measured 55.2 of 63 GB/s); tensor cores make the GEMM kernels they
apply to faster by the ratio of the datasheet peaks (an H100 measured 6.97x for fp32 -> TF32
where the peaks say 7.39x: tests/py/test_h100_advice_truth.py); overlapped communication costs
the step nothing;
a CUDA graph replays captured ATen ops with no host cost (dispatch, launch) and no launch delay.
"""
import json
import os
import sys

PID = 4242  # host process
TID = 4242  # the step thread
GPU = 0
COMPUTE = 7
COMM = 13
LAUNCH_DELAY = 5  # us from a launch call's start to its kernel's start on an idle stream


def device(major, minor=0, name=None):
    return {
        "id": GPU,
        "name": name or ("Tesla V100-SXM2-16GB" if major < 8 else "NVIDIA A100-SXM4-40GB"),
        "totalGlobalMem": 42297524224,
        "computeMajor": major,
        "computeMinor": minor,
        "maxThreadsPerBlock": 1024,
        "maxThreadsPerMultiprocessor": 2048,
        "regsPerBlock": 65536,
        "warpSize": 32,
        "sharedMemPerBlock": 49152,
        "numSms": 108 if major >= 8 else 80,
    }


class Trace:
    """Builds the events of one trace; `t` is the host thread's clock (us)."""

    def __init__(self, major=8, name=None):
        self.name = name
        self.events = []
        self.corr = 1000
        self.ext = 1
        self.t = 1_000_000
        self.stream_free = {COMPUTE: 0, COMM: 0}  # when each stream's last op ends
        self.major = major

    def x(self, cat, name, ts, dur, pid=PID, tid=TID, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
        e["args"] = args or {}
        self.events.append(e)
        return e

    def gpu_op(self, cat, name, launch_ts, dur, stream=COMPUTE, after=0, extra=None):
        """A kernel/copy launched at launch_ts: starts when the stream is free, LAUNCH_DELAY
        after its launch, and not before `after` (a cross-stream wait). Returns its end."""
        self.corr += 1
        start = max(launch_ts + LAUNCH_DELAY, self.stream_free[stream], after)
        args = {"device": GPU, "context": 1, "stream": stream, "correlation": self.corr,
                "External id": self.ext, "queued": 0}
        if extra:
            args.update(extra)
        self.x(cat, name, start, dur, pid=GPU, tid=stream, args=args)
        self.events.append({"ph": "f", "id": self.corr, "pid": GPU, "tid": stream, "ts": start,
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.stream_free[stream] = start + dur
        return start + dur

    def launch(self, op, op_dur, launch_dur, kernel, kernel_dur, stream=COMPUTE, after=0,
               call="cudaLaunchKernel", cat="kernel", op_args=None):
        """cpu_op `op` of op_dur us whose last launch_dur us are the launch call. Returns the
        GPU op's end."""
        self.ext += 1
        ts = self.t
        self.x("cpu_op", op, ts, op_dur, args=dict({"External id": self.ext}, **(op_args or {})))
        lts = ts + op_dur - launch_dur
        end = self.gpu_op(cat, kernel, lts, kernel_dur, stream=stream, after=after)
        self.x("cuda_runtime", call, lts, launch_dur,
               args={"External id": self.ext, "cbid": 211, "correlation": self.corr})
        self.events.append({"ph": "s", "id": self.corr, "pid": PID, "tid": TID, "ts": lts,
                            "cat": "ac2g", "name": "ac2g"})
        self.t = ts + op_dur
        return end

    def host(self, name, dur, cat="cpu_op"):
        self.x(cat, name, self.t, dur)
        self.t += dur

    def device_sync(self, min_dur=10):
        """cudaDeviceSynchronize: returns min_dur after the call starts or when both streams are
        idle, whichever is later."""
        ts = self.t
        end = max(ts + min_dur, max(self.stream_free.values()) + 3)
        self.corr += 1
        self.x("cuda_runtime", "cudaDeviceSynchronize", ts, end - ts,
               args={"cbid": 165, "correlation": self.corr})
        self.t = end

    def step(self, n, body):
        ts = self.t
        body()
        self.ext += 1  # its own id, as Kineto gives it (not its last op's)
        self.x("user_annotation", "ProfilerStep#%d" % n, ts, self.t - ts,
               args={"External id": self.ext})
        self.t += 20  # the loop's own overhead between steps (outside every step)
        return self.t - 20 - ts

    def graph_launch(self, call_dur, kernels, call="cudaGraphLaunch"):
        """A graph replay: one launch call of call_dur us whose kernels (name, dur) share its
        correlation and run back to back from LAUNCH_DELAY after the call (one flow, as PyTorch
        draws it). Returns their end."""
        self.corr += 1
        ts = self.t
        start = max(ts + LAUNCH_DELAY, self.stream_free[COMPUTE])
        first = start
        for name, dur in kernels:
            self.x("kernel", name, start, dur, pid=GPU, tid=COMPUTE,
                   args={"device": GPU, "context": 1, "stream": COMPUTE,
                         "correlation": self.corr, "queued": 0})
            start += dur
        self.stream_free[COMPUTE] = start
        self.x("cuda_runtime", call, ts, call_dur, args={"cbid": 311, "correlation": self.corr})
        self.events.append({"ph": "s", "id": self.corr, "pid": PID, "tid": TID, "ts": ts,
                            "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": self.corr, "pid": GPU, "tid": COMPUTE, "ts": first,
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.t = ts + call_dur
        return start

    def iteration(self, name, body):
        """A serving engine's iteration: its annotation (vLLM's execute_...) instead of a
        ProfilerStep; 20 us of the engine loop between iterations."""
        ts = self.t
        body()
        self.ext += 1
        self.x("user_annotation", name, ts, self.t - ts, args={"External id": self.ext})
        self.t += 20
        return self.t - 20 - ts

    def write(self, path):
        meta = [
            {"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0,
             "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": 0, "pid": GPU, "tid": 0,
             "args": {"labels": "GPU 0"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": TID,
             "args": {"name": "thread %d (python3)" % TID}},
        ]
        doc = {"schemaVersion": 1, "deviceProperties": [device(self.major, name=self.name)],
               "traceEvents": meta + sorted(self.events, key=lambda e: (e["ts"], -e.get("dur", 0))),
               "displayTimeUnit": "ms"}
        with open(path, "w") as f:
            json.dump(doc, f)


STEPS = 8


def data_loading():
    """30 ms of DataLoader per step on the host, then 10 kernels of 1 ms and a sync. Loading
    overlapped with compute removes all of it: the truth is the loading time."""
    tr, total = Trace(), 0
    load = 30_000

    def body():
        tr.host("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", load,
                cat="user_annotation")
        for _ in range(10):
            tr.launch("aten::mul", 200, 10, "elementwise_kernel", 1_000)
        tr.device_sync()
    for n in range(STEPS):
        total += tr.step(n, body)
    return tr, {"kind": "data_loading", "planted": "30 ms DataLoader per step on the host",
                "true_saving_us": STEPS * load, "step_total_us": total}


def launch_bound():
    """200 tiny kernels (4 us) per step, each behind a 20 us launch call in a 25 us op: the host
    launches are the step. A CUDA graph replays the captured ops without their host dispatch and
    launches: the step becomes the kernels' 200 x 4 us, the truth is 200 x (25 - 4) us per step."""
    tr, total = Trace(), 0
    n_ops, launch_cost = 200, 20

    def body():
        for _ in range(n_ops):
            tr.launch("aten::add", 25, launch_cost, "vectorized_elementwise_kernel", 4)
        tr.device_sync()
    for n in range(STEPS):
        total += tr.step(n, body)
    return tr, {"kind": "gpu_launch_overhead", "planted": "200 launches of 20 us per step, 4 us kernels",
                "true_saving_us": STEPS * n_ops * (25 - 4), "step_total_us": total}


def gpu_bound_sync():
    """20 kernels of 1 ms launched in 1 ms, then cudaDeviceSynchronize waits ~19 ms per step.
    The GPU is busy the whole step: removing the sync saves only the host's restart gap, and
    nothing else can be saved by a host-side change."""
    tr, total = Trace(), 0

    def body():
        for _ in range(20):
            tr.launch("aten::relu", 50, 10, "elementwise_kernel", 1_000)
        tr.device_sync()
    for n in range(STEPS):
        total += tr.step(n, body)
    # Without the sync the GPU runs the steps back to back: what it saves is each step's GPU
    # idle time (launch delay + the gap between steps + the first op's host time), < 100 us.
    return tr, {"kind": "sync_stall", "planted": "host sync at the end of a GPU-bound step",
                "true_saving_us": 0, "max_saving_us": STEPS * 100, "step_total_us": total}


def exposed_comm():
    """10 ms of compute, then an 8 ms all-reduce on the communication stream that starts when
    the compute ends, then the optimizer (200 us, compute stream) that waits for the all-reduce
    (as DDP's does, through an event), then a sync: the all-reduce is fully exposed and the next
    step's compute comes after it. Overlapped, it is free: the truth is 8 ms per step."""
    tr, total = Trace(), 0
    comm = 8_000

    def body():
        end = 0
        for _ in range(10):
            end = tr.launch("aten::mm", 60, 10, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
                            1_000)
        comm_end = tr.launch(
            "record_param_comms", 60, 10,
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
            comm, stream=COMM, after=end)
        tr.launch("aten::_foreach_add_", 40, 10, "multi_tensor_apply_kernel", 200,
                  after=comm_end)
        tr.device_sync()
    for n in range(STEPS):
        total += tr.step(n, body)
    return tr, {"kind": "communication_not_overlapped", "planted": "8 ms exposed all-reduce per step",
                "true_saving_us": STEPS * comm, "step_total_us": total}


def pageable_copies():
    """A 4 ms host-to-device copy from pageable memory (the host call blocks for it), then 6 ms
    of kernels and a sync, on an A100 (PCIe Gen4 x16: 31.5 GB/s per direction, PCI-SIG). Pinned
    and async, the 64 MiB copy runs at 85% of that and the host goes on: the truth is the copy
    minus 64 MiB / 26.8 GB/s."""
    tr, total = Trace(), 0
    copy = 4_000

    def body():
        tr.ext += 1
        ts = tr.t
        tr.x("cpu_op", "aten::copy_", ts, copy + 40, args={"External id": tr.ext})
        end = tr.gpu_op("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", ts + 10, copy,
                        extra={"bytes": 64 << 20, "memory bandwidth (GB/s)": 16.8})
        call_end = end + 10
        tr.x("cuda_runtime", "cudaMemcpyAsync", ts + 10, call_end - ts - 10,
             args={"External id": tr.ext, "cbid": 41, "correlation": tr.corr})
        tr.t = max(ts + copy + 40, call_end + 5)
        for _ in range(6):
            tr.launch("aten::mul", 40, 10, "elementwise_kernel", 1_000)
        tr.device_sync()
    for n in range(STEPS):
        total += tr.step(n, body)
    return tr, {"kind": "pageable_memcpy", "planted": "4 ms blocking pageable HtoD copy per step",
                "true_saving_us": STEPS * (copy - (64 << 20) / (31.5 * 0.85 * 1e3)),
                "step_total_us": total}


def old_device_fp32_gemm():
    """A V100 (sm_70): 5 fp32 SGEMMs of 1 ms (no tensor cores) per step and a sync. Tensor cores
    (fp16 autocast on sm_70: no bf16, no TF32 below sm_80) run them at the ratio of the V100
    SXM2 datasheet's peaks, 125 fp16 tensor / 15.7 fp32 TFLOP/s: the truth is 5 x (1 ms - 1 ms /
    7.96) per step."""
    tr, total = Trace(major=7), 0

    def body():
        for _ in range(5):
            tr.launch("aten::mm", 60, 10, "volta_sgemm_128x64_nn", 1_000)
        tr.device_sync()
    for n in range(STEPS):
        total += tr.step(n, body)
    return tr, {"kind": "low_tensor_core_use", "planted": "fp32 SGEMM on a V100 (sm_70)",
                "true_saving_us": STEPS * 5 * 1_000 * (1 - 15.7 / 125), "step_total_us": total,
                "compute_capability": "7.0"}


# NVIDIA H100 SXM5 dense bf16 tensor-core peak and HBM3 bandwidth (the H100 architecture
# whitepaper, Table 1; NVIDIA's H100 datasheet): what the roofline of an H100 GEMM is made of.
H100_BF16_TFLOPS = 989.4
H100_GBS = 3350.0
ROOFLINE_TARGET = 0.8  # the share of its roofline a tuned kernel is priced as reaching


def gemm_below_roofline():
    """An H100: 10 bf16 GEMMs of 4096^3 per step on tensor cores (an xmma kernel), each 400 us
    while its roofline (2MNK at the bf16 peak; A+B+C bytes at HBM bandwidth) is 139 us. The host
    launches them in 60 us each, so the GPU is the step. Reaching 80% of the roofline makes each
    kernel roofline/0.8 long: the truth is 10 x (400 - roofline/0.8) us per step."""
    tr, total = Trace(major=9, name="NVIDIA H100 80GB HBM3"), 0
    m = n = k = 4096
    flops = 2 * m * n * k
    nbytes = (m * k + k * n + m * n) * 2
    roof_us = max(flops / (H100_BF16_TFLOPS * 1e6), nbytes / (H100_GBS * 1e3))
    dur = 400
    args = {"Input Dims": [[m, k], [k, n]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}

    def body():
        for _ in range(10):
            tr.launch("aten::mm", 60, 10,
                      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize"
                      "1x1x1_execute_segment_k_off_kernel__5x_cublas", dur, op_args=args)
        tr.device_sync()
    for s in range(STEPS):
        total += tr.step(s, body)
    return tr, {"kind": "below_roofline", "planted": "bf16 GEMMs at 35% of the H100 roofline",
                "true_saving_us": round(STEPS * 10 * (dur - roof_us / ROOFLINE_TARGET)),
                "step_total_us": total, "roofline_us": roof_us}


def compare_pair(calls_base=228, calls_test=4812, mean=50):
    """Two traces whose only difference is the number of cudaMemcpyAsync calls (same mean): the
    regression is the calls' count, +(calls_test - calls_base) x mean us."""
    out = []
    for calls in (calls_base, calls_test):
        tr = Trace()
        per_step = calls // STEPS

        def body():
            for _ in range(per_step):
                tr.ext += 1
                ts = tr.t
                tr.x("cpu_op", "aten::copy_", ts, mean + 10, args={"External id": tr.ext})
                tr.gpu_op("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", ts + 5, 2)
                tr.x("cuda_runtime", "cudaMemcpyAsync", ts + 5, mean,
                     args={"External id": tr.ext, "cbid": 41, "correlation": tr.corr})
                tr.t = ts + mean + 10
            tr.launch("aten::relu", 50, 10, "elementwise_kernel", 500)
            tr.device_sync()
        for n in range(STEPS):
            tr.step(n, body)
        out.append(tr)
    per_step = [calls_base // STEPS, calls_test // STEPS]
    return out, {"op": "cudaMemcpyAsync", "calls_base": per_step[0] * STEPS,
                 "calls_test": per_step[1] * STEPS, "mean_us": mean,
                 "delta_us": (per_step[1] - per_step[0]) * STEPS * mean}


def vllm_decode(batch, kv=4000):
    """vLLM's detailed iteration annotation of a decode-only batch."""
    return ("execute_%d_context_0(sq0sk0sqsq0sqsk0)_generation_%d(sq%dsk%dsqsq%dsqsk%d)"
            % (batch, batch, batch, kv, batch, kv))


def serving_host_bound_decode():
    """vLLM decode iterations (batch 8) that replay one CUDA graph of 10 x 80 us kernels but
    spend 2 ms in the scheduler (Python) before it and 500 us sampling after it, then sync.
    The host's part of each iteration costing nothing (the bound the finding is priced by:
    async scheduling overlaps it with the GPU) leaves the launch delay, the graph's kernels and
    the sync's 3 us tail: the truth is each iteration's time minus those."""
    tr, total, truth = Trace(), 0, 0
    kernels = [("fused_moe_kernel", 80)] * 10

    def body():
        tr.host("vllm/v1/core/sched/scheduler.py(300): schedule", 2_000, cat="python_function")
        tr.graph_launch(20, kernels)
        tr.host("vllm/v1/sample/sampler.py(60): forward", 500, cat="python_function")
        tr.device_sync()
    for _ in range(STEPS):
        d = tr.iteration(vllm_decode(8), body)
        total += d
        truth += d - (LAUNCH_DELAY + 800 + 3)
    return tr, {"kind": "serving_host_bound_decode",
                "planted": "2.5 ms of scheduler + sampling per decode iteration, 0.8 ms of GPU",
                "true_saving_us": truth, "step_total_us": total + 20 * (STEPS - 1)}


def serving_batch_missed_graph():
    """vLLM decode iterations: batch 8 and 16 replay a captured graph (10 x 100 us kernels);
    batch 12 (the first two iterations) was not captured and launches its 10 kernels (30 us) one
    at a time behind 60 us ops. The eager ones schedule for 20 us and end with a sync (the
    sampled tokens read back); the replayed ones schedule for 700 us, less than their GPU work,
    and run ahead (async scheduling). Replaying a graph in the batch-12 iterations removes the
    ops' host time and the launch delays: such an iteration becomes the scheduler's 20 us, the
    kernels' 300 us and the sync's 3 us tail. The truth is what the two eager iterations lose
    against that. step_total_us: from the first iteration's start to the last one's
    completion (its graph's end)."""
    tr, truth = Trace(), 0
    graph = [("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn", 100)] * 10

    def replayed():  # async scheduling: no sync, the next batch is prepared meanwhile
        tr.host("vllm/v1/core/sched/scheduler.py(300): schedule", 700, cat="python_function")
        tr.graph_launch(20, graph)

    def eager():
        tr.host("vllm/v1/core/sched/scheduler.py(300): schedule", 20, cat="python_function")
        for _ in range(10):
            tr.launch("aten::mm", 60, 20, "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_tn", 30)
        tr.device_sync()
    start = tr.t
    for b in [12, 12, 8, 16, 8, 16, 8, 16]:
        d = tr.iteration(vllm_decode(b), eager if b == 12 else replayed)
        if b == 12:
            truth += d - (20 + 300 + 3)
    # The replayed iterations run ahead of the GPU: the last one completes when its graph ends.
    total = max(tr.t - 20, tr.stream_free[COMPUTE]) - start
    return tr, {"kind": "serving_batch_missed_graph",
                "planted": "batch 12 has no captured graph: 2 iterations launch eagerly",
                "true_saving_us": truth, "step_total_us": total}


SINGLE = {
    "data_loading": data_loading,
    "launch_bound": launch_bound,
    "gpu_bound_sync": gpu_bound_sync,
    "exposed_comm": exposed_comm,
    "pageable_copies": pageable_copies,
    "old_device_fp32_gemm": old_device_fp32_gemm,
    "gemm_below_roofline": gemm_below_roofline,
    "serving_host_bound_decode": serving_host_bound_decode,
    "serving_batch_missed_graph": serving_batch_missed_graph,
}


def write_all(outdir):
    os.makedirs(outdir, exist_ok=True)
    truth = []
    for name, make in SINGLE.items():
        tr, t = make()
        path = os.path.join(outdir, name + ".json")
        tr.write(path)
        t.update({"name": name, "file": path, "steps": STEPS})
        truth.append(t)
    (base, test), t = compare_pair()
    t.update({"name": "compare_more_calls", "base": os.path.join(outdir, "compare_base.json"),
              "test": os.path.join(outdir, "compare_test.json"), "kind": "compare"})
    base.write(t["base"])
    test.write(t["test"])
    truth.append(t)
    with open(os.path.join(outdir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return truth


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: advice_eval_traces.py OUTDIR")
    for t in write_all(sys.argv[1]):
        print(t["name"], t.get("true_saving_us", t.get("delta_us")), "us")
