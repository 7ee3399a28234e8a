"""The data_loading finding reports the TensorBoard plugin's own DataLoader share on a GPU trace
(the number its rule cites), and the name-based phase without GPU work: one definition each.

Expected share on the plugin's resnet50_num_workers_0 sample, by tb_plugin_reference.py (this
project's implementation of the plugin's steps and step-time classes: kineto tb_plugin
StepParser + OverallParser; each step extended to the end of the GPU work it launched, each
instant going to the first active class of kernel > memcpy > memset > communication > runtime >
DataLoader > CPU op): the DataLoader time of the steps the plugin keeps over their time.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
import tb_plugin_reference as tb  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]


def finding(path):
    doc = json.loads(subprocess.run([MLPROF, "bottlenecks", path, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    return next((f for f in doc["findings"] if f["kind"] == "data_loading"), None)


path = shared_data.shared_path(
    "peers/tb_plugin/traces/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz")
if path:
    # The plugin's own numbers: its steps (each extended to the end of the GPU work it
    # launched, tail steps dropped) and its classes (tb_plugin_reference.py).
    ev = tb.load(path)
    check(not any("nccl" in e["name"].lower() for e in ev), "no communication in the sample")
    kept, _, _ = tb.device_steps(ev)
    costs = tb.step_costs(ev, kept)
    expected_us = sum(c[tb.DATALOADER] for c in costs)
    expected_pct = 100 * expected_us / sum(e - b for b, e in kept)
    f = finding(path)
    check(f is not None, "data_loading finding on the plugin's workers_0 sample")
    if f:
        got = f["evidence"]["data_loading_pct"]
        check(abs(got - expected_pct) < 0.01, f"DataLoader share {got:.3f}% vs the plugin's "
              f"{expected_pct:.3f}%")
        check(abs(f["evidence"]["data_loading_ns"] - expected_us * 1000) < 1000,
              f"DataLoader time {f['evidence']['data_loading_ns']} vs {expected_us * 1000}")
        check("DataLoader step class" in f["rule"], f"rule names the plugin's class: {f['rule']}")

# Without GPU work: the name-based phase, and the rule says so.
cpu = os.path.join(DATA, "mlp_bs64.json.gz")
steps_doc = json.loads(subprocess.run([MLPROF, "steps", cpu, "--json"], check=True,
                                      capture_output=True, text=True).stdout)
f = finding(cpu)
check(f is not None and not steps_doc["has_gpu"], "CPU trace: a data_loading finding")
if f:
    check(f["evidence"]["data_loading_ns"] == steps_doc["phase_total_ns"]["data_loading"],
          "CPU trace: the data-loading phase total")
    check("phase" in f["rule"], f"CPU rule names the phase: {f['rule']}")
finish()
