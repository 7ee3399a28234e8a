"""`mlprof summary --json` against an independent Python computation over the same JSON."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import trace_reference as ref  # noqa: E402
from checks import check, finish  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]
# Our own traces, then Kineto GPU traces from the shared data folder (absent ones are skipped).
FILES = [os.path.join(DATA, name) for name in ["tiny_linear.json", "mlp_bs64.json.gz", "a_mlp_b32_w64.kineto.json.gz"]]
FILES += [p for p in map(shared_path, [
    "traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
    "traces/kineto-gpu/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "traces/kineto-gpu/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    "traces/kineto-gpu/trace_file_list/inference_rank_1.json.gz"]) if p]

for path in FILES:
    name = os.path.basename(path)
    doc, events = ref.load(path)
    sl = ref.slices(events)
    expected = ref.op_table(sl, merge_steps=True)
    out = subprocess.run([MLPROF, "summary", path, "--json", "--top", "1000000"],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    ops = {(o["name"], o["category"]): (o["count"], o["total_ns"], o["self_ns"]) for o in got["top_ops"]}
    check(len(ops) == len(expected), f"{name}: {len(ops)} ops, expected {len(expected)}")
    for key, (count, total, self_ns) in expected.items():
        g = ops.get(key)
        check(g is not None and g[0] == count and g[1] == total and g[2] == self_ns,
              f"{name}: op {key}: got {g}, expected {(count, total, self_ns)}")
    # Distribution columns: min, max, population std and numpy-style (linear) percentiles of
    # each op's call durations, computed here without mlprof.
    durs = {}
    for sli in sl:
        nm = "ProfilerStep#*" if sli[3].startswith("ProfilerStep#") else sli[3]
        durs.setdefault((nm, sli[4]), []).append(sli[2])

    def pct(sorted_d, q):
        pos = q / 100 * (len(sorted_d) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(sorted_d) - 1)
        return sorted_d[lo] + (sorted_d[hi] - sorted_d[lo]) * (pos - lo)

    for o in got["top_ops"]:
        d = sorted(durs[(o["name"], o["category"])])
        mean = sum(d) / len(d)
        std = (sum((x - mean) ** 2 for x in d) / len(d)) ** 0.5
        want = {"min_ns": d[0], "max_ns": d[-1], "p50_ns": pct(d, 50), "p90_ns": pct(d, 90),
                "p99_ns": pct(d, 99), "std_ns": std}
        for k, v in want.items():
            check(abs(o[k] - v) <= 1e-6 * max(1.0, abs(v)), f"{name}: {o['name']} {k}: got {o[k]}, expected {v}")
    cats = ref.categories(events, sl)
    for cat, n in cats.items():
        check(got["categories"].get(cat) == n, f"{name}: category {cat!r}: got {got['categories'].get(cat)}, expected {n}")
    check(got["events"]["slices"] == len(sl), f"{name}: slices {got['events']['slices']} vs {len(sl)}")
    check(got["steps"] == ref.steps(sl), f"{name}: steps {got['steps']} vs {ref.steps(sl)}")
    mem = sum(1 for e in events if e.get("ph") in ("i", "I") and e.get("name") == "[memory]")
    check(got["events"]["memory"] == mem, f"{name}: memory events {got['events']['memory']} vs {mem}")
    if isinstance(doc, dict) and "distributedInfo" in doc:
        check(got["rank"] == doc["distributedInfo"].get("rank", -1), f"{name}: rank")
    print(f"{name}: {len(expected)} ops, {len(sl)} slices, {ref.steps(sl)} steps checked")

finish()
