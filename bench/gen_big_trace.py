#!/usr/bin/env python3
"""Write a Kineto-shaped trace of N complete ('X') events, for scale benchmarks (issue 33).

    python3 bench/gen_big_trace.py N OUT.json [--seed S]

The shape of a PyTorch profiler trace of a training loop: one process with three CPU threads
(forward on the main thread, backward on the autograd thread, a data-loader thread without GPU
work), ProfilerStep#K annotations, cpu_op -> cuda_runtime launches with "External id",
"Input Dims", "Input type", "correlation", "cbid"; kernels and memcpys on two GPU streams with
"grid", "block", "stream", "correlation", ...; ac2g launch flows ('s' on the launch, 'f' with
"bp": "e" on the kernel); Kineto's "Trace" span and its instants. Each step's events are written
in time order across threads and streams (so the tracks interleave in the file, as they do in
Kineto's output), compact JSON, streamed: memory stays small whatever N is. Deterministic for a
given N and seed.
"""
import argparse
import random

GEMM = [("aten::linear", "aten::addmm",
         "ampere_sgemm_128x64_tn", [[4096, 1024], [1024, 1024], [1024]], '["float", "float", "float"]', '["float", "float"]')]
ELEMENTWISE = [
    ("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >"),
    ("aten::relu", "void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min_scalar<float> >"),
    ("aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float> >"),
]
CPU_ONLY = ["aten::empty", "aten::view", "aten::as_strided", "aten::detach", "aten::t"]

PID = 3131
THREADS = {"fwd": 3131, "bwd": 3140, "loader": 3155}
STREAMS = {"fwd": 7, "bwd": 20}


def us(ns):
    """Kineto's timestamps: microseconds with three decimals."""
    return f"{ns // 1000}.{ns % 1000:03d}"


class Gen:
    def __init__(self, n, seed):
        self.left = n
        self.rng = random.Random(seed)
        self.corr = 1000
        self.ext = 1
        self.seq = 0
        self.gpu_free = {7: 0, 20: 0}

    def x(self, out, ts, dur, name, cat, pid, tid, args):
        out.append((ts, f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},'
                        f'"ts":{us(ts)},"dur":{us(dur)},"args":{{{args}}}}}'))
        self.left -= 1

    def launch(self, out, ts, tid, stream, kernel, gemm):
        """cudaLaunchKernel at ts on tid and its kernel on stream; returns the launch's end."""
        r = self.rng
        self.corr += 1
        c = self.corr
        ldur = r.randrange(3000, 9000)
        self.x(out, ts, ldur, "cudaLaunchKernel", "cuda_runtime", PID, tid,
               f'"External id":{self.ext},"cbid":211,"correlation":{c}')
        out.append((ts, f'{{"ph":"s","id":{c},"pid":{PID},"tid":{tid},"ts":{us(ts)},"cat":"ac2g","name":"ac2g"}}'))
        kts = max(ts + r.randrange(4000, 12000), self.gpu_free[stream] + r.randrange(200, 900))
        kdur = r.randrange(20000, 90000) if gemm else r.randrange(2000, 12000)
        self.gpu_free[stream] = kts + kdur
        grid, block = ("[128, 16, 1]", "[256, 1, 1]") if gemm else ("[4096, 1, 1]", "[128, 1, 1]")
        self.x(out, kts, kdur, kernel, "kernel", 0, stream, kernel_args(c, self.ext, stream, grid, block))
        out.append((kts, f'{{"ph":"f","id":{c},"pid":0,"tid":{stream},"ts":{us(kts)},'
                         f'"cat":"ac2g","name":"ac2g","bp":"e"}}'))
        return ts + ldur

    def op(self, out, ts, kind):
        """One operator on thread kind ('fwd' or 'bwd') starting at ts; returns its end."""
        r = self.rng
        tid, stream = THREADS[kind], STREAMS[kind]
        self.ext += 1
        self.seq += 1
        prefix = "" if kind == "fwd" else "autograd::engine::evaluate_function: "
        if r.random() < 0.35:
            outer, inner, kernel, dims, types, types2 = GEMM[0]
            t = ts + r.randrange(2000, 6000)
            t2 = t + r.randrange(1000, 4000)
            t3 = self.launch(out, t2, tid, stream, kernel, True) + r.randrange(1000, 3000)
            end = t3 + r.randrange(1000, 4000)
            self.x(out, t, t3 - t, inner, "cpu_op", PID, tid,
                   f'"External id":{self.ext},"Input Dims":{dims},"Input type":{types},'
                   f'"Sequence number":{self.seq},"Fwd thread id":0')
            self.x(out, ts, end - ts, prefix + outer, "cpu_op", PID, tid,
                   f'"External id":{self.ext},"Input Dims":{dims[:2]},"Input type":{types2},'
                   f'"Sequence number":{self.seq},"Fwd thread id":0')
            return end
        name, kernel = ELEMENTWISE[r.randrange(len(ELEMENTWISE))]
        t = ts + r.randrange(1000, 5000)
        end = self.launch(out, t, tid, stream, kernel, False) + r.randrange(1000, 3000)
        self.x(out, ts, end - ts, prefix + name, "cpu_op", PID, tid,
               f'"External id":{self.ext},"Input Dims":[[4096, 1024], [4096, 1024]],'
               f'"Input type":["float", "float"],"Sequence number":{self.seq},"Fwd thread id":0')
        return end


def kernel_args(c, ext, stream, grid, block):
    return (f'"External id":{ext},"queued":0,"device":0,"context":1,"stream":{stream},'
            f'"correlation":{c},"registers per thread":64,"shared memory":16384,'
            f'"grid":{grid},"block":{block}')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, help="complete ('X') events to write")
    ap.add_argument("out", help="output .json")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--ops-per-step", type=int, default=1500)
    a = ap.parse_args()
    g = Gen(a.n - 1, a.seed)  # the last one: Kineto's "PyTorch Profiler (0)" span
    r = g.rng
    t0 = 1_700_000_000_000_000_000 // 1000  # ns; a plausible epoch-based Kineto timestamp
    with open(a.out, "w", buffering=1 << 20) as f:
        f.write('{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3",'
                '"totalGlobalMem":85028896768,"computeMajor":9,"computeMinor":0,"numSms":132}],'
                '"traceEvents":[')
        f.write(f'{{"name":"process_name","ph":"M","ts":{us(t0)},"pid":{PID},"tid":0,'
                f'"args":{{"name":"python3"}}}}')
        for kind, tid in THREADS.items():
            f.write(f',{{"name":"thread_name","ph":"M","ts":{us(t0)},"pid":{PID},"tid":{tid},'
                    f'"args":{{"name":"thread {tid} ({kind})"}}}}')
        for s in STREAMS.values():
            f.write(f',{{"name":"thread_name","ph":"M","ts":{us(t0)},"pid":0,"tid":{s},'
                    f'"args":{{"name":"stream {s}"}}}}')
        f.write(f',{{"name":"process_name","ph":"M","ts":{us(t0)},"pid":0,"tid":0,"args":{{"name":"python3"}}}}')
        ts = t0 + 50_000
        step = 0
        while g.left > 5:  # an operator writes up to 4, its step 1
            out = []
            begin = ts
            half = a.ops_per_step // 2
            tf = ts + 10_000
            for _ in range(half):
                if g.left <= 5:
                    break
                tf = g.op(out, tf, "fwd") + r.randrange(500, 3000)
            tb = max(tf - 200_000, ts + 20_000)  # backward starts before forward ends: overlap
            for _ in range(a.ops_per_step - half):
                if g.left <= 5:
                    break
                tb = g.op(out, tb, "bwd") + r.randrange(500, 3000)
            tl = ts
            while tl < max(tf, tb) and g.left > 1 and r.random() < 0.9:
                d = r.randrange(2000, 20000)
                g.x(out, tl, d, CPU_ONLY[r.randrange(len(CPU_ONLY))], "cpu_op", PID, THREADS["loader"],
                    f'"External id":0,"Input Dims":[[64, 3, 224, 224]],"Input type":["float"]')
                tl += d + r.randrange(50_000, 400_000)
            end = max(tf, tb, tl, max(g.gpu_free.values())) + 5_000
            g.x(out, begin, end - begin, f"ProfilerStep#{step}", "user_annotation", PID, THREADS["fwd"],
                f'"External id":{g.ext}')
            out.sort(key=lambda e: e[0])
            f.write("," + ",".join(e[1] for e in out))
            ts = end + 10_000
            step += 1
        tail = []  # the last few events, to make exactly N
        while g.left > 0:
            g.x(tail, ts, 1000, "aten::empty", "cpu_op", PID, THREADS["loader"], '"External id":0')
            ts += 2000
        if tail:
            f.write("," + ",".join(e[1] for e in tail))
        f.write(f',{{"ph":"X","cat":"Trace","ts":{us(t0)},"dur":{us(ts - t0)},"pid":"Spans",'
                f'"tid":"PyTorch Profiler","name":"PyTorch Profiler (0)","args":{{"Op count":0}}}}')
        f.write(f',{{"name":"Iteration Start: PyTorch Profiler","ph":"i","s":"g","pid":"Traces",'
                f'"tid":"Trace PyTorch Profiler","ts":{us(t0)}}}')
        f.write(']}\n')


if __name__ == "__main__":
    main()
