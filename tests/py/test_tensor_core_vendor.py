"""The "low tensor core use" finding needs a CUDA compute capability: on AMD GPUs (the xDiT
MI300X trace, HTA's MI250 trace) the kernel-name heuristics are NVIDIA's and the device's
computeMajor (9 for gfx942) is not one, so the finding must not fire (it was the headline of
every ROCm report: "0.0% of compute on tensor cores"). The vendor is read here from each
trace's deviceProperties. Control: HTA's V100 trace (fp32 volta_sgemm kernels, counted here)
keeps the finding. `mlprof kernels` measures AMD matrix cores by AMD's kernel families (it printed
0.0% from NVIDIA's names, then "not measured"); the share is "Matrix cores (MFMA): N%".
Skips (exit 77) without the shared data."""
import gzip
import json
import os
import subprocess
import sys

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import shared_path  # noqa: E402
from checks import check, finish  # noqa: E402

CASES = [
    "traces/compile/kineto/xdit_sd_3.5_profile_trace_rank_0.json.gz",
    "traces/kineto-gpu/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
]
for rel in CASES:
    path = shared_path(rel)
    if path is None:
        continue
    with gzip.open(path) as fh:
        d = json.load(fh)
    names = [p.get("name", "") for p in d.get("deviceProperties", [])]
    amd = any("AMD" in n or "Instinct" in n for n in names)
    sgemm = sum(1 for e in d["traceEvents"] if e.get("cat") == "kernel" and "sgemm" in str(e.get("name", "")))
    r = subprocess.run([MLPROF, "analyze", path, "--json"], capture_output=True, text=True)
    check(r.returncode == 0, f"{rel}: exit {r.returncode} {r.stderr[:200]}")
    if r.returncode:
        continue
    kinds = [f["kind"] for f in json.loads(r.stdout)["bottlenecks"]["findings"]]
    if amd:
        check("low_tensor_core_use" not in kinds, f"{rel} ({names[0]}): low_tensor_core_use on an AMD GPU: {kinds}")
    else:
        check(sgemm > 0 and "low_tensor_core_use" in kinds, f"{rel} ({names[:1]}, {sgemm} sgemm kernels): finding kept: {kinds}")
    # `mlprof kernels`: the tensor-core share is not claimed on AMD ("0.0%" read as a finding).
    k = subprocess.run([MLPROF, "kernels", path, "--json"], capture_output=True, text=True)
    kt = subprocess.run([MLPROF, "kernels", path], capture_output=True, text=True).stdout.splitlines()
    # Since the device table (issue 25): an AMD GPU of known gfx target is measured by AMD's own
    # kernel families (Tensile "_MI", CK xdl, MIOpen gtcx) and the line names its matrix cores.
    check(k.returncode == 0 and json.loads(k.stdout).get("tensor_cores_measured") is True,
          f"{rel}: kernels tensor_cores_measured (AMD={amd})")
    check(len(kt) > 1 and kt[1].startswith("Matrix cores (MFMA):" if amd else "Tensor cores:"),
          f"{rel}: kernels text {kt[1:2]}")
finish()
