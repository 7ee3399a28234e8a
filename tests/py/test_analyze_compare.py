"""`mlprof compare --json` on the real pair mlp_bs64 -> mlp_bs256 against Python sums, and the
--fail-on-regression exit codes (3 on a significant regression, 0 on a trace against itself)."""
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import analyze_reference as ar  # noqa: E402
import trace_reference as ref  # noqa: E402
from checks import check, finish  # noqa: E402

MLPROF, DATA = sys.argv[1], sys.argv[2]


base = os.path.join(DATA, "mlp_bs64.json.gz")
new = os.path.join(DATA, "mlp_bs256.json.gz")
got = ar.run_json(MLPROF, "compare", base, new, "--top", "0")
sl_b, sl_n = ref.slices(ref.load(base)[1]), ref.slices(ref.load(new)[1])
steps_b = [d for _, _, d, _ in ar.steps(sl_b)]
steps_n = [d for _, _, d, _ in ar.steps(sl_n)]
check(got["speedup_basis"] == "step mean", "speedup from step means")
speedup = statistics.mean(steps_b) / statistics.mean(steps_n)
check(abs(got["overall_speedup"] - speedup) < 1e-9, f"speedup {got['overall_speedup']} vs {speedup}")
rows = {(r["name"], r["category"]): r for r in got["ops"]}
for op in ["aten::addmm", "aten::mm", "data_load"]:
    tb = sum(s[2] for s in sl_b if s[3] == op)
    tn = sum(s[2] for s in sl_n if s[3] == op)
    r = rows.get((op, ""))
    check(r is not None, f"{op} row present")
    if r:
        check(r["base_total_ns"] == tb and r["new_total_ns"] == tn, f"{op}: totals {r['base_total_ns']}/{r['new_total_ns']} vs {tb}/{tn}")
        check(r["delta_total_ns"] == tn - tb, f"{op}: delta")
# A verdict is a regression only when the time per step grew by at least 5% and a part that
# grew it is significant and at least 5% itself: the calls per step or the mean per call.
for r in got["ops"]:
    if r["verdict"] == "regression":
        by_calls = r["calls_significant"] and r["calls_change_pct"] >= 5
        by_mean = r["significant"] and r["delta_mean_pct"] >= 5
        check(r["delta_per_step_pct"] >= 5 and (by_calls or by_mean), f"{r['name']}: regression rule")

# Gating: bs256 does 4x the work per call of the matmuls, so some op regresses significantly.
rc = subprocess.run([MLPROF, "compare", base, new, "--fail-on-regression", "10"],
                    capture_output=True).returncode
worst = got["worst_regression_pct"]
check(rc == (3 if worst > 10 else 0), f"--fail-on-regression 10 exit {rc} (worst {worst})")
rc = subprocess.run([MLPROF, "compare", base, base, "--fail-on-regression", "0"],
                    capture_output=True).returncode
check(rc == 0, f"a trace against itself exits 0 (got {rc})")
rc = subprocess.run([MLPROF, "compare", base, os.path.join(DATA, "no_such_file.json")],
                    capture_output=True).returncode
check(rc == 2, f"missing file exits 2 (got {rc})")
finish()
