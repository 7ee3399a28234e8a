"""Nsight Systems SQLite exports (issue 34 item 1): mlprof's kernels, GPU time, memcpy bytes and
NVTX ranges equal a computation with Python's sqlite3 module over the same file
(nsys_reference.py); `compare` reads the before/after pair; bad databases are one-line errors
with exit 2."""
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402
from nsys_reference import nsys_reference  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]
NAMES = ["h100_2gpu_1s.sqlite", "mfu_2gpu_before.sqlite", "mfu_2gpu_after.sqlite", "mock.sqlite"]
FILES = [p for p in (shared_path("traces/nsys/" + n) for n in NAMES) if p]


def sql(path, query):
    out = subprocess.run([MLPROF, "sql", path, query, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["rows"]  # {"schema": "mlprof.sql/1", "columns", "rows"}


for path in FILES:
    name = os.path.basename(path)
    ref = nsys_reference(path)
    kernels = mlprof_json(MLPROF, "kernels", path)
    rows = [k for k in kernels["kernels"] if k["kind"] == "kernel"]
    got = {k["name"]: (k["count"], k["total_ns"]) for k in rows}
    check(got == ref["by_name"], f"{name}: per-name kernel count and time: {len(got)} names, "
          f"expected {len(ref['by_name'])}")
    check(sum(c for c, _ in got.values()) == sum(ref["kernels"].values()),
          f"{name}: {sum(c for c, _ in got.values())} kernels, expected {sum(ref['kernels'].values())}")
    gpu = mlprof_json(MLPROF, "gpu", path)
    for d in gpu["devices"]:
        dev = d["device"]
        check(d["gpu_busy_ns"] == ref["busy_ns"].get(dev),
              f"{name}: GPU {dev} busy {d['gpu_busy_ns']} ns, expected {ref['busy_ns'].get(dev)}")
    check(len(gpu["devices"]) == len(ref["busy_ns"]), f"{name}: {len(gpu['devices'])} devices")
    per_dev = sql(path, "select d.device, count(*) n, sum(s.dur) ns from slice s join track d "
                  "on d.id = s.track_id where s.category = 'kernel' group by 1")
    check({r["device"]: (r["n"], r["ns"]) for r in per_dev} ==
          {d: (ref["kernels"][d], ref["kernel_ns"][d]) for d in ref["kernels"]},
          f"{name}: kernels and kernel time per device {per_dev}")
    copied = sum(m["bytes"] for m in gpu["memory_bandwidth"] if m["kind"].startswith("Memcpy"))
    check(copied == ref["memcpy_bytes"], f"{name}: memcpy bytes {copied}, expected {ref['memcpy_bytes']}")
    cats = {r["category"]: r["n"] for r in sql(
        path, "select category, count(*) n from slice group by 1")}
    check(cats.get("cpu_op", 0) + cats.get("user_annotation", 0) == ref["nvtx_ranges"],
          f"{name}: NVTX ranges {cats}, expected {ref['nvtx_ranges']}")
    check(cats.get("gpu_memcpy", 0) == ref["memcpys"] and cats.get("gpu_memset", 0) == ref["memsets"],
          f"{name}: memcpys/memsets {cats}")
    check(cats.get("cuda_runtime", 0) + cats.get("cuda_driver", 0) == ref["api_calls"],
          f"{name}: API calls {cats}, expected {ref['api_calls']}")
    summary = mlprof_json(MLPROF, "summary", path)
    check(summary["format"] == "nsys" and "kernels" in summary.get("import_line", ""),
          f"{name}: summary names the format and the import line")
    for cmd in (["analyze", path], ["report", path, "-o", os.devnull]):
        r = subprocess.run([MLPROF, *cmd], capture_output=True, text=True)
        check(r.returncode == 0, f"{name}: {cmd[0]} exit {r.returncode}: {r.stderr[-300:]}")
    # Launch -> kernel links: every flow joins an API call to GPU work.
    bad = sql(path, "select count(*) n from flow f join slice a on a.id = f.slice_out join slice k "
              "on k.id = f.slice_in where a.category not in ('cuda_runtime', 'cuda_driver') or "
              "k.category not in ('kernel', 'gpu_memcpy', 'gpu_memset')")
    check(bad[0]["n"] == 0, f"{name}: flows not launch -> GPU work: {bad}")

# emit_nvtx ranges are op slices named by the op, with the op id as an arg.
if FILES and os.path.basename(FILES[0]) == "h100_2gpu_1s.sqlite":
    ops = sql(FILES[0], "select name, count(*) n from slice where category = 'cpu_op' and "
              "name = 'aten::view' group by 1")
    check(ops and ops[0]["n"] > 0, f"emit_nvtx aten::view ops: {ops}")
    arg = sql(FILES[0], "select count(*) n from args a join slice s on s.id = a.event_id "
              "where a.event_type = 'slice' and s.category = 'cpu_op' and a.key = 'op_id'")
    check(arg[0]["n"] > 0, f"op_id args: {arg}")

before, after = (shared_path("traces/nsys/" + n) for n in ["mfu_2gpu_before.sqlite", "mfu_2gpu_after.sqlite"])
if before and after:
    r = subprocess.run([MLPROF, "compare", before, after], capture_output=True, text=True)
    check(r.returncode == 0 and "overall speedup" in r.stdout, f"compare on the nsys pair: {r.stderr}")

# Bad input: one line naming the file, exit 2.
with tempfile.TemporaryDirectory() as tmp:
    cases = {}
    if FILES:
        data = open(FILES[-1], "rb").read()
        cases["truncated.sqlite"] = data[: len(data) // 3]
        cases["header_only.sqlite"] = data[:100]
        rnd = random.Random(1)
        flipped = bytearray(data)
        for _ in range(200):
            flipped[rnd.randrange(1000, len(flipped))] = rnd.randrange(256)
        cases["corrupt.sqlite"] = bytes(flipped)
    cases["not_a_db.sqlite"] = b"SQLite format 3\0" + b"x" * 200
    for fname, content in cases.items():
        with open(os.path.join(tmp, fname), "wb") as f:
            f.write(content)
    other = os.path.join(tmp, "other.sqlite")
    db = sqlite3.connect(other)
    db.execute("create table t(x)")
    db.commit()
    db.close()
    empty = os.path.join(tmp, "empty_nsys.sqlite")
    db = sqlite3.connect(empty)
    db.execute("create table StringIds(id, value)")
    db.execute("create table CUPTI_ACTIVITY_KIND_KERNEL(start, end)")
    db.commit()
    db.close()
    for fname in list(cases) + ["other.sqlite", "empty_nsys.sqlite"]:
        p = os.path.join(tmp, fname)
        r = subprocess.run([MLPROF, "summary", p], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and p in lines[0] and not r.stdout,
              f"{fname}: exit {r.returncode}, stderr {r.stderr!r}")

finish()
