"""Record a CUDA caching-allocator snapshot taken at a real out-of-memory error (for mlprof's
memory-snapshot OOM view and its tests): a small model trains one step, then a KV-cache-like
buffer list grows in 4 GiB blocks until the allocator raises OutOfMemoryError; the snapshot is
dumped right there. Also writes PyTorch's own account of the OOM (its exception message and
mem_get_info) as the test's independent expected values.
Usage: python3 oom_snapshot.py OUT_DIR"""
import gzip
import json
import os
import pickle
import re
import sys

import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")


def train_step(model, opt):
    x = torch.randn(256, 4096, device="cuda")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def grow_kv_cache(cache, block_bytes):
    while True:
        cache.append(torch.empty(block_bytes, dtype=torch.uint8, device="cuda"))


model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(4)]).cuda()
opt = torch.optim.AdamW(model.parameters())
train_step(model, opt)
cache = []
info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
try:
    grow_kv_cache(cache, 4 << 30)
except torch.OutOfMemoryError as e:
    msg = str(e)
    free, total = torch.cuda.mem_get_info()
    info.update(message=msg.splitlines()[0], blocks_allocated=len(cache), block_bytes=4 << 30,
                mem_get_info_free=free, mem_get_info_total=total,
                memory_allocated=torch.cuda.memory_allocated(), memory_reserved=torch.cuda.memory_reserved())
    m = re.search(r"Tried to allocate ([\d.]+) (GiB|MiB)", msg)
    if m:
        info["tried_to_allocate_text"] = m.group(0)
    snap = torch.cuda.memory._snapshot()
with gzip.open(os.path.join(out, "h100_oom_snapshot.pickle.gz"), "wb") as f:
    pickle.dump(snap, f)
with open(os.path.join(out, "oom_info.json"), "w") as f:
    json.dump(info, f, indent=1)
print(json.dumps(info, indent=1))
ooms = [e for d in snap["device_traces"] for e in d if e.get("action") == "oom"]
print("oom trace entries:", len(ooms), [(e.get("size"), e.get("addr")) for e in ooms])
print("entries:", sum(len(d) for d in snap["device_traces"]), "segments:", len(snap["segments"]))
