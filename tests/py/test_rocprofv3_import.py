"""rocprofv3 JSON (issue 34 item 2): mlprof's kernels per device and per name, and GPU busy
time, equal a computation with Python's json module over the same file (kernel_dispatch
records, kernel_symbols, agents); a cut file is one line and exit 2."""
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402
from nsys_reference import union_ns  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]
path = shared_path("traces/rocm/rocprofv3/908_results.json.gz")
if path:
    tool = json.load(gzip.open(path))["rocprofiler-sdk-tool"][0]
    gpu = {a["id"]["handle"]: a["gpu_index"] for a in tool["agents"] if a["type"] == 2}
    names = {k["kernel_id"]: k["formatted_kernel_name"] or k["kernel_name"] for k in tool["kernel_symbols"]}
    by_name, per_dev, iv = {}, collections.Counter(), collections.defaultdict(list)
    for r in tool["buffer_records"]["kernel_dispatch"]:
        info = r["dispatch_info"]
        dev = gpu[info["agent_id"]["handle"]]
        s, e = r["start_timestamp"], r["end_timestamp"]
        n = names[info["kernel_id"]]
        c, t = by_name.get(n, (0, 0))
        by_name[n] = (c + 1, t + e - s)
        per_dev[dev] += 1
        iv[dev].append((s, e))
    kernels = mlprof_json(MLPROF, "kernels", path)
    got = {k["name"]: (k["count"], k["total_ns"]) for k in kernels["kernels"] if k["kind"] == "kernel"}
    check(got == by_name, f"per-name kernels: {len(got)} names, expected {len(by_name)}")
    g = mlprof_json(MLPROF, "gpu", path)
    busy = {d["device"]: d["gpu_busy_ns"] for d in g["devices"]}
    check(busy == {d: union_ns(v) for d, v in iv.items()}, f"GPU busy {busy}")
    s = mlprof_json(MLPROF, "summary", path)
    check(s["format"] == "rocprofv3" and s["devices"] and "MI350X" in s["devices"][0], f"summary {s['devices'][:1]}")
    check(sum(per_dev.values()) == sum(c for c, _ in got.values()), "kernel count")
    for cmd in (["analyze", path], ["report", path, "-o", os.devnull]):
        r = subprocess.run([MLPROF, *cmd], capture_output=True, text=True)
        check(r.returncode == 0, f"{cmd[0]} exit {r.returncode}: {r.stderr[-300:]}")
    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, "cut.json.gz")
        data = gzip.decompress(open(path, "rb").read())
        open(cut, "wb").write(gzip.compress(data[: len(data) // 2]))
        r = subprocess.run([MLPROF, "summary", cut], capture_output=True, text=True)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and cut in r.stderr,
              f"cut file: exit {r.returncode}: {r.stderr!r}")
finish()
