"""`mlprof flops` and `mlprof roofline` are one FLOP model and one GPU time per op (issue 26):
on the shared TraceLens traces (H100, MI300X) and PyTorch's profile_analysis example, every op
shows the same FLOPs, calls, GPU time and TFLOP/s in `flops --json` and `roofline --json`; no
op's rate is above its device's dense peak; and the GEMM and convolution FLOPs equal the
formulas of analyze_reference.flop_count (TraceLens's definitions, typed independently), with
stride, padding and dilation from each call's Concrete Inputs."""
import gzip
import json
import os
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import analyze_reference as ar  # noqa: E402
from checks import check, finish  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]
# Dense bf16 peaks (NVIDIA H100 SXM whitepaper, AMD MI300X datasheet), TFLOP/s.
PEAK = {"h100": 989.4, "mi300": 1307.4}
CHECKED = {"aten::mm", "aten::addmm", "aten::linear", "aten::bmm", "aten::baddbmm",
           "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution",
           "aten::_convolution"}


def run(*args):
    r = subprocess.run([MLPROF, *args, "--json"], capture_output=True, text=True)
    check(r.returncode == 0, f"{args}: exit {r.returncode} {r.stderr[:200]}")
    return json.loads(r.stdout) if r.returncode == 0 else None


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


def shapes_key(dims):
    """The roofline's shapes text: Input Dims without the trailing non-tensor []."""
    d = list(dims)
    while d and d[-1] == []:
        d.pop()
    return ", ".join("[" + ", ".join(str(x) for x in s) + "]" for s in d)


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


traces = []
for dev in ("h100", "mi300"):
    for name in ("Falconsai_nsfw_image_detection__1016002", "Qwen_Qwen1.5-0.5B-Chat__1016005",
                 "facebook_timesformer-base-finetuned-k400__1016002",
                 "gaunernst_bert-small-uncased__1016001",
                 "google_owlv2-large-patch14-ensemble__1016001"):
        p = shared_path(f"peers/tracelens/traces/{dev}/{name}.json.gz")
        if p:
            traces.append((dev, name, p))
ex = shared_path("traces/roofline/example_profile_h100.json")
if ex:
    traces.append(("h100", "example_profile_h100", ex))
if not traces:
    print("SKIP: the shared TraceLens traces are absent (MLPROF_SHARED_DIR)")
    sys.exit(77)

for dev, name, path in traces:
    fl = run("flops", path, "--top", "0")
    rf = run("roofline", path, "--top", "0")
    if fl is None or rf is None:
        continue
    fops = {o["name"]: o for o in fl["ops"]}
    rops = {o["name"]: o for o in rf["ops"] if o["flops"] > 0}
    check(set(fops) == set(rops), f"{name}: the same ops ({sorted(set(fops) ^ set(rops))[:5]})")
    bad = []
    for op, r in rops.items():
        f = fops.get(op)
        if f is None:
            continue
        if not (close(f["flops"], r["flops"]) and f["gpu_ns"] == r["kernel_ns"]
                and f["calls_counted"] == r["calls"]
                and close(f["tflops_per_s"], r["achieved_tflops"], 1e-6)):
            bad.append((op, f["flops"], r["flops"], f["gpu_ns"], r["kernel_ns"], f["calls_counted"],
                        r["calls"], f["tflops_per_s"], r["achieved_tflops"]))
    check(not bad, f"{dev} {name}: flops rows = roofline rows ({len(rops)} ops) {bad[:3]}")
    check(close(fl["total_flops"], rf["flops"]), f"{name}: total {fl['total_flops']} vs {rf['flops']}")
    # MFU: the same peak and the same per-step rate.
    check(fl["peak_tflops"] == rf["mfu_peak_tflops"], f"{name}: MFU peak {fl['peak_tflops']}")
    fast = [(o["name"], o["tflops_per_s"]) for o in fl["ops"] if o["tflops_per_s"] > PEAK[dev]]
    check(not fast, f"{dev} {name}: no op above {PEAK[dev]} TFLOP/s in flops: {fast}")
    fast = [(o["name"], o["achieved_tflops"]) for o in rf["shapes"] if o["achieved_tflops"] > PEAK[dev]]
    check(not fast, f"{dev} {name}: no shape group above {PEAK[dev]} TFLOP/s in roofline: {fast}")

    # GEMM and convolution FLOPs from the trace's own arguments, by (op, shapes, dtype) group.
    args_of = {}
    for e in load(path):
        a = e.get("args") or {}
        if e.get("ph") == "X" and e.get("name") in CHECKED and isinstance(a.get("Input Dims"), list):
            args_of.setdefault((e["name"], shapes_key(a["Input Dims"])), []).append(a)
    want = defaultdict(float)
    n_checked = 0
    for r in rf["shapes"]:
        group = args_of.get((r["name"], r.get("shapes", "")))
        if not group:
            continue
        per = {ar.flop_count(r["name"], a["Input Dims"], a.get("Concrete Inputs"), a.get("Input type"))
               for a in group}
        if len(per) != 1 or None in per:
            continue  # shapes alike, arguments not: not comparable by group
        f = per.pop()
        n_checked += 1
        check(close(r["flops"], r["calls"] * f), f"{name} {r['name']} {r['shapes']}: {r['flops']} vs "
              f"{r['calls']} x {f}")
        want[r["name"]] += r["calls"] * f
    for op, w in want.items():
        if all(r["name"] != op or (r["name"], r.get("shapes", "")) in args_of for r in rf["shapes"]):
            check(close(fops[op]["flops"], w), f"{name} flops {op}: {fops[op]['flops']} vs {w}")
    check(n_checked > 0, f"{name}: some GEMM/conv groups checked by formula")

    if name.startswith("Falconsai"):
        # Issue 26's case: [4,3,224,224] * [768,3,16,16], stride 16 -> 4x768x14x14, + bias.
        o = 4 * 768 * 14 * 14
        c = fops["aten::conv2d"]
        check(c["flops"] == o * 2 * 3 * 16 * 16 + o, f"{dev} conv2d {c['flops']}")
        check(0 < c["tflops_per_s"] < 100, f"{dev} conv2d {c['tflops_per_s']} TFLOP/s (was 2,234.8)")
finish()
