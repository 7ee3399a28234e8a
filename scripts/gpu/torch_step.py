"""A small bf16 transformer training step for the GPU check (scripts/gpu_check.sh).

Modes: eager, compile (torch.compile, inductor/Triton) and graphs (torch.compile
mode="reduce-overhead": CUDA graph replays). The program times each step itself with CUDA events
and prints one JSON line with what it measured, so the capture (`mlprof run --gpu`) and
torch.profiler's trace can be checked against it.

  python3 torch_step.py --mode eager --steps 6 [--gap-ms 100] [--profile T.json.gz]
                        [--snapshot S.pickle] [--result R.json]

--gap-ms synchronizes and sleeps between steps so a capture without step markers can be cut into
steps by its GPU idle gaps. --profile records the last --active steps with torch.profiler
(record_shapes, profile_memory, with_stack, with_modules; ProfilerStep#N markers).
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["eager", "compile", "graphs"], default="eager")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--active", type=int, default=2, help="steps recorded by --profile (the last)")
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--profile-from", type=int,
                    help="record every step from this one on (no schedule): with --mode graphs "
                    "and 1, the trace holds the CUDA graph capture pass and the replays")
    ap.add_argument("--gap-ms", type=float, default=0.0)
    ap.add_argument("--profile")
    ap.add_argument("--snapshot")
    ap.add_argument("--result")
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = TinyLM(args.vocab, args.d, args.heads, args.layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fwd = model
    if args.mode == "compile":
        fwd = torch.compile(model)
    elif args.mode == "graphs":
        fwd = torch.compile(model, mode="reduce-overhead")
    x = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
    y = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)

    def step():
        if args.mode == "graphs":
            torch.compiler.cudagraph_mark_step_begin()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = fwd(x)
            loss = F.cross_entropy(logits.float().view(-1, args.vocab), y.view(-1))
        loss.backward()
        opt.step()
        return loss

    if args.snapshot:
        torch.cuda.memory._record_memory_history(max_entries=200000)

    prof = None
    first_profiled = args.steps - args.active
    if args.profile_from is not None:
        first_profiled = args.profile_from
    if args.profile:
        from torch.profiler import ProfilerActivity, profile, schedule

        def save(p):
            p.export_chrome_trace(args.profile)

        sched = None
        if args.profile_from is None:
            sched = schedule(wait=max(first_profiled - 1, 0), warmup=1 if first_profiled else 0,
                             active=args.active, repeat=1)
        prof = profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
            on_trace_ready=save if sched else None, record_shapes=True, profile_memory=True, with_stack=True,
            with_modules=True)

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
    wall = []
    losses = []
    t_compile = time.perf_counter()
    if prof and sched:
        prof.start()
    for i in range(args.steps):
        if prof and not sched and i == first_profiled:
            prof.start()
        t0 = time.perf_counter()
        starts[i].record()
        loss = step()
        ends[i].record()
        if prof and (sched or i >= first_profiled):
            prof.step()
        if args.gap_ms > 0 or i == 0:
            torch.cuda.synchronize()
        wall.append((time.perf_counter() - t0) * 1e3)
        losses.append(loss)
        if args.gap_ms > 0:
            time.sleep(args.gap_ms / 1e3)
    torch.cuda.synchronize()
    if prof:
        prof.stop()
        if not sched:
            prof.export_chrome_trace(args.profile)
    if args.snapshot:
        torch.cuda.memory._dump_snapshot(args.snapshot)
        torch.cuda.memory._record_memory_history(enabled=None)

    result = {
        "mode": args.mode,
        "steps": args.steps,
        "profiled_steps": list(range(first_profiled, args.steps)) if args.profile else [],
        "step_gpu_ms": [s.elapsed_time(e) for s, e in zip(starts, ends)],
        "step_wall_ms": wall,
        "loss": [float(l) for l in losses],
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "memory_allocated_end": torch.cuda.memory_allocated(),
        "device": torch.cuda.get_device_name(0),
        "capability": list(torch.cuda.get_device_capability(0)),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "params": sum(p.numel() for p in model.parameters()),
        "config": {k: getattr(args, k) for k in ("layers", "d", "heads", "batch", "seq", "vocab")},
        "total_s": time.perf_counter() - t_compile,
    }
    ok = all(math.isfinite(l) for l in result["loss"])
    line = json.dumps(result)
    print(line, flush=True)
    if args.result:
        with open(args.result, "w") as f:
            f.write(line + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
