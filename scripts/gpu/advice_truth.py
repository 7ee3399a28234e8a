"""Ground truth for mlprof's advice on a real GPU (issue 25): each scenario is a training-like step
with one planted problem, run twice, as written (baseline) and with the problem fixed the way the
advice says. Both variants are timed without the profiler and recorded with torch.profiler, so
the saving mlprof's replay predicts from the baseline trace can be checked against the step time
the fixed program really has (in the fixed trace, and unprofiled).

  python3 advice_truth.py --out DIR [--scenarios launch,sync,...] [--device cpu --quick]

Writes DIR/<scenario>_<variant>.json.gz (Kineto traces) and DIR/truth.json (per variant: the
unprofiled mean step time and the profiled trace's ProfilerStep durations as this program saw
them, the GPU, the versions).

Scenarios (baseline -> fixed):
  launch    600 tiny elementwise kernels per step -> the step captured in a CUDA graph, replayed
  sync      a GPU-bound step (bf16 GEMMs) ending in torch.cuda.synchronize() + loss.item()
            -> no sync (the host waits on a busy GPU: the truth is that it saves ~nothing)
  dataload  a DataLoader doing 8 ms of host work per batch in the main process, then GEMMs and
            loss.item() -> the same loader with 2 workers prefetching
  pageable  a 256 MiB pageable host tensor copied in each step, then GEMMs -> pinned + non_blocking
  tf32      fp32 GEMMs with TF32 off -> TF32 allowed (tensor cores)
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import time

import torch


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


class SleepDataset(torch.utils.data.Dataset):
    """Host work per item, like decoding and augmenting a sample."""

    def __init__(self, n, ms, shape):
        self.n, self.ms, self.shape = n, ms, shape

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.ms / 1000.0)
        return torch.full(self.shape, float(i % 7))


def build(name, variant, dev, quick):
    """Returns step(i) for the scenario/variant, with its inputs made."""
    big = 2048 if quick else 8192
    if name == "launch":
        x = torch.randn(4096, device=dev)
        n = 50 if quick else 300

        def body():
            y = x
            for _ in range(n):
                y = y * 1.0001 + 0.0001
            return y

        if variant == "baseline" or dev.type != "cuda":
            return lambda i: body()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                body()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            body()
        return lambda i: g.replay()
    if name == "sync":
        a = torch.randn(big, big, device=dev, dtype=torch.bfloat16)
        b = torch.randn(big, big, device=dev, dtype=torch.bfloat16) / big

        def step(i):
            y = a
            for _ in range(6):
                y = y @ b
            loss = y.float().mean()
            if variant == "baseline":
                sync(dev)
                loss.item()
            return loss

        return step
    if name == "dataload":
        workers = 0 if variant == "baseline" else 2
        ds = SleepDataset(100000, 2.0, (64, 64))
        extra = {"prefetch_factor": 4, "persistent_workers": True} if workers else {}
        dl = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=workers, **extra)
        it = iter(dl)
        a = torch.randn(big, big, device=dev, dtype=torch.bfloat16)
        b = torch.randn(big, big, device=dev, dtype=torch.bfloat16) / big

        def step(i):
            batch = next(it).to(dev)
            y = a
            for _ in range(3):
                y = y @ b
            loss = y.float().mean() + batch.mean()
            return loss.item()

        return step
    if name == "pageable":
        n = (1 << 22) if quick else (1 << 26)
        h = torch.randn(n)
        if variant == "fixed" and dev.type == "cuda":
            h = h.pin_memory()
        a = torch.randn(big, big, device=dev, dtype=torch.bfloat16)
        b = torch.randn(big, big, device=dev, dtype=torch.bfloat16) / big

        def step(i):
            d = h.to(dev, non_blocking=(variant == "fixed"))
            y = a
            for _ in range(3):
                y = y @ b
            return (y.float().mean() + d[:16].sum()).item()

        return step
    if name == "tf32":
        n = 1024 if quick else 8192
        a = torch.randn(n, n, device=dev)
        b = torch.randn(n, n, device=dev) / n

        def step(i):
            torch.backends.cuda.matmul.allow_tf32 = variant == "fixed"
            y = a
            for _ in range(4):
                y = y @ b
            return y.mean().item()

        return step
    raise SystemExit(f"unknown scenario {name}")


def timed(step, dev, warm, n, rounds=3):
    """The median over `rounds` of the mean step time of n steps (ns), after `warm` steps."""
    for i in range(warm):
        step(i)
    means = []
    for r in range(rounds):
        sync(dev)
        t0 = time.perf_counter()
        for i in range(n):
            step(warm + r * n + i)
        sync(dev)
        means.append((time.perf_counter() - t0) / n * 1e9)
    return statistics.median(means), means


def profiled(step, dev, path, active):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    durs = []
    sched = torch.profiler.schedule(wait=1, warmup=2, active=active, repeat=1)
    tmp = path[:-3]
    with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                profile_memory=False, with_stack=False) as prof:
        for i in range(1 + 2 + active):
            t0 = time.perf_counter()
            step(i)
            durs.append((time.perf_counter() - t0) * 1e9)
            prof.step()
        sync(dev)
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(tmp)
    return durs[3:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--scenarios", default="launch,sync,dataload,pageable,tf32")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--active", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device(args.device)
    os.makedirs(args.out, exist_ok=True)
    truth = {"torch": torch.__version__, "device": args.device, "scenarios": {}}
    if dev.type == "cuda":
        truth["gpu"] = torch.cuda.get_device_name()
        truth["cuda"] = torch.version.cuda
        truth["capability"] = list(torch.cuda.get_device_capability())
    for name in args.scenarios.split(","):
        res = {}
        for variant in ("baseline", "fixed"):
            torch.backends.cuda.matmul.allow_tf32 = False
            step = build(name, variant, dev, args.quick)
            mean_ns, rounds = timed(step, dev, 10, args.steps)
            path = os.path.join(args.out, f"{name}_{variant}.json.gz")
            # Host time per profiled step (no sync added: the fixed sync variant must not get one).
            durs = profiled(step, dev, path, args.active)
            res[variant] = {"unprofiled_step_ns": mean_ns, "unprofiled_rounds_ns": rounds,
                            "profiled_step_wall_ns": durs,
                            "trace": os.path.basename(path)}
            print(name, variant, f"{mean_ns / 1e6:.3f} ms/step unprofiled,",
                  f"profiled median {statistics.median(durs) / 1e6:.3f} ms", flush=True)
            del step
        truth["scenarios"][name] = res
    with open(os.path.join(args.out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
