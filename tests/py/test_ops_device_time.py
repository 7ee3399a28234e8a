"""Device time per operator (issue 14 item 2): `mlprof ops --json` device_self_ns /
device_total_ns, and `mlprof kernels --json` by_op (kernels by launching op).

Expected values: tests/py/tb_plugin_reference.py op_device_times, this project's own
implementation of the TensorBoard plugin's Operator view (kineto tb_plugin node.py
OperatorNode.fill_stats / RuntimeNode.fill_stats, event_parser.py: a runtime call belongs to the
op with its External id; an op's device self time is the duration of the kernels, memcpys and
memsets its runtime calls launched; device total adds its child ops'), on the plugin's own
samples and unit traces (../shared/peers/tb_plugin). The kernel-by-op table is checked against
the same attribution grouped by (op, kernel, grid, block, registers, shared memory), the
plugin's "group by kernel name + op name" (module_parser.py kernel_list_groupby_name_op).
"""
import json
import os
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402
import tb_plugin_reference as tb  # noqa: E402

MLPROF = sys.argv[1]



def run(*args):
    return mlprof_json(MLPROF, *args)


def kernels_by_op(events):
    """{(op, kernel, grid, block, regs, smem): [count, total]} by the plugin's attribution."""
    ops = {tb.ext_id(e): e["name"] for e in events
           if e["type"] in ("Operator", "user_annotation", "Python", "ProfilerStep") and
           tb.ext_id(e) not in (None, 0)}
    rt_op = {}
    for rt in events:
        if rt["type"] == "Runtime":
            rt_op[tb.args(rt).get("correlation")] = ops.get(tb.ext_id(rt), "(no op)")
    out = defaultdict(lambda: [0, 0])
    for k in events:
        if k["type"] != "Kernel":
            continue
        a = tb.args(k)
        key = (rt_op.get(a.get("correlation"), "(no op)"), k["name"],
               json.dumps(a.get("grid")).replace(" ", ""), json.dumps(a.get("block")).replace(" ", ""),
               a.get("registers per thread"), a.get("shared memory"))
        out[key][0] += 1
        out[key][1] += k["end"] - k["ts"]
    return out


def check_trace(rel, us=1000):
    path = shared_data.shared_path(rel)
    if not path:
        return
    name = os.path.basename(path)
    ev = tb.load(path)
    ref = tb.op_device_times(ev)
    got = run("ops", path, "--top", "0")
    check(got["device_time"], f"{name}: ops carry device time")
    rows = {r["name"]: r for r in got["ops"] if r["category"] in ("Operator", "cpu_op")}
    for op, (self_t, total_t) in ref.items():
        r = rows.get(op)
        check(r is not None, f"{name}: op {op} listed")
        if r is None:
            continue
        check(r["device_self_ns"] == round(self_t * us),
              f"{name}: {op} device self {r['device_self_ns']} vs {self_t * us}")
        check(r["device_total_ns"] == round(total_t * us),
              f"{name}: {op} device total {r['device_total_ns']} vs {total_t * us}")
    # The kernel-by-op table.
    kref = kernels_by_op(ev)
    kern = run("kernels", path)["by_op"]
    mine = {}
    for r in kern:
        key = (r["op"], r["kernel"], r.get("grid", "null").replace(" ", ""),
               r.get("block", "null").replace(" ", ""), r.get("registers_per_thread"),
               r.get("shared_memory"))
        mine[key] = [r["count"], r["total_ns"]]
    check(len(mine) == len(kref), f"{name}: {len(mine)} (op, kernel) rows vs {len(kref)}")
    bad = [k for k, v in kref.items() if mine.get(k) != [v[0], round(v[1] * us)]]
    check(not bad, f"{name}: by_op rows differ, e.g. {bad[:2]} -> "
          f"{[mine.get(k) for k in bad[:2]]} vs {[kref[k] for k in bad[:2]]}")


for unit in ["gpu_utilization.json", "external_id.json", "runtime_launch_multipe_kernels.json",
             "group_by_kernel_columns.json"]:
    check_trace("peers/tb_plugin/unit/" + unit)
check_trace("peers/tb_plugin/traces/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz")

# A CPU-only trace has no device columns.
cpu = os.path.join(sys.argv[2], "mlp_bs64.json.gz")
got = run("ops", cpu, "--top", "5")
check(not got["device_time"] and all("device_self_ns" not in r for r in got["ops"]),
      "CPU trace: no device columns")

finish()
