"""Advice that fits the hardware and the code (issue 25 item 3), on small generated traces
(advice_eval_traces.Trace) and on the real traces the issue names:

- tensor-core advice by the device's compute capability / gfx target: fp16 AMP on sm_70 (no bf16,
  no TF32 below sm_80), bf16/TF32 but no fp8 on sm_80, fp8 from sm_89, AMD matrix cores (MFMA)
  in AMD's words; MFMA (Tensile "_MI"), nvjet, MXFP4/FP8 block-scaled GEMMs count as matrix use;
- no "torch.compile" for a torch.compile region, "pin and make it async" (no "fuse") for a
  blocking copy;
- an all-reduce kernel (PyTorch symmetric memory's multimem_all_reduce) is communication;
- MTIA: tensor-core use not measured (its kernel names say nothing of it);
- every finding says why it applies (`why`).

The expected facts come from the traces themselves (deviceProperties, kernel names read here with
Python's own patterns) and the vendors' published dtype support, never from mlprof's output.
Skips (exit 77) the real-trace part without the shared data."""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402
import advice_eval_traces as g  # noqa: E402


def run_json(*args):
    r = subprocess.run([MLPROF, *args, "--json"], capture_output=True, text=True)
    if not check(r.returncode == 0, f"mlprof {' '.join(args)}: exit {r.returncode} {r.stderr[:300]}"):
        return None
    return json.loads(r.stdout)


def findings(path):
    d = run_json("bottlenecks", path)
    return d["findings"] if d else []


def by_kind(fs, kind):
    return [f for f in fs if f["kind"] == kind]


tmp = tempfile.mkdtemp(prefix="mlprof_advice_")


def write(tr, name, device=None):
    path = os.path.join(tmp, name + ".json")
    tr.write(path)
    if device:
        with open(path) as f:
            doc = json.load(f)
        doc["deviceProperties"] = [dict(doc["deviceProperties"][0], **device)]
        with open(path, "w") as f:
            json.dump(doc, f)
    return path


def gemm_trace(major, kernel, op="aten::mm", host_op=None, host_us=0):
    """8 steps of five 1 ms GEMM kernels launched by `op` (fp32 inputs), a sync at the end; with
    host_op, a host op of host_us per step (a hotspot)."""
    tr = g.Trace(major=major)

    def body():
        for _ in range(5):
            tr.ext += 1
            ts = tr.t
            tr.x("cpu_op", op, ts, 60, args={"External id": tr.ext, "Input type": ["float", "float"]})
            tr.gpu_op("kernel", kernel, ts + 50, 1_000)
            tr.x("cuda_runtime", "cudaLaunchKernel", ts + 50, 10,
                 args={"External id": tr.ext, "cbid": 211, "correlation": tr.corr})
            tr.t = ts + 60
        if host_op:
            tr.host(host_op, host_us, cat="cuda_runtime" if host_op.startswith(("hip", "cuda")) else "cpu_op")
        tr.device_sync()
    for n in range(g.STEPS):
        tr.step(n, body)
    return tr


V100 = {"name": "Tesla V100-SXM2-16GB", "computeMajor": 7, "computeMinor": 0}
A100 = {"name": "NVIDIA A100-SXM4-40GB", "computeMajor": 8, "computeMinor": 0}
H100 = {"name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}
MI300X = {"name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4, "warpSize": 64}

# --- tensor-core advice by device (generated) -----------------------------------------------
cases = [
    ("v100", V100, "volta_sgemm_128x64_nn", ["torch.float16", "GradScaler"], ["torch.bfloat16", "allow_tf32", "fp8"]),
    ("a100", A100, "ampere_sgemm_128x64_nn", ["torch.bfloat16", "allow_tf32"], ["fp8", "torch.float16"]),
    ("h100", H100, "sm90_sgemm_128x64_nn", ["torch.bfloat16", "fp8"], ["torch.float16"]),
    ("mi300x", MI300X, "Cijk_Ailk_Bljk_SB_MT64x64x16_SN_AMAS3", ["matrix cores"], ["allow_tf32", "CUDA graphs"]),
]
for name, dev, kernel, want, never in cases:
    path = write(gemm_trace(7 if dev is V100 else 8, kernel), "tc_" + name, dev)
    tc = by_kind(findings(path), "low_tensor_core_use")
    if not check(len(tc) == 1, f"{name}: one low_tensor_core_use finding for fp32 {kernel}"):
        continue
    rec, why = tc[0]["recommendation"], tc[0].get("why", "")
    for w in want:
        check(w in rec, f"{name}: advice names {w!r}: {rec}")
    for w in never:
        check(w not in rec, f"{name}: advice does not name {w!r} ({dev['name']}): {rec}")
    arch = "gfx942" if dev is MI300X else "sm_%d%d" % (dev["computeMajor"], dev["computeMinor"])
    check(arch in why and "fp32" in why, f"{name}: why names the architecture {arch} and fp32 inputs: {why}")

# A GEMM that runs on the matrix units (AMD Tensile MFMA kernel, NVIDIA nvjet): no finding.
for name, dev, kernel in [("mi300x_mfma", MI300X, "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN"),
                          ("h100_nvjet", H100, "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT")]:
    path = write(gemm_trace(8, kernel), "tc_" + name, dev)
    check(not by_kind(findings(path), "low_tensor_core_use"), f"{name}: {kernel} is on matrix units: no finding")
    k = run_json("kernels", path)
    if k:
        row = [r for r in k["kernels"] if r["name"] == kernel]
        check(row and row[0]["tensor_cores"] and k["tensor_cores_measured"], f"{name}: kernels marks {kernel} as tensor/matrix core")

# --- hotspot advice by op kind (generated) --------------------------------------------------
for name, dev, op, want, never in [
    ("compiled", A100, "CompiledFunctionBackward", "already", "(torch.compile)"),
    ("blocking_copy", MI300X, "hipMemcpyWithStream", "Pin and make it async", "fuse"),
]:
    path = write(gemm_trace(8, "nvjet_tst_64x64" if dev is A100 else "Cijk_MI32x32x8", host_op=op, host_us=4_000), "hot_" + name, dev)
    hs = [f for f in by_kind(findings(path), "hotspot") if op in f["ops"]]
    if check(len(hs) == 1, f"{name}: a hotspot finding for {op}"):
        check(want in hs[0]["recommendation"] and never not in hs[0]["recommendation"],
              f"{name}: {op}: {want!r} and no {never!r}: {hs[0]['recommendation']}")
        check(hs[0].get("why"), f"{name}: the hotspot says why")

# --- an all-reduce kernel is communication (generated) --------------------------------------
tr = g.Trace(major=10)
AR = "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)"


def ar_body():
    tr.launch("aten::mm", 60, 10, "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", 500)
    tr.launch("symm_mem::multimem_all_reduce_", 60, 10, AR, 300, stream=g.COMM)
    tr.device_sync()


for n in range(g.STEPS):
    tr.step(n, ar_body)
path = write(tr, "allreduce", {"name": "NVIDIA B200", "computeMajor": 10})
gj = run_json("gpu", path)
if gj:
    tb = gj["temporal_breakdown"]
    check(abs(tb["communication_ns"] - g.STEPS * 300_000) <= 1000,
          f"all-reduce kernels are communication: {tb['communication_ns']} ns vs {g.STEPS * 300_000}")

# --- real traces -----------------------------------------------------------------------------


def load(rel):
    p = shared_path(rel)
    if p is None:
        return None, None
    with gzip.open(p) as fh:
        return p, json.load(fh)


# V100 (sm_70): fp16 AMP, never bf16/TF32.
p, d = load("traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz")
if p:
    check(d["deviceProperties"][0]["computeMajor"] == 7, "df_index_resolver is an sm_70 trace")
    tc = by_kind(findings(p), "low_tensor_core_use")
    if check(len(tc) == 1, "df_index_resolver: low_tensor_core_use"):
        rec = tc[0]["recommendation"]
        check("torch.float16" in rec and "bfloat16" not in rec and "allow_tf32" not in rec,
              f"df_index_resolver (V100): fp16 AMP, no bf16/TF32: {rec}")
        check("sm_70" in tc[0]["why"], f"df_index_resolver: why names sm_70: {tc[0]['why']}")

# B200: MXFP4/FP8 bmm, nvjet and fmha kernels are tensor-core kernels; the all-reduce is communication.
p, d = load("traces/modules/b200_gptoss_vllm_eager_trace.json.gz")
if p:
    matrix = re.compile(r"^nvjet|MxE[0-9]m[0-9]|E4m3|E2m1|fmha", re.I)
    comm = re.compile(r"all_reduce|^nccl", re.I)
    k = run_json("kernels", p)
    if k:
        bad = [r["name"][:60] for r in k["kernels"] if r.get("kind", "kernel") == "kernel"
               and matrix.search(r["name"]) and not re.search(r"quant", r["name"]) and not r["tensor_cores"]]
        check(not bad, f"b200: nvjet/MX/fp8 GEMM kernels marked tensor cores: {bad[:3]}")
        check(k["tensor_core_share"] > 0.5, f"b200: tensor-core share {k['tensor_core_share']}")
    check(not by_kind(findings(p), "low_tensor_core_use"), "b200: no 'no tensor cores' finding")
    # The communication union, from the trace: all-reduce and NCCL kernel intervals.
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in d["traceEvents"]
                if e.get("cat") == "kernel" and comm.search(e.get("name", "")))
    union, end = 0.0, -1e30
    for a, b in iv:
        if b > end:
            union += b - max(a, end)
            end = b
    gj = run_json("gpu", p)
    if gj:
        got = gj["temporal_breakdown"]["communication_ns"] / 1000
        check(abs(got - union) <= 1 + 1e-6 * union, f"b200: communication {got:.3f} us vs all-reduce+NCCL union {union:.3f} us")

# MTIA: tensor-core use is not measured.
for rel in ["traces/kineto-gpu/mtia_inference_trace/mtia_inference_rank_0.json.gz"]:
    p = shared_path(rel)
    if not p:
        continue
    k = run_json("kernels", p)
    if k:
        check(k["tensor_cores_measured"] is False, f"{rel}: tensor_cores_measured false on MTIA")
        check(not any(r["tensor_cores"] for r in k["kernels"]), f"{rel}: no kernel marked tensor cores")
    text = subprocess.run([MLPROF, "kernels", p], capture_output=True, text=True).stdout
    check("not measured on MTIA" in text, f"{rel}: kernels text says not measured on MTIA")
    # The MTIA runtime's synchronize / synchronizeStream are host syncs (one list for every
    # rule): a sync_stall finding holding their time (summed here from the trace), never a
    # hotspot; a share over 100% (threads summed) says so in the title.
    with gzip.open(p) as fh:
        evs = json.load(fh)["traceEvents"]
    want = {}
    for e in evs:
        if e.get("ph") == "X" and e.get("cat") == "mtia_runtime" and \
                e.get("name") in ("synchronize", "synchronizeStream"):
            want[e["name"]] = want.get(e["name"], 0) + e["dur"]
    fs = findings(p)
    check(not any(f["kind"] == "hotspot" and set(f["ops"]) & set(want) for f in fs),
          f"{rel}: no hotspot on a sync: {[f['title'] for f in fs]}")
    ss = by_kind(fs, "sync_stall")
    if check(len(ss) == 1 and want, f"{rel}: one sync_stall finding ({len(ss)}), syncs {want}"):
        ev = ss[0]["evidence"]
        for name, us in want.items():
            # Nested syncs count once: their evidence is at most the trace's sum.
            got = ev.get(name + "_ns", 0)
            check(0 < got <= us * 1000 + 1, f"{rel}: {name} {got} ns <= {us * 1000} ns in the trace")
        check("summed over threads" in ss[0]["title"], f"{rel}: title says threads: {ss[0]['title']}")

# Compiled regions and blocking copies on real traces; every finding says why.
COMPILED = re.compile(r"CompiledFunction|Torch-Compiled Region|CompiledFxGraph")
for rel in ["traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz",
            "traces/kineto-gpu/negative_queue_length_values_check/rank0.json.gz",
            "traces/kineto-gpu/trace_diff/test/test.json.gz",
            "traces/kineto-gpu/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
            "traces/modules/mi300_sglang_Qwen3-8B_prefilldecode.json.gz",
            "traces/modules/mi300_resnet_act_checkpoint.json.gz",
            "traces/modules/b200_gptoss_vllm_eager_trace.json.gz"]:
    p = shared_path(rel)
    if not p:
        continue
    for f in findings(p):
        check(f.get("why"), f"{rel}: {f['kind']} says why")
        if f["kind"] != "hotspot":
            continue
        rec = f["recommendation"]
        if any(COMPILED.search(o) for o in f["ops"]):
            check("(torch.compile)" not in rec, f"{rel}: compiled region {f['ops']}: {rec}")
        if any(o in ("hipMemcpyWithStream", "cudaMemcpy", "hipMemcpy") for o in f["ops"]):
            check("fuse" not in rec and "Pin and make it async" in rec, f"{rel}: blocking copy {f['ops']}: {rec}")
finish()
