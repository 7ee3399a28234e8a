"""memory_viz's Active Memory Timeline of a CUDA caching-allocator snapshot, replayed with
Python's own pickle module: the one independent replay the snapshot tests share
(tests/py/test_memory_snapshot.py, tests/web/input_reference.py).

Bytes in use start at what must already have been live before the first trace entry (blocks
active at the snapshot that the trace never allocated, and frees of earlier allocations), then
+size at each alloc and -size at each free_completed."""
import gzip
import pickle


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return pickle.load(f)


def device_trace(snap, dev):
    traces = snap.get("device_traces") or []
    return traces[dev] if dev < len(traces) else []


def starting_bytes(snap, dev):
    trace = device_trace(snap, dev)
    live, start = set(), 0
    for e in trace:
        if e["action"] == "alloc":
            live.add(e["addr"])
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                live.discard(e["addr"])
            else:
                start += e["size"]
    for seg in snap["segments"]:
        if seg.get("device", 0) != dev:
            continue
        addr = seg["address"]
        for b in seg["blocks"]:
            a = b.get("address", addr)
            addr = a + b["size"]
            if b["state"] == "active_allocated" and a not in live:
                start += b["size"]
    return start


def active_curve(snap, dev):
    """Yields (index, entry, bytes in use after it) for each trace entry of device `dev`."""
    cur = starting_bytes(snap, dev)
    for i, e in enumerate(device_trace(snap, dev)):
        if e["action"] == "alloc":
            cur += e["size"]
        elif e["action"] == "free_completed":
            cur -= e["size"]
        yield i, e, cur
