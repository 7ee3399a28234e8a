"""`mlprof kernels/gpu/ranks` end to end, checked against an independent stdlib computation over
the same Kineto JSON: per-kernel totals, pageable copies and bandwidth, collective sizes, and
exit code 2 with a one-line error on bad input. Usage: test_gpu_cli.py MLPROF TESTS_DATA.
The Kineto GPU traces (Holistic Trace Analysis's test data) come from the shared data folder."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
from shared_data import exit_code, shared_path  # noqa: E402

SIMPLE_ADD = "traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"
NCCL = "traces/kineto-gpu/nccl_parser_config/nccl_data.json.gz"


def run(mlprof, *args, expect=0):
    p = subprocess.run([mlprof, *args], capture_output=True, text=True)
    assert p.returncode == expect, f"{args}: exit {p.returncode}: {p.stderr}"
    return p


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


def ns(us):
    # Kineto writes microseconds, sometimes with 3 decimals (ns resolution).
    return round(us * 1000)


def kernel_totals(events):
    """Per kernel name: (count, total ns) over kernel/memcpy/memset events."""
    out = defaultdict(lambda: [0, 0])
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            out[e["name"]][0] += 1
            out[e["name"]][1] += ns(e["ts"] + e["dur"]) - ns(e["ts"])
    return out


def check_kernels(mlprof, path):
    got = json.loads(run(mlprof, "kernels", path, "--json").stdout)
    want = kernel_totals(load(path))
    rows = {k["name"]: k for k in got["kernels"]}
    assert set(rows) == set(want), set(rows) ^ set(want)
    for name, (count, total) in want.items():
        assert rows[name]["count"] == count, name
        assert abs(rows[name]["total_ns"] - total) <= count, (name, rows[name]["total_ns"], total)
    assert got["total_gpu_ns"] == sum(rows[n]["total_ns"] for n in rows)


def check_gpu(mlprof, path):
    got = json.loads(run(mlprof, "gpu", path, "--json").stdout)
    events = load(path)
    copies = [e for e in events if e.get("cat") == "gpu_memcpy"]
    pageable = [e for e in copies if "Pageable" in e["name"]]
    assert got["pageable_memcpy_count"] == len(pageable)
    assert got["pageable_memcpy_bytes"] == sum(e["args"]["bytes"] for e in pageable)
    htod = [b for b in got["memory_bandwidth"] if b["kind"] == "Memcpy HtoD"][0]
    bytes_ = sum(e["args"]["bytes"] for e in copies if e["name"].startswith("Memcpy HtoD"))
    time_ = sum(ns(e["dur"]) for e in copies if e["name"].startswith("Memcpy HtoD"))
    assert htod["bytes"] == bytes_
    assert abs(htod["achieved_gbps"] - bytes_ / time_) < 1e-9 * bytes_ / time_
    # Span over kernels, copies and sets (no cuda_sync by default).
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    span = max(ns(e["ts"] + e["dur"]) for e in gpu) - min(ns(e["ts"]) for e in gpu)
    assert got["temporal_breakdown"]["span_ns"] == span, (got["temporal_breakdown"], span)
    text = run(mlprof, "gpu", path).stdout
    assert "Idle time by cause" in text and "pageable" in text


def check_ranks(mlprof, src):
    src = os.path.abspath(src)
    with tempfile.TemporaryDirectory() as d:
        os.symlink(src, os.path.join(d, "rank-0.json.gz"))
        got = json.loads(run(mlprof, "ranks", d, "--json").stdout)
    assert [r["rank"] for r in got["ranks"]] == [0]
    # Collectives from the kernels' record_param_comms args: bytes = In msg nelems x 4 (Float).
    want = defaultdict(lambda: [0, 0, 0])
    for e in load(src):
        a = e.get("args") or {}
        if e.get("cat") == "kernel" and "Collective name" in a:
            size = {"Float": 4, "Int": 4, "Long": 8, "Half": 2, "BFloat16": 2, "Byte": 1}
            w = want[a["Collective name"]]
            w[0] += 1
            w[1] += a["In msg nelems"] * size.get(a["dtype"], 0)
            w[2] += ns(e["ts"] + e["dur"]) - ns(e["ts"])
    colls = {c["name"]: c for c in got["collectives"]}
    assert want, "the trace has sized collectives"
    for name, (count, bytes_, time_) in want.items():
        assert colls[name]["count"] == count, name
        assert colls[name]["bytes"] == bytes_, (name, colls[name]["bytes"], bytes_)
        assert abs(colls[name]["time_ns"] - time_) <= count, name


def check_bad_input(mlprof):
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "broken.json")
        with open(bad, "w") as f:
            f.write('{"traceEvents": [ {"ph": "X", ')
        for cmd in ("kernels", "gpu"):
            p = run(mlprof, cmd, bad, expect=2)
            assert "broken.json" in p.stderr and p.stderr.count("\n") == 1, p.stderr
        p = run(mlprof, "ranks", os.path.join(d, "missing"), expect=2)
        assert "missing" in p.stderr


def main():
    mlprof = sys.argv[1]
    simple_add, nccl = shared_path(SIMPLE_ADD), shared_path(NCCL)
    if simple_add:
        check_kernels(mlprof, simple_add)
        check_gpu(mlprof, simple_add)
    if nccl:
        check_ranks(mlprof, nccl)
    check_bad_input(mlprof)
    print("ok")
    sys.exit(exit_code(0))


if __name__ == "__main__":
    main()
