"""JAX/XLA XSpace profiles (issue 34 item 3): mlprof's kernels per device and per name, device
busy time, memcpy bytes, launches and host events equal a protobuf wire decoder written in
Python (xplane_reference.py) over the same file; the corrupt upstream file and cut or
bit-flipped copies are one-line errors with exit 2, never a crash."""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402
from shared_data import shared_path  # noqa: E402
from xplane_reference import device_reference  # noqa: E402

MLPROF = sys.argv[1]
FILES = [p for p in (shared_path("traces/jax/" + n) for n in [
    "jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb",
    "jax_conv_minimal_08/tw003.xplane.pb", "te_fused_attn.xplane.pb"]) if p]


def sql(path, query):
    out = subprocess.run([MLPROF, "sql", path, query, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["rows"]  # {"schema": "mlprof.sql/1", "columns", "rows"}


for path in FILES:
    name = os.path.basename(path)
    ref = device_reference(path)
    kernels = mlprof_json(MLPROF, "kernels", path)
    got = {k["name"]: (k["count"], k["total_ns"]) for k in kernels["kernels"] if k["kind"] == "kernel"}
    check(got == ref["by_name"], f"{name}: per-name kernels {len(got)} names, expected {len(ref['by_name'])}")
    per_dev = sql(path, "select t.device, count(*) n from slice s join track t on t.id = s.track_id "
                  "where s.category = 'kernel' group by 1")
    check({r["device"]: r["n"] for r in per_dev} == dict(ref["kernels"]), f"{name}: kernels per device {per_dev}")
    gpu = mlprof_json(MLPROF, "gpu", path)
    busy = {d["device"]: d["gpu_busy_ns"] for d in gpu["devices"]}
    check(busy == ref["busy_ns"], f"{name}: device busy {busy}, expected {ref['busy_ns']}")
    copied = sum(m["bytes"] for m in gpu["memory_bandwidth"] if m["kind"].startswith("Memcpy"))
    check(copied == ref["memcpy_bytes"], f"{name}: memcpy bytes {copied}, expected {ref['memcpy_bytes']}")
    cats = {r["category"]: r["n"] for r in sql(path, "select category, count(*) n from slice group by 1")}
    check(cats.get("gpu_memcpy", 0) == ref["memcpys"], f"{name}: memcpys {cats}, expected {ref['memcpys']}")
    check(cats.get("cuda_runtime", 0) == ref["launches"], f"{name}: launches {cats}, expected {ref['launches']}")
    host = cats.get("cuda_runtime", 0) + cats.get("cpu_op", 0) + cats.get("python_function", 0)
    check(host == ref["host_events"], f"{name}: host events {host}, expected {ref['host_events']}")
    mem = sql(path, "select count(*) n from memory")
    check(mem[0]["n"] == ref["memory_events"], f"{name}: memory events {mem}, expected {ref['memory_events']}")
    summary = mlprof_json(MLPROF, "summary", path)
    check(summary["format"] == "xspace" and "device events" in summary.get("import_line", ""), f"{name}: summary")
    for cmd in (["analyze", path], ["report", path, "-o", os.devnull]):
        r = subprocess.run([MLPROF, *cmd], capture_output=True, text=True)
        check(r.returncode == 0, f"{name}: {cmd[0]} exit {r.returncode}: {r.stderr[-300:]}")


def bad(p, what):
    r = subprocess.run([MLPROF, "summary", p], capture_output=True)
    err = r.stderr.decode("utf-8", "replace").strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and p in err[0] and not r.stdout,
          f"{what}: exit {r.returncode}, stderr {err}")


damaged = shared_path("traces/jax/damaged/tpu_inference_2.xplane.pb")
if damaged:
    bad(damaged, "corrupt upstream file")
if FILES:
    data = open(FILES[-1], "rb").read()
    with tempfile.TemporaryDirectory() as tmp:
        rnd = random.Random(7)
        for i, cut in enumerate([10, len(data) // 3, len(data) - 1]):
            p = os.path.join(tmp, f"cut{i}.xplane.pb")
            open(p, "wb").write(data[:cut])
            bad(p, f"cut at {cut}")
        for i in range(20):  # bit flips: read or refused, never a crash or hang
            d = bytearray(data)
            for _ in range(5):
                d[rnd.randrange(len(d))] ^= 1 << rnd.randrange(8)
            p = os.path.join(tmp, f"flip{i}.xplane.pb")
            open(p, "wb").write(d)
            r = subprocess.run([MLPROF, "summary", p], capture_output=True, timeout=60)
            check(r.returncode in (0, 2), f"bit flips {i}: exit {r.returncode}")

finish()
