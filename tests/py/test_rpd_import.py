"""ROCm rpd_tracer databases (issue 34 item 2), plain and gzip'ed: mlprof's kernels, GPU time,
copy bytes, API calls and markers equal a computation with Python's sqlite3 module over the same
file (rpd_reference.py); a damaged .rpd.gz is a one-line error with exit 2."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402
from rpd_reference import rpd_reference  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]
FILES = [p for p in (shared_path("traces/rocm/rpd/" + n) for n in
                     ["matmul_result.rpd", "matmul_result_large.rpd", "mytrace.rpd.gz"]) if p]


def sql(path, query):
    out = subprocess.run([MLPROF, "sql", path, query, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["rows"]  # {"schema": "mlprof.sql/1", "columns", "rows"}


for path in FILES:
    name = os.path.basename(path)
    ref = rpd_reference(path)
    kernels = mlprof_json(MLPROF, "kernels", path)
    got = {k["name"]: (k["count"], k["total_ns"]) for k in kernels["kernels"] if k["kind"] == "kernel"}
    check(got == ref["by_name"], f"{name}: per-name kernels: {len(got)} names, expected {len(ref['by_name'])}")
    gpu = mlprof_json(MLPROF, "gpu", path)
    busy = {d["device"]: d["gpu_busy_ns"] for d in gpu["devices"]}
    check(busy == ref["busy_ns"], f"{name}: GPU busy {busy}, expected {ref['busy_ns']}")
    copied = sum(m["bytes"] for m in gpu["memory_bandwidth"] if m["kind"].startswith("Memcpy"))
    check(copied == ref["copy_bytes"], f"{name}: copy bytes {copied}, expected {ref['copy_bytes']}")
    per_dev = sql(path, "select t.device, count(*) n from slice s join track t on t.id = s.track_id "
                  "where s.category = 'kernel' group by 1")
    check({r["device"]: r["n"] for r in per_dev} == dict(ref["kernels"]), f"{name}: kernels per GPU {per_dev}")
    cats = {r["category"]: r["n"] for r in sql(path, "select category, count(*) n from slice group by 1")}
    check(cats.get("cuda_runtime", 0) == ref["api_calls"], f"{name}: API calls {cats}, expected {ref['api_calls']}")
    check(cats.get("cpu_op", 0) + cats.get("user_annotation", 0) == ref["markers"],
          f"{name}: markers {cats}, expected {ref['markers']}")
    check(cats.get("gpu_memcpy", 0) == ref["copies"] and cats.get("gpu_memset", 0) == ref["fills"],
          f"{name}: copies/fills {cats}")
    summary = mlprof_json(MLPROF, "summary", path)
    check(summary["format"] == "rpd" and "kernels" in summary.get("import_line", ""), f"{name}: summary")
    for cmd in (["analyze", path], ["report", path, "-o", os.devnull]):
        r = subprocess.run([MLPROF, *cmd], capture_output=True, text=True)
        check(r.returncode == 0, f"{name}: {cmd[0]} exit {r.returncode}: {r.stderr[-300:]}")

if FILES:
    with tempfile.TemporaryDirectory() as tmp:
        data = gzip.decompress(open(FILES[-1], "rb").read())
        cut = os.path.join(tmp, "cut.rpd.gz")
        with open(cut, "wb") as f:
            f.write(gzip.compress(data[: len(data) // 2]))
        r = subprocess.run([MLPROF, "summary", cut], capture_output=True, text=True)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and cut in r.stderr,
              f"truncated rpd.gz: exit {r.returncode}, {r.stderr!r}")

finish()
