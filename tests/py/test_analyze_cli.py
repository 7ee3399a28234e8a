"""`mlprof analyze --json`: one object with every analysis, each equal to its own command's
--json; bottleneck findings carry evidence; bad input exits 2 with a one-line error."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import analyze_reference as ar  # noqa: E402
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]


GPU_TRACE = shared_path("traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz")
paths = [os.path.join(DATA, n) for n in ["a_mlp_b32_w64.kineto.json.gz", "c_leaky.kineto.json.gz", "mlp_bs64.json.gz"]]
for path in paths + ([GPU_TRACE] if GPU_TRACE else []):
    name = os.path.basename(path)
    full = ar.run_json(MLPROF, "analyze", path)
    for key in ["summary", "steps", "memory", "leaks", "flops", "bottlenecks", "gpu", "kernels"]:
        check(key in full, f"{name}: analyze has {key}")
    for cmd in ["steps", "leaks", "bottlenecks"]:
        check(full[cmd] == ar.run_json(MLPROF, cmd, path), f"{name}: analyze.{cmd} == {cmd} --json")
    for f in full["bottlenecks"]["findings"]:
        check(f["evidence"] and f["rule"] and f["recommendation"], f"{name}: {f['kind']} has evidence")
    savings = [f["est_savings_ns"] for f in full["bottlenecks"]["findings"]]
    check(savings == sorted(savings, reverse=True), f"{name}: ranked by savings")
    gpu = path == GPU_TRACE
    check(("unavailable" not in full["gpu"]) == gpu, f"{name}: gpu result iff GPU tracks")

# mlp_bs64 is data-loading bound; c_leaky leaks.
kinds = [f["kind"] for f in ar.run_json(MLPROF, "bottlenecks", os.path.join(DATA, "mlp_bs64.json.gz"))["findings"]]
check("data_loading" in kinds, f"mlp_bs64: data_loading finding ({kinds})")
kinds = [f["kind"] for f in ar.run_json(MLPROF, "bottlenecks", os.path.join(DATA, "c_leaky.kineto.json.gz"))["findings"]]
check("memory_leak" in kinds, f"c_leaky: memory_leak finding ({kinds})")

with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    f.write('{"traceEvents": [ {"ph": "X", "name": ')
    bad = f.name
for cmd in ["analyze", "steps", "memory", "leaks", "flops", "bottlenecks", "ops"]:
    out = subprocess.run([MLPROF, cmd, bad], capture_output=True, text=True)
    check(out.returncode == 2, f"{cmd} on truncated JSON exits 2 (got {out.returncode})")
    check(out.stderr.count("\n") == 1 and bad in out.stderr, f"{cmd}: one-line error naming the file")
os.unlink(bad)
finish()
