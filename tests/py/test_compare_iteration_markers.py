"""`mlprof compare` leaves iteration markers out of its op rows (issue 27): ProfilerStep#N, vLLM's
execute_... and SGLang's step[...] annotations, and the slices --step-annotation names. Each
iteration's marker often has its own name (vLLM writes its batch into it), so as rows they were
one "added"/"removed" row per iteration; the step-time comparison covers them.

Expected values come from this script: the marker names are found here with vLLM's and SGLang's
annotation grammars (written here from vLLM's Worker.annotate_profile and SGLang's step[MODE
k=v] form) over the trace JSON, and the host events left, counted here, must be exactly the
events compare's host rows count. A compare that listed the markers fails both checks.

Traces: serving/sglang_decode, serving/vllm_decode_full, cuda-graphs/xdit_flux with
--step-annotation '^## Call CompiledFxGraph', and a generated multi-iteration vLLM trace (40
iterations, most with a name of their own), each compared with itself.
"""
import gzip
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import serving_steps_traces  # noqa: E402
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy",
            "Memset"}
DETAILED = r"\(sq\d+sk\d+sqsq\d+sqsk\d+\)"
PLAIN = r"\(\d+(?:_\d+)*\)"
MARKERS = [re.compile(r"^ProfilerStep\s*#\s*\d+$"),
           re.compile(rf"^execute_\d+_context_\d+{DETAILED}_generation_\d+{DETAILED}$"),
           re.compile(rf"^execute_context_\d+{PLAIN}_generation_\d+{PLAIN}$"),
           re.compile(r"^step\[[A-Z_]+(?: [a-z_]+=\d+)*\]$")]


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def is_marker(name, user):
    return any(m.search(name) for m in MARKERS) or (user is not None and user.search(name))


tmp = tempfile.mkdtemp()
gen = os.path.join(tmp, "vllm_seed7.json")
serving_steps_traces.write(gen, "vllm", seed=7)
cases = [(gen, None, (serving_steps_traces.GPU_PID,))]
for rel, rx in (("traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz", None),
                ("traces/serving/vllm_decode_full/graph_execution.json.gz", None),
                ("traces/cuda-graphs/xdit_flux/profile_trace_rank_0.json.gz",
                 r"^## Call CompiledFxGraph")):
    p = shared_data.shared_path(rel)
    if p:
        cases.append((p, rx, ()))

for path, rx, gpu_pids in cases:
    label = os.path.basename(path) + (f" --step-annotation {rx!r}" if rx else "")
    user = re.compile(rx) if rx else None
    host = [e for e in load(path) if e.get("ph") == "X" and e.get("cat") not in GPU_CATS and
            e.get("pid") not in gpu_pids and e.get("cat") != "Trace"]
    markers = {e["name"] for e in host if is_marker(e.get("name", ""), user)}
    kept = sum(1 for e in host if not is_marker(e.get("name", ""), user))
    check(markers, f"{label}: the trace has iteration markers")
    args = ["compare", path, path, "--top", "0", "--python-in-ops"] + (
        ["--step-annotation", rx] if rx else [])
    c = mlprof_json(MLPROF, *args)
    rows = c.get("ops", []) + c.get("python_functions", [])
    listed = [r["name"] for r in rows + c.get("kernels", []) if is_marker(r["name"], user)]
    check(not listed, f"{label}: marker rows {listed[:3]} ({len(listed)})")
    counted = sum(r.get("base_count", 0) for r in rows)
    check(counted == kept, f"{label}: host rows count {counted} events, want {kept} "
          f"({len(host)} host events less {len(host) - kept} markers)")
    check(c.get("base", {}).get("steps", 0) >= 1, f"{label}: compare still counts the steps")
    print(f"{label}: {len(markers)} marker names, {kept} host events in rows")

finish()
