"""`mlprof compare` finds the cause (issue 25, item 5): verdicts by contribution to the step
time, a call-count change with its own test, the step change attributed to the critical path's
rows, waits shown as symptoms of the GPU work they wait for.

- generated pairs (compare_eval_pairs.py) against their planted truth;
- the real pair of the issue (kineto-gpu/trace_diff control -> test: cudaMemcpyAsync 228 ->
  4,812 calls) against sums computed here from the JSON;
- the text, the JSON and the report's compare data (`report BASE NEW --data-json`) agree.
Expected numbers come from the generator's planted values or from this script's own sums and
its own Poisson rate test, never from mlprof's output."""
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(__file__))
import compare_eval_pairs as gen  # noqa: E402
from checks import check, finish  # noqa: E402
from shared_data import shared_path  # noqa: E402

MLPROF = sys.argv[1]


def compare_json(base, new, *extra):
    out = subprocess.run([MLPROF, "compare", base, new, "--json", *extra], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)["traceEvents"]


def per_step(events):
    """(name, cat) -> [count, total us] over X events, and the number of ProfilerStep markers."""
    rows = defaultdict(lambda: [0, 0.0])
    steps = 0
    for e in events:
        if e.get("ph") != "X":
            continue
        if e["name"].startswith("ProfilerStep#"):
            steps += 1
            continue
        r = rows[(e["name"], e.get("cat", ""))]
        r[0] += 1
        r[1] += e.get("dur", 0)
    return rows, steps


def poisson_rate_p(k1, e1, k2, e2):
    """Two-sided conditional test of two Poisson rates: k2 | n ~ Binomial(n, e2 / (e1 + e2))."""
    n, p0 = k1 + k2, e2 / (e1 + e2)
    if n > 5000:  # normal approximation with continuity correction
        sd = math.sqrt(n * p0 * (1 - p0))
        z = max(0.0, abs(k2 - n * p0) - 0.5) / sd
        return min(1.0, math.erfc(z / math.sqrt(2)))

    def logpmf(k):
        return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) +
                k * math.log(p0) + (n - k) * math.log1p(-p0))
    obs = logpmf(k2) + math.log1p(1e-7)
    return min(1.0, sum(math.exp(logpmf(k)) for k in range(n + 1) if logpmf(k) <= obs))


def row(doc, name, table=None):
    for t in ([table] if table else ["ops", "kernels", "python_functions"]):
        for r in doc[t]:
            if r["name"] == name:
                return r
    return None


def fmt_duration(ns):
    """render's format_duration_ns, for matching the text."""
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:.3f} s"
    if a >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.0f} ns"


def signed(ns):
    return ("+" if ns > 0 else "") + fmt_duration(ns)


def check_rows_against_sums(doc, base, new, names):
    """Per-step counts, totals and the calls test of `names` against this script's own sums."""
    (rb, sb), (rn, sn) = per_step(load(base)), per_step(load(new))
    for name, cat in names:
        r = row(doc, name)
        if not check(r is not None, f"{name}: row present"):
            continue
        kb, tb = rb[(name, cat)]
        kn, tn = rn[(name, cat)]
        check(r["base_count"] == kb and r["new_count"] == kn,
              f"{name}: calls {r['base_count']} -> {r['new_count']} vs {kb} -> {kn}")
        want = (tn / sn - tb / sb) * 1000
        check(abs(r["delta_per_step_ns"] - want) <= 1 + 1e-9 * abs(want),
              f"{name}: delta per step {r['delta_per_step_ns']} vs {want}")
        check(abs(r["calls_effect_ns"] + r["mean_effect_ns"] - r["delta_per_step_ns"]) < 1,
              f"{name}: from calls + from mean = delta")
        p = poisson_rate_p(kb, sb, kn, sn)
        check(abs(r["calls_p_value"] - p) <= 1e-6 + 1e-6 * p,
              f"{name}: calls p {r['calls_p_value']} vs {p}")


with tempfile.TemporaryDirectory() as tmp:
    pairs = gen.write_pairs(tmp)

    # More calls at the same mean: the regression, from calls.
    base, new, truth = pairs["more_calls"]
    doc = compare_json(base, new)
    copy = row(doc, truth["cause"], "ops")
    check(copy is not None and copy["verdict"] == "regression" and copy["cause"] == truth["driver"],
          f"more_calls: {truth['cause']} is a regression from calls: {copy and (copy['verdict'], copy['cause'])}")
    if copy:
        check(abs(copy["delta_per_step_ns"] / 1000 - truth["delta_per_step_us"]) <=
              0.2 * truth["delta_per_step_us"],
              f"more_calls: delta {copy['delta_per_step_ns']} ns vs planted {truth['delta_per_step_us']} us")
        check(abs(copy["delta_mean_pct"]) < 5, f"more_calls: same mean ({copy['delta_mean_pct']:.1f}%)")
    mm = row(doc, "aten::mm", "ops")
    check(mm is not None and mm["verdict"] == "unchanged", f"more_calls: aten::mm unchanged ({mm and mm['verdict']})")
    check_rows_against_sums(doc, base, new, [("aten::copy_", "cpu_op"), ("aten::mm", "cpu_op")])
    # The text shows the same row and numbers.
    text = subprocess.run([MLPROF, "compare", base, new], capture_output=True, text=True).stdout
    line = next((l for l in text.splitlines() if l.startswith("aten::copy_") and "verdict" not in l
                 and l.rstrip().endswith(")")), "")
    check(copy is not None and signed(copy["delta_per_step_ns"]) in line and "regression (calls)" in line,
          f"more_calls: text row {line!r}")
    # The gate: more than 10% more time per step in a significant regression -> exit 3.
    r = subprocess.run([MLPROF, "compare", base, new, "--fail-on-regression", "10"],
                       capture_output=True, text=True)
    check(r.returncode == 3 and "aten::copy_" in r.stderr, f"more_calls: gate exit {r.returncode} {r.stderr!r}")
    r = subprocess.run([MLPROF, "compare", base, base, "--fail-on-regression", "0"], capture_output=True)
    check(r.returncode == 0, f"a trace against itself passes the gate (exit {r.returncode})")
    # The report's compare data is the same object.
    rep = subprocess.run([MLPROF, "report", base, new, "--data-json"], capture_output=True, text=True)
    check(rep.returncode == 0 and json.loads(rep.stdout).get("compare") == doc,
          "more_calls: report's compare data == compare --json")

    # The GPU got more work; the sync at the end of the step waits for it.
    base, new, truth = pairs["gpu_more_work"]
    doc = compare_json(base, new)
    step_delta_us = (doc["new"]["step_mean_ns"] - doc["base"]["step_mean_ns"]) / 1000
    check(abs(step_delta_us - truth["delta_per_step_us"]) <= 0.2 * truth["delta_per_step_us"],
          f"gpu_more_work: step +{step_delta_us:.0f} us vs planted {truth['delta_per_step_us']}")
    att = doc["attribution"]
    causes = [c for c in att["causes"] if not c["wait"]]
    check(bool(causes) and causes[0]["name"] == truth["cause"] and causes[0]["kind"] == "gpu",
          f"gpu_more_work: first cause {causes[:1]}")
    if causes:
        check(abs(causes[0]["delta_ns"] / 1000 - truth["delta_per_step_us"]) <= 0.2 * truth["delta_per_step_us"],
              f"gpu_more_work: cause delta {causes[0]['delta_ns']} ns vs planted {truth['delta_per_step_us']} us")
    # The sync claims none of the change: it is a symptom, linked to the GEMM.
    check(all(abs(c["share_pct"]) < 20 for c in att["causes"] if c["wait"]),
          f"gpu_more_work: no wait claims the change {[c for c in att['causes'] if c['wait']]}")
    sync = row(doc, truth["symptom"], "ops")
    check(sync is not None and sync["wait"], f"gpu_more_work: {truth['symptom']} is a wait")
    sym = [y for y in att["symptoms"] if y["name"] == truth["symptom"]]
    check(bool(sym) and sym[0]["waits_for"][:1] == [truth["cause"]],
          f"gpu_more_work: symptom links to the GEMM: {sym}")
    text = subprocess.run([MLPROF, "compare", base, new], capture_output=True, text=True).stdout
    head = next((l for l in text.splitlines() if l.startswith("causes")), "")
    check(causes and head.startswith(f"causes (critical path per step): {truth['cause']} {signed(causes[0]['delta_ns'])}"),
          f"gpu_more_work: text headline {head!r}")
    check(f"{truth['symptom']} {signed(sym[0]['delta_per_step_ns']) if sym else '?'} per step, waits for: {truth['cause']}" in text,
          "gpu_more_work: text symptom line")
    rep = subprocess.run([MLPROF, "report", base, new, "--data-json"], capture_output=True, text=True)
    check(rep.returncode == 0 and json.loads(rep.stdout).get("compare") == doc,
          "gpu_more_work: report's compare data == compare --json")

# The evaluation set's compare pair (advice_eval_traces.py, issue 25 item 6): cudaMemcpyAsync
# called 228 -> 4,812 times at the same 50 us.
with tempfile.TemporaryDirectory() as tmp:
    import advice_eval_traces as aet
    truth = next(t for t in aet.write_all(tmp) if t["kind"] == "compare")
    doc = compare_json(truth["base"], truth["test"])
    r = row(doc, truth["op"], "ops")
    check(r is not None and r["verdict"] == "regression" and r["cause"] == "calls",
          f"eval pair: {truth['op']} is a regression from calls ({r and (r['verdict'], r['cause'])})")
    if r:
        steps = doc["base"]["steps"]
        check(r["base_count"] == truth["calls_base"] and r["new_count"] == truth["calls_test"],
              f"eval pair: calls {r['base_count']} -> {r['new_count']}")
        check(abs(r["delta_per_step_ns"] - truth["delta_us"] * 1000 / steps) <= 0.2 * truth["delta_us"] * 1000 / steps,
              f"eval pair: delta per step {r['delta_per_step_ns']} vs planted {truth['delta_us'] * 1000 / steps}")
        check(abs(r["delta_mean_pct"]) < 5, "eval pair: same mean")
    check(doc["worst_regression"] in (truth["op"], "aten::copy_", "(step time)"),
          f"eval pair: worst regression {doc['worst_regression']}")

# The real pair of the issue.
control = shared_path("traces/kineto-gpu/trace_diff/control/control.json.gz")
test = shared_path("traces/kineto-gpu/trace_diff/test/test.json.gz")
if control and test:
    doc = compare_json(control, test)
    for name in ["cudaMemcpyAsync", "aten::copy_"]:
        r = row(doc, name, "ops")
        check(r is not None and r["verdict"] == "regression" and "calls" in r["cause"],
              f"real pair: {name} is a regression from calls ({r and (r['verdict'], r['cause'])})")
    check_rows_against_sums(doc, control, test, [("cudaMemcpyAsync", "cuda_runtime"),
                                                 ("aten::copy_", "cpu_op")])
    top = doc["ops"][0]
    check(top["name"] == "cudaMemcpyAsync", f"real pair: the largest host change is cudaMemcpyAsync ({top['name']})")
    att = doc["attribution"]
    check("unavailable" not in att and att["base_path_steps"] == 6 and att["new_path_steps"] == 6,
          f"real pair: critical paths of 6 -> 6 steps ({att.get('unavailable')})")
    for c in att["causes"]:
        check(abs(c["new_ns"] - c["base_ns"] - c["delta_ns"]) < 1, f"real pair: cause {c['name']} delta")
finish()
