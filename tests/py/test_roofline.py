"""`mlprof roofline --json` against FLOPs, bytes and roofline times computed by hand here from
TraceLens's PerfModel definitions (docs/roofline.md), on a synthetic trace with one kernel per op;
then the shared traces end to end: PyTorch's profile_analysis example and the TraceLens H100 /
MI300X traces (no op faster than its device's compute peak, the conv2d of issue 26 by hand)."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]
BF, F32, LONG, SC = "c10::BFloat16", "float", "long int", "Scalar"
P_BF16, P_FP32, BW = 989.4e12, 66.9e12, 3350e9  # H100 SXM dense (NVIDIA whitepaper), HBM3


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# (op, Input Dims, Input type, Concrete Inputs, Input Strides or None, expected flops, bytes,
#  matrix units?)
CASES = []


def case(op, dims, types, conc, flops, nbytes, matrix, strides=None):
    CASES.append((op, dims, types, conc, strides, flops, nbytes, matrix))


case("aten::mm", [[64, 128], [128, 256]], [BF, BF], ["", ""], 2 * 64 * 256 * 128,
     (64 * 128 + 128 * 256 + 64 * 256) * 2, True)
case("aten::addmm", [[256], [64, 128], [128, 256], [], []], [BF, BF, BF, SC, SC],
     ["", "", "", "1", "1"], 2 * 64 * 256 * 128 + 64 * 256,
     (64 * 128 + 128 * 256 + 64 * 256 + 256) * 2, True)
case("aten::bmm", [[8, 64, 32], [8, 32, 16]], [BF, BF], ["", ""], 8 * 2 * 64 * 16 * 32,
     8 * (64 * 32 + 32 * 16 + 64 * 16) * 2, True)
case("aten::linear", [[4, 10, 128], [256, 128], [256]], [BF, BF, BF], ["", "", ""],
     2 * 40 * 256 * 128 + 40 * 256, (40 * 128 + 128 * 256 + 40 * 256 + 256) * 2, True)
# Causal self-attention: half of QK^T and PV.
qk = 2 * 2 * 8 * 128 * 128 * 64
case("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64]] * 3 + [[], [], []],
     [BF, BF, BF, SC, SC, SC], ["", "", "", "0.", "True", "False"], (qk + qk) * 0.5,
     4 * (2 * 128 * 8 * 64) * 2, True)
# Grouped-query attention (2 KV heads), not causal.
case("aten::scaled_dot_product_attention",
     [[2, 8, 128, 64], [2, 2, 256, 64], [2, 2, 256, 64], [], [], [], [], []],
     [BF, BF, BF, "", SC, SC, "", SC], ["", "", "", "", "0.", "False", "", "False"],
     2 * (2 * 2 * 8 * 128 * 256 * 64),
     (2 * 128 * 8 * 64 + 2 * 256 * 2 * 64 * 2 + 2 * 128 * 8 * 64) * 2, True)
# Flash backward: recompute QK^T, dV, dP, dQ, dK = 5 matmuls of QK^T's size.
case("aten::_scaled_dot_product_flash_attention_backward",
     [[2, 8, 128, 64]] * 5 + [[2, 8, 128]] + [[], [], [], [], [], [], [], [], []],
     [BF] * 5 + [F32] + [""] * 4 + [SC, SC, "", "", SC],
     ["", "", "", "", "", "", "", "", "128", "128", "0.", "False", "", "", ""], 5 * qk,
     7 * (2 * 128 * 8 * 64) * 2, True)
# ViT patch embedding (Falconsai): stride 16 -> 14 x 14 outputs, bias adds one per output.
out = 4 * 768 * 14 * 14
case("aten::convolution", [[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []],
     [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", SC, "ScalarList", SC],
     ["", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"],
     out * 2 * 3 * 16 * 16 + out,
     (4 * 3 * 224 * 224 + 768 * 3 * 16 * 16 + 768 + out) * 2, True)
# Conv backward without grad input (first layer): grad weight + grad bias only.
case("aten::convolution_backward",
     [[4, 768, 14, 14], [4, 3, 224, 224], [768, 3, 16, 16]] + [[]] * 8,
     [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", "ScalarList", SC, "ScalarList", SC,
      "ScalarList"],
     ["", "", "", "[768]", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1",
      "[False, True, True]"],
     2 * (768 * 3 * 16 * 16) * 4 * 14 * 14 + out,
     (out + 4 * 3 * 224 * 224 + 768 * 3 * 16 * 16) * 2 + (out + 768) * 2, True)
N = 4 * 197 * 768
# TraceLens Normalization: 3C + 3N (training stats) + 3C + 2N; 6 C-vectors (mean, var, weight,
# bias, 2 running stats).
case("aten::layer_norm", [[4, 197, 768], [], [768], [768], [], []], [BF, "ScalarList", BF, BF, SC, SC],
     ["", "[768]", "", "", "1e-05", "True"], 3 * 768 + 3 * N + 3 * 768 + 2 * N,
     2 * N * 2 + 6 * 768 * 2, False)
case("aten::native_layer_norm_backward",
     [[4, 197, 768], [4, 197, 768], [], [4, 197, 1], [4, 197, 1], [768], [768], []],
     [BF, BF, "ScalarList", F32, F32, BF, BF, "ScalarList"],
     ["", "", "[768]", "", "", "", "", "[True, True, True]"], 9 * N,
     N * 2 + N * 2 * 2 + 768 * 2 + 768 * 2 + 768 * 2 * 2, False)
# Broadcast add: the [1, 197, 768] operand is read once.
case("aten::add", [[4, 197, 768], [1, 197, 768], []], [BF, BF, SC], ["", "", "1"], N,
     N * 2 + 197 * 768 * 2 + N * 2, False)
# An expanded operand (stride 0 over the batch) is read once too.
case("aten::mul", [[4, 197, 768], [4, 197, 768]], [BF, BF], ["", ""], N,
     N * 2 + 197 * 768 * 2 + N * 2, False,
     strides=[[151296, 768, 1], [0, 768, 1]])
case("aten::gelu", [[1000, 1000], []], [BF, ""], ["", ""], 10**6, 10**6 * 4, False)
case("aten::_softmax", [[16, 128, 128], [], []], [BF, SC, SC], ["", "-1", "False"],
     3 * 16 * 128 * 128, 2 * 16 * 128 * 128 * 2, False)
case("aten::sum", [[32, 1024], [], [], []], [BF, "ScalarList", SC, ""], ["", "[1]", "False", ""],
     32 * 1024, (32 * 1024 + 32) * 2, False)
case("aten::embedding", [[50000, 512], [8, 128], [], [], []], [BF, LONG, SC, SC, SC],
     ["", "", "-1", "False", "False"], 0, 2 * 1024 * 512 * 2 + 1024 * 8, False)
case("aten::copy_", [[1024, 1024], [1024, 1024], []], [BF, F32, SC], ["", "", "False"], 0,
     1024 * 1024 * 4 + 1024 * 1024 * 2, False)
case("aten::_fused_rms_norm", [[4, 128, 1024], [], [1024], []], [BF, "ScalarList", BF, ""],
     ["", "[1024]", "", ""], 512 * (2 * 1024 + 2) + 2 * 4 * 128 * 1024,
     2 * 4 * 128 * 1024 * 2 + 1024 * 2, False)

KERNEL_US = 100.0


def make_trace(path):
    ev = []
    t = 1000.0
    for i, (op, dims, types, conc, strides, *_rest) in enumerate(CASES):
        ext = 100 + i
        args = {"External id": ext, "Input Dims": dims, "Input type": types,
                "Concrete Inputs": conc}
        if strides is not None:
            args["Input Strides"] = strides
        ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t,
                   "dur": 50.0, "args": args})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": t + 10, "dur": 5.0,
                   "args": {"External id": ext, "correlation": 5000 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": f"kernel_{i}", "pid": 0, "tid": 7,
                   "ts": t + 20, "dur": KERNEL_US,
                   "args": {"External id": ext, "correlation": 5000 + i, "device": 0,
                            "stream": 7}})
        t += 200
    # An Inductor kernel that carries its own FLOPs and GB.
    ev.append({"ph": "X", "cat": "kernel", "name": "triton_tem_fused_mm_0", "pid": 0, "tid": 7,
               "ts": t + 20, "dur": KERNEL_US,
               "args": {"device": 0, "stream": 7, "kernel_flop": 10**9, "kernel_num_gb": 0.5}})
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9,
                                 "computeMinor": 0, "numSms": 132}],
           "traceEvents": ev}
    with open(path, "w") as f:
        json.dump(doc, f)


def roofline(*args):
    r = subprocess.run([MLPROF, "roofline", *args, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
    return json.loads(r.stdout) if r.returncode == 0 else None


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(b), 1.0)


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "synthetic.json")
    make_trace(path)
    got = roofline(path, "--top", "1000")
    check(got is not None, "roofline runs on the synthetic trace")
    rows = {r["name"]: r for r in got["shapes"]}
    t_ns = KERNEL_US * 1000
    for op, dims, types, conc, strides, flops, nbytes, matrix in CASES:
        r = rows.get(op)
        if not check(r is not None, f"{op}: modeled"):
            continue
        check(close(r["flops"], flops), f"{op}: flops {r['flops']} vs {flops}")
        check(close(r["bytes"], nbytes), f"{op}: bytes {r['bytes']} vs {nbytes}")
        check(r["kernel_ns"] == t_ns, f"{op}: kernel time {r['kernel_ns']}")
        peak = P_BF16 if matrix else P_FP32
        roof_s = max(flops / peak, nbytes / BW)
        want_roof = roof_s * 1e9
        check(abs(r["roofline_ns"] - want_roof) <= 1, f"{op}: roofline {r['roofline_ns']} vs {want_roof}")
        check(r["wasted_ns"] == t_ns - r["roofline_ns"], f"{op}: wasted = kernel - roofline")
        check(r["bound"] == ("compute" if flops / peak >= nbytes / BW else "memory"), f"{op}: bound")
        check(close(r["achieved_tflops"], flops / (t_ns * 1e-9) / 1e12, 1e-6), f"{op}: TFLOP/s")
        ai = flops / nbytes
        check(close(r["intensity"], ai), f"{op}: intensity")
        check(close(r["attainable_tflops"], min(peak, ai * BW) / 1e12, 1e-6), f"{op}: attainable")
    k = rows.get("triton_tem_fused_mm_0")
    check(k is not None and k["flops"] == 1e9 and k["bytes"] == 0.5e9, "Inductor kernel_flop / kernel_num_gb")
    check(got["calls"] == len(CASES) + 1, f"calls {got['calls']}")
    check(got["above_compute_peak"] == 0, "nothing above the peak")

    # --peaks: PyTorch's table has H100 bf16 1979, NVIDIA's with-sparsity figure: used, and said.
    peaks = shared_path("traces/roofline/device_peaks_pytorch_device_info.json")
    if peaks:
        g = roofline(path, "--peaks", peaks)
        check(g["peaks"]["bf16_tflops"] == 1979.0 and g["peaks"]["mem_gbs"] == 3350,
              "--peaks row replaces the table")
        check(any("sparsity" in w for w in g["warnings"]), "a with-sparsity bf16 figure is flagged")
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write("{\"X\": 3}")
    r = subprocess.run([MLPROF, "roofline", path, "--peaks", bad], capture_output=True, text=True)
    check(r.returncode == 2 and "bad.json" in r.stderr and r.stdout == "",
          f"a bad --peaks file: exit 2, one line naming it ({r.returncode} {r.stderr!r})")
    g = roofline(path, "--device", "AMD Instinct MI300X")
    check(g["peaks"]["name"] == "MI300X" and g["peaks"]["bf16_tflops"] == 1307.4, "--device")

# PyTorch's profile_analysis example: fp32 conv (stride 2, padding 3 -> 112 x 112) and addmm.
ex = shared_path("traces/roofline/example_profile_h100.json")
if ex:
    g = roofline(ex)
    rows = {r["name"]: r for r in g["shapes"]}
    conv = 1 * 64 * 112 * 112 * 2 * 3 * 7 * 7
    check(rows["aten::convolution"]["flops"] == conv, f"example conv {rows['aten::convolution']['flops']} vs {conv}")
    check(rows["aten::addmm"]["flops"] == 2 * 1 * 1000 * 2048 + 1000, "example addmm")
    check(rows["aten::convolution"]["kernel_ns"] == 200130, "conv's kernel by External id")

# TraceLens's traces: nothing faster than the device's compute peak.
for dev, peak in (("h100", 989.4), ("mi300", 1307.4)):
    for name in ("Falconsai_nsfw_image_detection__1016002", "Qwen_Qwen1.5-0.5B-Chat__1016005",
                 "facebook_timesformer-base-finetuned-k400__1016002",
                 "gaunernst_bert-small-uncased__1016001",
                 "google_owlv2-large-patch14-ensemble__1016001"):
        p = shared_path(f"peers/tracelens/traces/{dev}/{name}.json.gz")
        if not p:
            continue
        g = roofline(p, "--top", "100000")
        check(g["peaks_known"], f"{dev} {name}: peaks known")
        check(g["above_compute_peak"] == 0, f"{dev} {name}: no call above the compute peak")
        fast = [r["name"] for r in g["shapes"] if r["achieved_tflops"] > peak]
        check(not fast, f"{dev} {name}: no op above {peak} TFLOP/s: {fast}")
        check(g["kernel_ns"] >= 0.6 * g["gpu_kernel_ns"], f"{dev} {name}: most kernel time modeled")
        if name.startswith("Falconsai"):
            # The SQL table holds the same rows as --json's shapes.
            q = subprocess.run([MLPROF, "sql", p, "select name, flops, kernel_ns, wasted_ns from roofline "
                                "where name = 'aten::conv2d'", "--json"], capture_output=True, text=True)
            sq = json.loads(q.stdout) if q.returncode == 0 else None
            if isinstance(sq, dict):  # one document per statement (mlprof.sql/1)
                sq = sq["rows"]
            conv = [r for r in g["shapes"] if r["name"] == "aten::conv2d"][0]
            check(sq is not None and len(sq) == 1 and sq[0]["flops"] == conv["flops"]
                  and sq[0]["wasted_ns"] == conv["wasted_ns"], f"{dev} SQL roofline row = --json ({sq})")
            # mlprof flops: the conv2d's rate over its kernels' GPU time, FLOPs with the stride.
            fl = json.loads(subprocess.run([MLPROF, "flops", p, "--json"], capture_output=True,
                                           text=True).stdout)
            fc = [o for o in fl["ops"] if o["name"] == "aten::conv2d"][0]
            o = 4 * 768 * 14 * 14
            check(fc["flops"] == o * 2 * 3 * 16 * 16 + o, f"{dev} flops conv2d {fc['flops']} (the roofline's, bias adds in)")
            check(fc["tflops_per_s"] < peak and fc["gpu_ns"] > 0,
                  f"{dev} flops conv2d {fc['tflops_per_s']} TFLOP/s over {fc['gpu_ns']} ns of GPU time")
            conv = [r for r in g["shapes"] if r["name"] == "aten::conv2d"][0]
            # By hand: [4,3,224,224] * [768,3,16,16] stride 16 -> 4x768x14x14, + bias.
            o = 4 * 768 * 14 * 14
            check(conv["flops"] == o * 2 * 3 * 16 * 16 + o, f"{dev} Falconsai conv2d flops")
            check(conv["achieved_tflops"] < 100, f"{dev} conv2d rate {conv['achieved_tflops']} (issue 26: 2,234.8 over host time)")
finish()
