"""Generated compare pairs, each with one planted change and its true effect (stdlib only).

Writes Kineto-shaped JSON (traceEvents with cpu_op / user_annotation / cuda_runtime on the host
thread, kernel / cuda_sync on device 0, ac2g flows, deviceProperties) for `mlprof compare`:

- more_calls: aten::copy_ is called 4x as often per step at the same mean per call (50 us);
  nothing else changes. Truth: aten::copy_ is the regression, from calls, +30 calls x 50 us =
  +1.5 ms per step.
- gpu_more_work: the three GEMM kernels of each step take twice as long (1 ms -> 2 ms) and the
  cudaDeviceSynchronize at the end of the step waits for them. Truth: the step grows by 3 ms,
  the GEMM kernel is the cause, the sync's growth is a symptom of it.

Usage: python3 compare_eval_pairs.py OUTDIR  (prints one line per pair: name base new).
"""
import json
import os
import random
import sys

STEPS = 20
GEMM = "ampere_sgemm_128x64_tn"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4>"


class Writer:
    def __init__(self, seed):
        self.ev = []
        self.rng = random.Random(seed)
        self.corr = 0

    def jitter(self, us, spread):
        """us +- spread (a fraction), an integer number of microseconds."""
        return max(1, round(us * (1 + self.rng.uniform(-spread, spread))))

    def host(self, cat, name, ts, dur, args=None):
        self.ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts,
                        "dur": dur, "args": args or {}})

    def launch(self, ts, kernel, kts, kdur):
        """cudaLaunchKernel [ts, ts + 5] and its kernel on stream 7 at kts, with the ac2g flow."""
        self.corr += 1
        c = self.corr
        self.host("cuda_runtime", "cudaLaunchKernel", ts, 5, {"correlation": c})
        self.ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": kts,
                        "dur": kdur, "args": {"correlation": c, "stream": 7, "device": 0}})
        self.ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 1, "tid": 1,
                        "ts": ts})
        self.ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 0, "tid": 7,
                        "ts": kts, "bp": "e"})

    def save(self, path):
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8,
                                     "computeMinor": 0, "totalGlobalMem": 85899345920}],
               "traceEvents": self.ev}
        with open(path, "w") as f:
            json.dump(doc, f)


def more_calls(path, copies, seed):
    """Per step: aten::mm x 4 (each launching one GEMM), then `copies` x aten::copy_ (50 us)."""
    w = Writer(seed)
    t = 0
    for s in range(STEPS):
        start = t
        t += 10
        gpu_free = t
        for _ in range(4):
            dur = w.jitter(300, 0.05)
            w.host("cpu_op", "aten::mm", t, dur)
            kts = max(gpu_free, t + 20)
            kdur = w.jitter(200, 0.05)
            w.launch(t + 10, GEMM, kts, kdur)
            gpu_free = kts + kdur
            t += dur + 5
        for _ in range(copies):
            dur = w.jitter(50, 0.10)
            w.host("cpu_op", "aten::copy_", t, dur)
            t += dur + 5
        t = max(t, gpu_free) + 10
        w.host("user_annotation", f"ProfilerStep#{s}", start, t - start)
        t += 5
    w.save(path)


def gpu_more_work(path, gemm_us, seed):
    """Per step: aten::linear launching 3 GEMMs (gemm_us each) and one elementwise kernel
    (100 us), then cudaDeviceSynchronize until the GPU is idle (with its Context Sync)."""
    w = Writer(seed)
    t = 0
    for s in range(STEPS):
        start = t
        t += 10
        gpu_free = t
        lin = t
        for k in range(4):
            name, us = (GEMM, gemm_us) if k < 3 else (ELEMENTWISE, 100)
            kts = max(gpu_free, t + 15)
            kdur = w.jitter(us, 0.03)
            w.launch(t, name, kts, kdur)
            gpu_free = kts + kdur
            t += 20
        w.host("cpu_op", "aten::linear", lin, t - lin)
        t += 5
        w.corr += 1
        sync_end = gpu_free + 5
        w.host("cuda_runtime", "cudaDeviceSynchronize", t, sync_end - t, {"correlation": w.corr})
        w.ev.append({"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1,
                     "ts": t + 1, "dur": gpu_free - t, "args": {"correlation": w.corr,
                                                               "stream": -1, "device": 0}})
        t = sync_end + 20
        w.host("user_annotation", f"ProfilerStep#{s}", start, t - start)
        t += 5
    w.save(path)


# name -> (writer of base, writer of new, planted truth)
PAIRS = {
    "more_calls": (lambda p: more_calls(p, 10, 1), lambda p: more_calls(p, 40, 2),
                   {"cause": "aten::copy_", "driver": "calls", "delta_per_step_us": 30 * 50}),
    "gpu_more_work": (lambda p: gpu_more_work(p, 1000, 3), lambda p: gpu_more_work(p, 2000, 4),
                      {"cause": GEMM, "symptom": "cudaDeviceSynchronize",
                       "delta_per_step_us": 3 * 1000}),
}


def write_pairs(outdir):
    """Writes every pair; returns name -> (base path, new path, truth)."""
    out = {}
    for name, (make_base, make_new, truth) in PAIRS.items():
        b = os.path.join(outdir, f"{name}_base.json")
        n = os.path.join(outdir, f"{name}_new.json")
        make_base(b)
        make_new(n)
        out[name] = (b, n, truth)
    return out


if __name__ == "__main__":
    for name, (b, n, _) in write_pairs(sys.argv[1]).items():
        print(name, b, n)
