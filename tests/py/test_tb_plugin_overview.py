"""The TensorBoard profiler plugin's Overview numbers (issue 14 items 1 and 3): the GPU summary
(GPU utilization, est. SM efficiency, est. achieved occupancy per device), each step's window as
the GPU sees it, the steps the plugin keeps, and the per-step time classes.

Expected values: tests/py/tb_plugin_reference.py, this project's own implementation of the
plugin's published code (kineto tb_plugin, event_parser.py StepParser, overall_parser.py
OverallParser, gpu_metrics_parser.py GPUMetricsParser), run on the plugin's own test inputs
(../shared/peers/tb_plugin). The unit trace gpu_utilization.json also has the numbers the
plugin's test suite asserts (test_profiler.py test_gpu_utilization), checked as published.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402
import tb_plugin_reference as tb  # noqa: E402

MLPROF = sys.argv[1]



def run(*args):
    return mlprof_json(MLPROF, *args)


def near(a, b, tol=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol * max(1.0, abs(b))


def check_trace(rel, us=1000):
    path = shared_data.shared_path(rel)
    if not path:
        return
    name = os.path.basename(path)
    ev = tb.load(path)
    kept, names, windows = tb.device_steps(ev)
    gpu = run("gpu", path)
    steps = run("steps", path)
    summary = gpu["summary"]
    ref = tb.gpu_summary(ev, kept)
    got = {d["device"]: d for d in summary["devices"]}
    check(sorted(got) == sorted(ref), f"{name}: devices {sorted(got)} vs {sorted(ref)}")
    for dev, (util, sm, occ) in ref.items():
        d = got.get(dev)
        if d is None:
            continue
        check(near(d["gpu_utilization"], util), f"{name} GPU {dev}: utilization "
              f"{d['gpu_utilization']} vs {util}")
        check(near(d["est_sm_efficiency"], sm), f"{name} GPU {dev}: SM efficiency "
              f"{d['est_sm_efficiency']} vs {sm}")
        check(near(d["est_achieved_occupancy_pct"], occ), f"{name} GPU {dev}: occupancy "
              f"{d['est_achieved_occupancy_pct']} vs {occ}")
    base = tb.BASE_US * us
    check(summary["window_begin_ns"] == base + kept[0][0] * us and
          summary["window_end_ns"] == base + kept[-1][1] * us,
          f"{name}: window [{summary['window_begin_ns']}, {summary['window_end_ns']}] vs "
          f"{[base + kept[0][0] * us, base + kept[-1][1] * us]}")
    if not steps["steps"]:
        return ref
    check(steps["plugin_steps"] == len(kept), f"{name}: plugin keeps {steps['plugin_steps']} "
          f"steps vs {len(kept)}")
    costs = tb.step_costs(ev, windows)
    plugin_total = [0] * 8
    for k, (st, (b, e), c) in enumerate(zip(steps["steps"], windows, costs)):
        check(st["gpu_begin_ns"] == base + b * us and st["gpu_dur_ns"] == (e - b) * us,
              f"{name} step {st['number']}: GPU window {st['gpu_begin_ns']}+{st['gpu_dur_ns']} "
              f"vs {base + b * us}+{(e - b) * us}")
        check(st["plugin_dropped"] == (k >= len(kept)), f"{name} step {st['number']}: dropped")
        mine = [st["gpu_class_ns"][n] for n in tb.ROLE_NAMES]
        check(mine == [x * us for x in c], f"{name} step {st['number']}: classes {mine} vs "
              f"{[x * us for x in c]}")
        if k < len(kept):
            plugin_total = [a + x * us for a, x in zip(plugin_total, c)]
    check([steps["plugin_class_total_ns"][n] for n in tb.ROLE_NAMES] == plugin_total,
          f"{name}: the plugin's class totals")
    return ref


# The plugin's published expectation (test_profiler.py test_gpu_utilization).
ref = check_trace("peers/tb_plugin/unit/gpu_utilization.json")
if ref:
    util, sm, occ = ref[1]
    check(near(util, (40 + 20) / 120), "reference: published utilization")
    check(near(sm, (0.5 * 5 + 1.0 * 5 + 0.6 * 5 + 0.9 * 5 + 0.3 * 20 + 1.0 * 20) / 120),
          "reference: published SM efficiency")
    check(near(occ, (0.6 * 10 + 0.1 * 15 + 1.0 * 25 + 0.3 * 20) / 70),
          "reference: published occupancy")
for unit in ["gpu_utilization_kernel_out_of_step.json", "last_steps_no_kernel.json",
             "multiple_profilersteps_no_overlap.json", "runtime_launch_multipe_kernels.json",
             "all_categories.json"]:
    check_trace("peers/tb_plugin/unit/" + unit)
for sample in ["resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
               "resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"]:
    check_trace("peers/tb_plugin/traces/" + sample)


# Newer traces (NCCL kernels, gpu_user_annotation ranges, float-microsecond timestamps): with
# --tb-plugin-classes the step classes are the plugin's own (its reference treats a
# gpu_user_annotation as a user annotation, a CPU op); by default mlprof's documented
# differences apply (GPU annotations take no part, NCCL-named kernels are communication).
for rel in ["traces/kineto-gpu/nccl_parser_config/nccl_data.json.gz",
            "traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"]:
    path = shared_data.shared_path(rel)
    if not path:
        continue
    name = os.path.basename(path)
    ev = tb.load(path)
    kept, _, windows = tb.device_steps(ev)
    costs = tb.step_costs(ev, windows)
    exact = run("steps", path, "--tb-plugin-classes")
    default = run("steps", path)
    check(exact["tb_plugin_classes"] and not default["tb_plugin_classes"], f"{name}: flag echoed")
    check(exact["plugin_steps"] == len(kept), f"{name}: kept steps")
    base = tb.BASE_US * 1000
    for st, (b, e), c in zip(exact["steps"], windows, costs):
        tol = 2 + 1e-9 * (e - b) * 1000
        check(abs(st["gpu_begin_ns"] - (base + b * 1000)) <= 1 and
              abs(st["gpu_dur_ns"] - (e - b) * 1000) <= 2,
              f"{name} step {st['number']}: window {st['gpu_begin_ns']}+{st['gpu_dur_ns']} vs "
              f"{base + b * 1000}+{(e - b) * 1000}")
        mine = [st["gpu_class_ns"][n] for n in tb.ROLE_NAMES]
        bad = [(n, m, x * 1000) for n, m, x in zip(tb.ROLE_NAMES, mine, c)
               if abs(m - x * 1000) > tol]
        check(not bad, f"{name} step {st['number']}: plugin classes differ {bad}")
    # GPU annotations are user annotations to the plugin (CPU op, or communication when named
    # nccl:*), nothing by default: the two differ on these traces.
    if any(e.get("cat") == "gpu_user_annotation" for e in ev):
        check(exact["gpu_class_total_ns"] != default["gpu_class_total_ns"],
              f"{name}: the plugin's classes differ from mlprof's here")

finish()
