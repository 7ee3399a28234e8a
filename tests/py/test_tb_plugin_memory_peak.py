"""`memory --json` on the TensorBoard plugin's real ResNet-50 traces (shared data,
peers/tb_plugin/traces) names the op that reached each device's peak, against an independent
replay: old Kineto writes op events with `"tid": "N"` (a string) and `[memory]` events with
`"tid": N`; a numeric string is the number (Perfetto's rule), so the peak allocation lands in its
op. Before that rule every peak read "(no op)".

The replay, per device (Device Type, Device Id): `[memory]` events in time order (input order
among equal times), allocated = the running sum of Bytes (these traces record no Total
Allocated); the peak is the first event that reaches the highest sum; its op is the innermost
`X` slice on the same pid and tid (ids compared as numbers) whose [ts, ts + dur] holds it.
Usage: test_tb_plugin_memory_peak.py MLPROF."""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require, shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]
TRACES = [
    "peers/tb_plugin/traces/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "peers/tb_plugin/traces/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
]
for rel in TRACES:
    require(rel)


def num_id(x):
    if isinstance(x, str) and x.lstrip("-").isdigit():
        return int(x)
    return x


def device_name(dtype, did):
    return "CPU" if dtype == 0 else f"CUDA:{did}" if dtype == 1 else f"other:{did}"


def replay(path):
    events = json.load(gzip.open(path))["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X" and "dur" in e]
    mem = [e for e in events if e.get("ph") == "i" and e.get("name") == "[memory]"]
    mem.sort(key=lambda e: e["ts"])  # stable: input order among equal times
    by_device = {}
    for e in mem:
        a = e["args"]
        by_device.setdefault(device_name(a["Device Type"], a["Device Id"]), []).append(e)
    out = {}
    for dev, evs in by_device.items():
        cur, peak, at = 0, None, None
        for e in evs:
            cur += e["args"]["Bytes"]
            if peak is None or cur > peak:
                peak, at = cur, e
        key = (num_id(at["pid"]), num_id(at["tid"]))
        holding = [s for s in slices if (num_id(s.get("pid")), num_id(s.get("tid"))) == key
                   and s["ts"] <= at["ts"] <= s["ts"] + s["dur"]]
        holding.sort(key=lambda s: (s["ts"], -s["dur"]))
        out[dev] = (peak, holding[-1]["name"] if holding else "")
    return out


for rel in TRACES:
    path = shared_path(rel)
    want = replay(path)
    p = subprocess.run([MLPROF, "memory", path, "--json"], capture_output=True, text=True)
    check(p.returncode == 0, f"{rel}: exit {p.returncode}: {p.stderr.strip()[:200]}")
    got = {d["device"]: d for d in json.loads(p.stdout)["devices"]}
    check(set(got) == set(want), f"{rel}: devices {sorted(got)} vs {sorted(want)}")
    for dev, (peak, op) in want.items():
        d = got.get(dev, {})
        check(op != "", f"{rel} {dev}: the replay finds the peak's op")
        check(d.get("peak_allocated") == peak, f"{rel} {dev}: peak {d.get('peak_allocated')} vs {peak}")
        check(d.get("peak_op") == op, f"{rel} {dev}: peak op {d.get('peak_op')!r} vs {op!r}")
finish()
