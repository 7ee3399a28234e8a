"""Triton Proton profiles (the hatchet JSON proton-viewer reads): `mlprof roofline --json` against a
reader written here from Proton's format (a [call tree, devices] pair; each leaf frame's metrics
count, time (ns), flops8/16/32/64 and bytes): per kernel FLOPs, bytes, GPU time and rates;
`summary` reads them; damaged profiles are a one-line error, exit 2."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]


def leaves(node, out):
    kids = node.get("children") or []
    if not kids:
        m = node["metrics"]
        if m.get("time (ns)", 0) > 0:
            flops = sum(v for k, v in m.items() if k.startswith("flops"))
            out.append((node["frame"]["name"], flops, m.get("bytes", 0), m["time (ns)"]))
    for c in kids:
        leaves(c, out)
    return out


def run(*args):
    return subprocess.run([MLPROF, *args], capture_output=True, text=True)


files = [p for p in (shared_path("traces/roofline/proton/example_cuda.json"),
                     shared_path("traces/roofline/proton/example_hip.json")) if p]
if not files:
    print("SKIP: the shared Proton examples are absent (MLPROF_SHARED_DIR)")
    sys.exit(77)

for path in files:
    base = os.path.basename(path)
    with open(path) as f:
        doc = json.load(f)
    want = leaves(doc[0], [])
    r = run("roofline", path, "--json", "--top", "0")
    if not check(r.returncode == 0, f"{base}: roofline exit {r.returncode} {r.stderr[:200]}"):
        continue
    got = json.loads(r.stdout)
    rows = {x["name"]: x for x in got["shapes"]}
    check(len(rows) == len(want), f"{base}: {len(rows)} kernels vs {len(want)}")
    for name, flops, nbytes, t in want:
        x = rows.get(name)
        if not check(x is not None, f"{base} {name}: a roofline row"):
            continue
        check(x["flops"] == flops, f"{base} {name}: flops {x['flops']} vs {flops}")
        check(abs(x["bytes"] - nbytes) <= 1e-6 * nbytes, f"{base} {name}: bytes {x['bytes']} vs {nbytes}")
        check(x["kernel_ns"] == round(t), f"{base} {name}: time {x['kernel_ns']} vs {t}")
        tf = flops / t / 1e3  # FLOP/ns -> TFLOP/s
        check(abs(x["achieved_tflops"] - tf) <= 1e-9 * tf, f"{base} {name}: {x['achieved_tflops']} vs {tf} TFLOP/s")
        tb = nbytes / t / 1e3
        check(abs(x["achieved_tbps"] - tb) <= 1e-9 * tb, f"{base} {name}: {x['achieved_tbps']} vs {tb} TB/s")
    check(got["flops"] == sum(w[1] for w in want), f"{base}: total flops")
    # The same numbers in `mlprof flops` (one model, one GPU time).
    fl = json.loads(run("flops", path, "--json", "--top", "0").stdout)
    fo = {o["name"]: o for o in fl["ops"]}
    check(all(fo[n]["flops"] == rows[n]["flops"] and fo[n]["gpu_ns"] == rows[n]["kernel_ns"]
              for n, f, _, _ in want if f > 0), f"{base}: flops rows = roofline rows")
    s = run("summary", path)
    check(s.returncode == 0 and "foo0" in s.stdout, f"{base}: summary lists the kernels ({s.stderr[:200]})")

# example_cuda's device 1 is sm_90 with 132 SMs: an H100 SXM; its foo0 does fp8 (flops8) FLOPs.
cuda = shared_path("traces/roofline/proton/example_cuda.json")
if cuda:
    g = json.loads(run("roofline", cuda, "--json", "--device", "H100 SXM").stdout)
    foo0 = [x for x in g["shapes"] if x["name"] == "foo0"][0]
    check(g["peaks_known"] and foo0["dtype"] == "fp8", f"foo0 dtype {foo0['dtype']}")
    check(foo0["peak_tflops"] == g["peaks"]["fp8_tflops"], f"foo0 under the fp8 peak {foo0['peak_tflops']}")

with tempfile.TemporaryDirectory() as tmp:
    for name, text, what in (
            ("cut.json", '[{"frame": {"name": "ROOT"}, "metrics": {"count": 0', "not readable"),
            ("neg.json", '[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": '
             '{"name": "k"}, "metrics": {"time (ns)": -5, "count": 1}}]}, {}]', "negative"),
            ("str.json", '[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": '
             '{"name": "k"}, "metrics": {"time (ns)": "soon", "count": 1}}]}, {}]', "not a number")):
        p = os.path.join(tmp, name)
        with open(p, "w") as f:
            f.write(text)
        r = run("roofline", p)
        check(r.returncode == 2 and r.stdout == "" and name in r.stderr and what in r.stderr
              and r.stderr.count("\n") == 1, f"{name}: exit 2, one line ({r.returncode} {r.stderr!r})")
finish()
