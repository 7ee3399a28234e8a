"""`mlprof graphs` (issue 27 item 2): graph replays attributed to the capture pass, checked
against tests/py/graph_replay_reference.py on the shared serving and graph traces (TraceLens
test data): replayed-kernel counts per launch, the capture-order match, and the GPU time of the
replay re-attributed per captured op, module and kernel, and in `ops`' groups by input shape
and by call stack (the captured op's shapes and stack in the capture pass)."""
import json
import os
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402
import graph_replay_reference as ref  # noqa: E402

MLPROF = sys.argv[1]

CASES = [  # (trace, capture dir, whether auto-discovery is used)
    ("traces/serving/vllm_decode_full/graph_execution.json.gz", "traces/serving/vllm_decode_full/capture_traces"),
    ("traces/cuda-graphs/xdit_flux/profile_trace_rank_0.json.gz", "traces/cuda-graphs/xdit_flux/capture_traces"),
    ("traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz", "traces/serving/sglang_decode/capture_traces"),
]


def close(a, b, n):
    # mlprof keeps integer ns per event: allow 1 ns of rounding per kernel summed.
    return abs(a - b) <= max(2 * n, 1e-6 * abs(b))


for rel, caprel in CASES:
    trace = shared_data.shared_path(rel)
    capdir = shared_data.shared_path(caprel)
    if trace is None or capdir is None:
        continue
    cap_events = ref.load_capture_dir(capdir)
    want = ref.attribute(ref.load(trace), cap_events)
    # capture_traces/ beside the trace is not loaded by itself (serve, the report and Python read
    # one file; every surface shows the same numbers): a note names it.
    plain = subprocess.run([MLPROF, "graphs", trace, "--json"], capture_output=True, text=True)
    got = json.loads(plain.stdout)
    check(all(r["capture"] == -1 and "--capture" in r["why"] for r in got["replays"]),
          f"{rel}: without --capture every replay is unmatched, saying to give --capture")
    check("--capture" in plain.stderr and "capture_traces" in plain.stderr,
          f"{rel}: a note names the capture_traces/ beside the trace: {plain.stderr.strip()[:120]}")
    for args in ([trace, "--capture", capdir],):
        got = mlprof_json(MLPROF, "graphs", *args)
        tag = f"{rel} {' '.join(args[1:])}"
        check(len(got["replays"]) == len(want["replays"]),
              f"{tag}: {len(got['replays'])} replays, want {len(want['replays'])}")
        for g, (corr, n, matched) in zip(got["replays"], want["replays"]):
            check(g["correlation"] == corr and g["kernels"] == n,
                  f"{tag}: replay {corr}: {g['kernels']} kernels, want {n}")
            check(g["matched"] == matched and g["capture"] >= 0,
                  f"{tag}: replay {corr}: matched {g['matched']} in capture order, want {matched}")
        for key in ("ops", "modules", "kernels"):
            rows = {r["name"]: r for r in got[key]}
            check(set(rows) == set(want[key]),
                  f"{tag}: {key} names differ: {sorted(set(rows) ^ set(want[key]))[:5]}")
            for name, ns in want[key].items():
                r = rows.get(name)
                if r is None:
                    continue
                check(close(r["gpu_ns"], ns, r["kernels"]),
                      f"{tag}: {key} {name[:60]}: {r['gpu_ns']} ns, want {ns}")
        total = sum(want["kernels"].values())
        check(close(got["attributed_gpu_ns"], total, got["matched_kernels"]),
              f"{tag}: attributed {got['attributed_gpu_ns']} ns, want {total}")

# Without a capture pass every replay is reported unmatched, with why (H100 reduce-overhead
# trace: the graphs were captured before the profile started).
h100 = os.path.join(sys.argv[2], "h100", "h100_graphs.json.gz")
if os.path.exists(h100):
    got = mlprof_json(MLPROF, "graphs", h100)
    check(len(got["replays"]) == 4, f"h100 graphs: {len(got['replays'])} replays, want 4")
    check(all(r["capture"] == -1 and "--capture" in r["why"] for r in got["replays"]),
          "h100 graphs: unmatched replays say to give --capture")
    check(sum(r["kernels"] for r in got["replays"]) + 0 ==
          sum(n for _, n, _ in [(c, len(k), 0) for c, k in ref.replays(ref.load(h100))]),
          "h100 graphs: replayed kernel count")

# A trace holding its own capture pass (H100, reduce-overhead profiled from step 1; Kineto names
# no kernel on captured launches): replays match by position, Triton launches by name.
h100c = os.path.join(sys.argv[2], "h100", "h100_graphs_capture.json.gz")
if os.path.exists(h100c):
    ev = ref.load(h100c)
    want = ref.attribute(ev, ev)
    got = mlprof_json(MLPROF, "graphs", h100c)
    check(len(got["replays"]) == len(want["replays"]) == 8,
          f"h100 capture: {len(got['replays'])} replays, want {len(want['replays'])} (8)")
    for g, (corr, n, matched) in zip(got["replays"], want["replays"]):
        check(g["correlation"] == corr and g["kernels"] == n and g["matched"] == matched == n,
              f"h100 capture: replay {corr}: matched {g['matched']}/{g['kernels']}, want {matched}/{n}")
    caps = ref.captures(ev)
    check(sorted(c["kernels"] for c in got["captures"]) == sorted(len(c) for c in caps) == [51, 106],
          f"h100 capture: captured launches {[c['kernels'] for c in got['captures']]}, want [51, 106]")
    unnamed = sum(1 for c in caps for k, _, _ in c if not k)
    check(sum(c["unnamed"] for c in got["captures"]) == unnamed,
          f"h100 capture: unnamed launches {sum(c['unnamed'] for c in got['captures'])}, want {unnamed}")
    by_pos = sum(r["matched_by_position"] for r in got["replays"])
    check(by_pos == 4 * unnamed,  # each graph replayed 4 times
          f"h100 capture: {by_pos} kernels matched by position")
    for key in ("ops", "kernels"):
        rows = {r["name"]: r["gpu_ns"] for r in got[key]}
        check(set(rows) == set(want[key]), f"h100 capture: {key} names differ: "
              f"{sorted(set(rows) ^ set(want[key]))[:5]}")
        check(all(close(rows.get(k, 0), v, 8) for k, v in want[key].items()),
              f"h100 capture: {key} GPU time per name equals the reference")


def check_charged(tag, args, want, gpu_total=None):
    """ops, kernels and modules charge each matched replayed kernel to its captured op/module:
    the replayed share per name equals the reference's re-attribution by capture order, the
    graph launch's op keeps none of it, and no GPU time is lost or counted twice."""
    ops = mlprof_json(MLPROF, "ops", "--top", "0", *args)["ops"]
    replayed = defaultdict(int)
    for o in ops:
        replayed[o["name"]] += o.get("device_replayed_ns", 0)
    check(all("device_replayed_ns" in o for o in ops), f"{tag}: ops rows carry device_replayed_ns")
    # A captured Inductor op is named like its kernel: it must not join the kernel's GPU row.
    check(all(o["category"] not in ("kernel", "gpu_memcpy", "gpu_memset") for o in ops
              if o.get("device_replayed_ns")), f"{tag}: replayed time charged to a GPU-track row")
    want_ops = {k: v for k, v in want["ops"].items() if v}
    got_ops = {k: v for k, v in replayed.items() if v}
    check(set(got_ops) == set(want_ops),
          f"{tag}: ops with replayed time differ: {sorted(set(got_ops) ^ set(want_ops))[:5]}")
    for name, ns in want_ops.items():
        check(close(got_ops.get(name, 0), ns, 1000),
              f"{tag}: ops {name[:60]} replayed {got_ops.get(name, 0)} ns, want {ns}")
    launch_ops = {o["name"] for o in ops if "replay" in o["name"] or o["name"] == "Torch-Compiled Region: 0/0"}
    for o in ops:
        if o["name"] in launch_ops and o["count"] > 0:
            check(o["device_self_ns"] < sum(want["ops"].values()) / 100,
                  f"{tag}: graph launch's op {o['name'][:50]} keeps {o['device_self_ns']} ns of device self")
    if gpu_total is not None:
        total = sum(o["device_self_ns"] for o in ops)
        check(abs(total - gpu_total) <= 2 * len(ops),
              f"{tag}: ops device self sums to {total} ns, GPU work {gpu_total} ns (conserved)")
    top = max(ops, key=lambda o: o["device_self_ns"])
    check(top["name"] == max(want["ops"], key=want["ops"].get) or
          top["device_self_ns"] >= max(want["ops"].values()),
          f"{tag}: ops --sort device-self top row {top['name']}")
    by_op = mlprof_json(MLPROF, "kernels", *args)["by_op"]
    k_ops = defaultdict(int)
    for r in by_op:
        if r.get("replayed"):
            k_ops[r["op"]] += r["total_ns"]
    check(set(k_ops) == set(want_ops),
          f"{tag}: kernels by_op replayed ops differ: {sorted(set(k_ops) ^ set(want_ops))[:5]}")
    for name, ns in want_ops.items():
        check(close(k_ops.get(name, 0), ns, 1000),
              f"{tag}: kernels by_op {name[:60]} {k_ops.get(name, 0)} ns, want {ns}")
    mods = mlprof_json(MLPROF, "modules", *args)
    if "rows" in mods:
        m = defaultdict(int)
        for r in mods["rows"]:
            m[r["name"]] += r.get("gpu_replayed_ns", 0)
        want_m = {k: v for k, v in want["modules"].items() if v}
        got_m = {k: v for k, v in m.items() if v}
        check(set(got_m) == set(want_m),
              f"{tag}: modules with replayed time differ: {sorted(set(got_m) ^ set(want_m))[:5]}")
        for name, ns in want_m.items():
            check(close(got_m.get(name, 0), ns, 1000),
                  f"{tag}: module {name} replayed {got_m.get(name, 0)} ns, want {ns}")


for rel, caprel in CASES + [("traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
                              "traces/compile/kineto/vllm_prefilldecode_piecewise/capture_traces")]:
    trace = shared_data.shared_path(rel)
    capdir = shared_data.shared_path(caprel)
    if trace is None or capdir is None:
        continue
    ev = ref.load(trace)
    want = ref.attribute(ev, ref.load_capture_dir(capdir))
    check_charged(rel, [trace, "--capture", capdir], want, ref.gpu_work_ns(ev))
    # Without --capture, ops keeps the replay on the graph launch (as serve and the report do).
    plain = mlprof_json(MLPROF, "ops", "--top", "0", trace)["ops"]
    check(not any("device_replayed_ns" in o for o in plain),
          f"{rel}: ops without --capture charges nothing from capture_traces/")

if os.path.exists(h100c):
    ev = ref.load(h100c)
    check_charged("h100 capture", [h100c], ref.attribute(ev, ev), ref.gpu_work_ns(ev))


def group_rows(ops, key):
    """{(name, shape[, stack]): row} of `ops --json`'s groups (shape as canonical JSON)."""
    out = {}
    for g in ops[key]:
        k = (g["name"], json.dumps(json.loads(g["input_shape"])))
        out[k + ((g["call_stack"],) if key == "by_call_stack" else ())] = g
    return out


def check_groups(tag, trace, capdir, eager, want):
    """`ops`' groups by input shape and by call stack: the trace's own ops grouped by the rule
    (keys, calls and host time = graph_replay_reference.eager_groups), and with --capture each
    matched replayed kernel's GPU time charged to the group of its captured op, with that op's
    input shapes and call stack in the capture pass (= attribute_groups): what each group
    gains over the run without the capture."""
    plain = mlprof_json(MLPROF, "ops", "--top", "0", trace)
    with_cap = mlprof_json(MLPROF, "ops", "--top", "0", trace, "--capture", capdir)
    for key, ref_eager, ref_replayed in (("by_input_shape", eager[0], want[0]),
                                         ("by_call_stack", eager[1], want[1])):
        before, after = group_rows(plain, key), group_rows(with_cap, key)
        own = {k: (g["count"], g["total_ns"]) for k, g in before.items()}
        check(set(own) == set(ref_eager),
              f"{tag} {key}: groups of the trace's ops differ from the reference's: "
              f"{sorted(set(own) ^ set(ref_eager), key=str)[:3]}")
        for k, (n, host) in ref_eager.items():
            got = own.get(k, (0, 0))
            check(got[0] == n and abs(got[1] - host) <= 2 * n,
                  f"{tag} {key} {str(k)[:80]}: {got[0]} calls {got[1]} ns, want {n} calls {host} ns")
        gained = {}
        for k, g in after.items():
            b = before.get(k, {"count": 0, "total_ns": 0, "self_ns": 0, "device_self_ns": 0,
                               "device_total_ns": 0})
            check((g["count"], g["total_ns"], g["self_ns"]) == (b["count"], b["total_ns"], b["self_ns"]),
                  f"{tag} {key} {str(k)[:80]}: host columns change with --capture")
            check(g["device_total_ns"] - b["device_total_ns"] == g["device_self_ns"] - b["device_self_ns"],
                  f"{tag} {key} {str(k)[:80]}: device total gains what device self gains")
            if g["device_self_ns"] != b["device_self_ns"]:
                gained[k] = g["device_self_ns"] - b["device_self_ns"]
        check(set(before) <= set(after), f"{tag} {key}: a group is lost with --capture")
        want_k = {k: v for k, v in ref_replayed.items() if v}
        check(set(gained) == set(want_k),
              f"{tag} {key}: groups charged replayed time differ from the reference's: "
              f"{sorted(set(gained) ^ set(want_k), key=str)[:3]}")
        for k, v in want_k.items():
            check(close(gained.get(k, 0), v, 1000),
                  f"{tag} {key} {str(k)[:80]}: gains {gained.get(k, 0)} ns, want {v}")
        total, want_total = sum(gained.values()), sum(want_k.values())
        check(want_total > 0 and close(total, want_total, 2000),
              f"{tag} {key}: replayed GPU time in the groups {total} ns, want {want_total}")


for rel, caprel in CASES + [("traces/compile/kineto/vllm_prefilldecode_piecewise/graph_execution.json.gz",
                              "traces/compile/kineto/vllm_prefilldecode_piecewise/capture_traces")]:
    trace = shared_data.shared_path(rel)
    capdir = shared_data.shared_path(caprel)
    if trace is None or capdir is None:
        continue
    ev = ref.load(trace)
    check_groups(rel, trace, capdir, ref.eager_groups(ev),
                 ref.attribute_groups(ev, ref.load_capture_files(capdir)))


def check_cost(tag, path, captured_here, capture=None):
    """The cost side: each replay's launch host time and launch delay (launch call start to its
    first GPU event), from the JSON directly; graphs captured during the profile."""
    ev = ref.load(path)
    launches = {(e.get("args") or {}).get("correlation"): e for e in ev
                if e.get("ph") == "X" and e.get("cat") in ref.RUNTIME and
                e["name"].split("_")[0] in ("cudaGraphLaunch", "hipGraphLaunch")}
    first = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            c = (e.get("args") or {}).get("correlation")
            first[c] = min(first.get(c, e["ts"]), e["ts"])
    got = mlprof_json(MLPROF, "graphs", path, *(["--capture", capture] if capture else []))
    check(not capture or any(r["capture"] >= 0 for r in got["replays"]), f"{tag}: replays matched")
    for r in got["replays"]:
        l = launches[r["correlation"]]
        check(abs(r["launch_host_ns"] - (ref.ns(l["ts"] + l["dur"]) - ref.ns(l["ts"]))) <= 1,
              f"{tag}: replay {r['correlation']} launch host {r['launch_host_ns']} ns")
        check(abs(r["launch_delay_ns"] - (ref.ns(first[r["correlation"]]) - ref.ns(l["ts"]))) <= 1,
              f"{tag}: replay {r['correlation']} launch delay {r['launch_delay_ns']} ns")
        check((r["eager_launch_host_ns"] > 0) == (r["capture"] >= 0),
              f"{tag}: replay {r['correlation']} eager launch host time iff matched")
    check(got["captured_here"] == captured_here and got["recaptures"] == 0,
          f"{tag}: {got['captured_here']} graphs captured in the trace, want {captured_here}")


for rel, caprel in CASES:
    if shared_data.shared_path(rel) and shared_data.shared_path(caprel):
        check_cost(rel, shared_data.shared_path(rel), 0, shared_data.shared_path(caprel))
if os.path.exists(h100c):
    check_cost("h100 capture", h100c, 2)

finish()
