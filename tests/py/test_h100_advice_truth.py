"""Advice checked against what a fix really did on an H100 (issue 25).

tests/data/h100/advice/ holds traces recorded by scripts/gpu/advice_truth.py on an H100 80GB
HBM3 (PyTorch 2.11, CUDA 13.0): five training-like steps, each with one planted problem, run as
written (baseline) and with the problem fixed as the advice says (fixed). truth.json has the
program's own step times without the profiler.

The truth here is what the fix did: the mean step time of the fixed trace against the baseline
trace, both computed in this file from the trace JSON (the steps' span, to the end of the last
GPU work they launched, over their number). mlprof's
prediction comes from the baseline trace alone. For each scenario the planted cause must be the
top finding and its replayed saving within 20% of the truth; a host sync behind a busy GPU must be
priced near zero, as removing it saved nothing measurable; the savings must add up to at most the
step.
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "h100", "advice")


def step_time(path):
    """The mean step time (ns) over the trace's ProfilerSteps: from the first step's start to the
    end of the last step or of the last GPU work launched in the steps, whichever is later, over
    the number of steps (a step that does not wait for its GPU work still owes it)."""
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#") and
                    e.get("cat") != "gpu_user_annotation"), key=lambda e: e["ts"])
    a, b = steps[0]["ts"], max(st["ts"] + st["dur"] for st in steps)
    launch_ts = {}
    for e in ev:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch_ts[e["args"]["correlation"]] = e["ts"]
    end = b
    for e in ev:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            ts = launch_ts.get(e.get("args", {}).get("correlation"))
            if ts is not None and a <= ts < b:
                end = max(end, e["ts"] + e["dur"])
    return (end - a) * 1000 / len(steps)


truth_file = os.path.join(DATA, "truth.json")
if not check(os.path.exists(truth_file), f"{truth_file} exists"):
    finish()
truth = json.load(open(truth_file))
check(truth.get("gpu", "").startswith("NVIDIA H100"), "recorded on an H100")

# scenario -> the finding kind that names the planted cause
planted = {"launch": "gpu_launch_overhead", "dataload": "data_loading",
           "pageable": "pageable_memcpy", "tf32": "low_tensor_core_use"}

for name in ["launch", "dataload", "pageable", "tf32", "sync"]:
    # (sync: the fixed loop never waits, so its trace's steps end before their GPU work; the
    # program's unprofiled step times are the truth there.)
    base = step_time(os.path.join(DATA, f"{name}_baseline.json.gz"))
    fixed = step_time(os.path.join(DATA, f"{name}_fixed.json.gz"))
    true_frac = 1 - fixed / base
    unprof = truth["scenarios"][name]
    unprof_frac = 1 - unprof["fixed"]["unprofiled_step_ns"] / unprof["baseline"]["unprofiled_step_ns"]
    b = mlprof_json(MLPROF, "bottlenecks", os.path.join(DATA, f"{name}_baseline.json.gz"))
    findings = b["findings"]
    basis = b["basis_ns"]
    top = findings[0] if findings else {}
    measured = f"{100 * true_frac:.1f}% of the step, " if name != "sync" else ""
    print(f"{name}: truth {measured}unprofiled {100 * unprof_frac:.1f}%; "
          f"top {top.get('kind')} {top.get('est_savings_pct', 0):.1f}%; "
          f"combined {b['combined'].get('saving_pct', 0):.1f}%")
    check(b["combined"].get("saving_ns", 0) <= basis, f"{name}: combined saving <= the steps")
    check(all(f["est_savings_ns"] <= basis for f in findings), f"{name}: each saving <= the steps")
    if name == "sync":
        # Removing torch.cuda.synchronize() + loss.item() from a GPU-bound step: the truth is ~0.
        check(abs(unprof_frac) < 0.05, f"sync: removing the sync saved < 5% ({unprof_frac:.3f})")
        sync = [f for f in findings if f["kind"] == "sync_stall"]
        check(all(f["est_savings_pct"] < 5 and f["severity"] == "low" for f in sync),
              f"sync: a host waiting on a busy GPU is priced near zero, low ({sync and sync[0]['est_savings_pct']})")
        continue
    check(top.get("kind") == planted[name], f"{name}: top finding is {planted[name]} ({top.get('kind')})")
    pred = top.get("est_savings_pct", 0) / 100
    check(abs(pred - true_frac) <= 0.2 * true_frac,
          f"{name}: replayed saving {pred:.3f} within 20% of the measured {true_frac:.3f}")
    if name == "tf32":
        check("TF32" in top.get("recommendation", ""), "tf32: the advice names TF32 on sm_90")

finish()
