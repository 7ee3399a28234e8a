"""A multi-iteration serving trace with planted truths, for the step model (issue 27 item 1).

The public serving traces hold one engine iteration each; this writes a Kineto-shaped trace of
many: graph-capture iterations (one CUDA graph per decode batch size: two at start-up, one more
captured mid-run the first time batch 32 is seen), warm-up prefills (3x slower), then prefill,
decode and mixed iterations (a mixed iteration's decoding requests schedule 2 tokens each, as
with one speculative token, so generation tokens differ from requests). Decode iterations replay their batch size's graph (cudaGraphLaunch:
several kernels share its correlation); prefill and mixed launch kernels eagerly.

`write(path, style)` writes the trace and returns the truths per iteration (in time order):
phase, batch, context/generation requests and tokens, host ns, GPU busy ns, capture, warm-up.
style: "vllm" (execute_<N>_context_...(sq..sk..sqsq..sqsk..)_generation_..., vLLM's
detailed_trace_annotation), "vllm_old" (vLLM's default execute_context_<nc>(<context tokens>)
_generation_<ng>(<generation tokens>)) or "sglang"
(step[EXTEND bs=.. toks=..] / step[DECODE bs=..] / step[MIXED bs=..]).

Usage: serving_steps_traces.py OUT.json [style]  (prints the truths as JSON)
"""
import json
import random
import sys

PID, TID, GPU_PID, STREAM = 100, 1, 0, 7
T0 = 1_700_000_000_000_000  # ns


def us(ns):
    return ns / 1000.0


def plan(seed=7):
    """The iterations: (kind, context requests, context tokens list, generation requests)."""
    r = random.Random(seed)
    its = [("capture", 0, [], 8), ("capture", 0, [], 16)]
    its += [("warmup", 2, [r.randint(200, 400) for _ in range(2)], 0) for _ in range(2)]
    for k in range(30):
        if k == 17:
            its.append(("capture", 0, [], 32))
        if k % 5 == 2:
            n = r.randint(1, 4)
            its.append(("prefill", n, [r.randint(100, 500) for _ in range(n)], 0))
        elif k % 7 == 3:
            n = r.randint(1, 2)
            its.append(("mixed", n, [r.randint(50, 200) for _ in range(n)], r.choice([8, 16])))
        else:
            its.append(("decode", 0, [], r.choice([8, 16]) if k < 17 else r.choice([8, 16, 32])))
    return its


def write(path, style="vllm", seed=7):
    r = random.Random(seed + 1)
    ev = [{"name": "process_name", "ph": "M", "ts": us(T0), "pid": PID, "tid": 0, "args": {"name": "python3"}},
          {"name": "thread_name", "ph": "M", "ts": us(T0), "pid": PID, "tid": TID, "args": {"name": "engine"}},
          {"name": "process_name", "ph": "M", "ts": us(T0), "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}},
          {"name": "thread_name", "ph": "M", "ts": us(T0), "pid": GPU_PID, "tid": STREAM,
           "args": {"name": "stream 7"}}]
    corr = [1000]
    truths = []
    ts = T0 + 100_000
    kv = {}  # request -> context length so far (for sk)

    def x(cat, name, pid, tid, t, d, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": us(t), "dur": us(d)}
        if args:
            e["args"] = args
        ev.append(e)

    for kind, nc, ctx, ng in plan(seed):
        ctx_tokens = sum(ctx)
        ctx_sq = sum(q * q for q in ctx)
        gen_kv = [r.randint(100, 3000) for _ in range(ng)]
        sk_gen = sum(gen_kv)
        # Host time: prefill ~ tokens, decode ~ batch, warm-up 3x.
        if kind == "capture":
            host = 4_000_000
        elif nc > 0:
            host = 600_000 + 800 * ctx_tokens + (20_000 * ng)
        else:
            host = 300_000 + 3_000 * ng + r.randint(0, 20_000)
        if kind == "warmup":
            host *= 3
        phase = ("mixed" if nc and ng else "prefill" if nc else "decode" if ng else "unknown")
        gen_q = 2 if kind == "mixed" else 1  # query tokens per decoding request
        gen_tokens = gen_q * ng
        n_tokens = ctx_tokens + gen_tokens
        if style == "vllm":
            name = (f"execute_{n_tokens}_context_{nc}(sq{ctx_tokens}sk{ctx_tokens}sqsq{ctx_sq}"
                    f"sqsk{ctx_sq})_generation_{ng}(sq{gen_tokens}sk{sk_gen}sqsq{gen_q * gen_q * ng}"
                    f"sqsk{gen_q * sk_gen})")
        elif style == "vllm_old":
            name = f"execute_context_{nc}({ctx_tokens})_generation_{ng}({gen_tokens})"
        else:
            mode = {"prefill": "EXTEND", "decode": "DECODE", "mixed": "MIXED"}.get(phase, "IDLE")
            name = f"step[{mode} bs={nc + ng}" + (f" toks={n_tokens}" if nc else "") + "]"
        begin = ts
        x("user_annotation", name, PID, TID, begin, host)
        t = begin + 20_000
        busy = 0
        gpu_end = begin
        if kind == "capture":
            x("cuda_runtime", "cudaStreamBeginCapture", PID, TID, t, 5_000)
            t += 10_000
            for _ in range(6):  # captured launches run nothing now
                corr[0] += 1
                x("cuda_runtime", "cudaLaunchKernel", PID, TID, t, 8_000,
                  {"correlation": corr[0], "kernel": "decode_kernel"})
                t += 10_000
            x("cuda_runtime", "cudaStreamEndCapture", PID, TID, t, 5_000)
        elif nc == 0:  # a decode: one graph replay, kernels sharing its correlation
            corr[0] += 1
            x("cuda_runtime", "cudaGraphLaunch", PID, TID, t, 15_000, {"correlation": corr[0]})
            k = t + 30_000
            for j in range(6):
                d = 10_000 + 400 * ng + j * 1_000
                x("kernel", f"decode_kernel_{j}", GPU_PID, STREAM, k, d,
                  {"correlation": corr[0], "stream": STREAM, "device": 0})
                busy += d
                k += d + 2_000
            gpu_end = k - 2_000
        else:  # prefill / mixed: eager launches
            for j in range(8):
                corr[0] += 1
                x("cuda_runtime", "cudaLaunchKernel", PID, TID, t, 7_000, {"correlation": corr[0]})
                d = 20_000 + 60 * ctx_tokens // 8 + 300 * ng
                k = max(t + 15_000, gpu_end + 1_000)
                x("kernel", f"prefill_kernel_{j}", GPU_PID, STREAM, k, d,
                  {"correlation": corr[0], "stream": STREAM, "device": 0})
                busy += d
                gpu_end = k + d
                t += 25_000
        gpu_end = max(gpu_end, begin + host)
        truths.append({"phase": phase, "batch": nc + ng, "context_requests": nc,
                       "generation_requests": ng, "context_tokens": ctx_tokens,
                       "generation_tokens": gen_tokens, "host_ns": host, "gpu_busy_ns": busy,
                       "gpu_window_ns": gpu_end - begin, "capture": kind == "capture",
                       "warmup": kind == "warmup", "name": name})
        ts = gpu_end + 50_000  # the next iteration starts after this one's GPU work
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "deviceProperties": [
            {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
             "numSms": 132}], "traceEvents": ev}, f)
    return truths


if __name__ == "__main__":
    print(json.dumps(write(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "vllm"), indent=1))
