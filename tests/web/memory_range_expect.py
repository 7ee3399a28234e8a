"""Allocations of a Kineto trace allocated or freed inside a time range, computed from the trace's
JSON alone: the expected rows of the report's memory view after a drag across its chart
(tests/web/memory_range_test.mjs).

Pairing rule (the TensorBoard plugin's): a free releases the open allocation at the same address
of the same process and device; a second allocation at an open address replaces it.
Usage: memory_range_expect.py TRACE BEGIN_NS LO_NS HI_NS
  BEGIN_NS: the trace's start (the report's time origin); LO/HI: the range on the chart's axis,
  relative to it. Prints {"devices": {label: {"rows": n, "bytes": b, "total": n_all}}}.
"""
import gzip
import json
import sys


def device_label(dtype, did):
    return "CPU" if dtype == 0 else (f"CUDA:{did}" if dtype == 1 else f"other:{did}")


def allocations(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    mem = [e for e in events if e.get("name") == "[memory]" and e.get("ph") in ("i", "I")]
    order = sorted(range(len(mem)), key=lambda i: float(mem[i]["ts"]))  # stable: ties in input order
    open_allocs = {}  # (pid, dtype, did) -> {addr: allocation}
    out = []
    for i in order:
        e = mem[i]
        a = e.get("args") or {}
        b = int(a.get("Bytes", 0))
        addr = int(a.get("Addr", 0))
        dtype, did = int(a.get("Device Type", 0)), int(a.get("Device Id", -1))
        space = open_allocs.setdefault((e.get("pid"), dtype, did), {})
        ts_ns = round(float(e["ts"]) * 1000)
        if b > 0:
            rec = {"device": device_label(dtype, did), "ts_ns": ts_ns, "freed_ns": None, "bytes": b}
            out.append(rec)
            if addr != 0:
                space[addr] = rec
        elif b < 0 and addr in space:
            space.pop(addr)["freed_ns"] = ts_ns
    return out


def main():
    path, begin, lo, hi = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    res = {}
    for r in allocations(path):
        d = res.setdefault(r["device"], {"rows": 0, "bytes": 0, "total": 0})
        d["total"] += 1
        at = r["ts_ns"] - begin
        freed = None if r["freed_ns"] is None else r["freed_ns"] - begin
        if lo <= at <= hi or (freed is not None and lo <= freed <= hi):
            d["rows"] += 1
            d["bytes"] += r["bytes"]
    print(json.dumps({"devices": res}))


if __name__ == "__main__":
    main()
