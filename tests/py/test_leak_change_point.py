"""`mlprof leaks --json` on leaks that start late and on growth that stops (issue 14 item 8).

Synthetic Kineto traces (written here, 24 steps): memory flat (with allocator noise) for some
steps, then growing by a fixed amount per step; or growing during warm-up and then flat. The
expected change point, rates and F-test p-value come from this script's own implementation of
the documented rule (docs/analysis.md "leaks"): the two-segment least-squares fit with the
smallest residual (each segment >= 3 samples, ties to the later split), an F test against one
line (3 extra parameters, Bonferroni over the splits tried), Theil-Sen slopes before and since.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

MLPROF = sys.argv[1]



def write_trace(path, totals, step_us=1000):
    """One ProfilerStep per total; the step ends with Total Allocated = totals[i]."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "python"}}]
    cur, addr = 0, 0x1000
    for i, t in enumerate(totals):
        ts = 1_000_000 + i * step_us
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1,
                   "tid": 1, "ts": ts, "dur": step_us - 10, "args": {}})
        delta = t - cur
        if delta != 0:
            addr += 0x100000
            ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": ts + step_us // 2,
                       "args": {"Device Type": 1, "Device Id": 0, "Addr": addr if delta > 0 else 0,
                                "Bytes": delta, "Total Allocated": t, "Total Reserved": t}})
            cur = t
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


def sse(y):
    x = np.arange(len(y), dtype=float)
    a = np.vstack([x, np.ones_like(x)]).T
    _, res, *_ = np.linalg.lstsq(a, y, rcond=None)
    fit = a @ np.linalg.lstsq(a, y, rcond=None)[0]
    return float(((y - fit) ** 2).sum())


def theil_sen(y):
    s = [(y[j] - y[i]) / (j - i) for i in range(len(y)) for j in range(i + 1, len(y))]
    return float(np.median(s))


def f_sf(f, d1, d2):
    """P(F > f) by integrating the F density (Simpson on the beta form)."""
    x0 = d2 / (d2 + d1 * f)  # I_x0(d2/2, d1/2)
    a, b = d2 / 2, d1 / 2
    n = 20000
    xs = np.linspace(0, x0, n + 1)[1:]
    lb = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    dens = np.exp((a - 1) * np.log(xs) + (b - 1) * np.log1p(-xs) - lb)
    return float(np.trapz(np.concatenate([[0.0 if a > 1 else dens[0]], dens]),
                          np.linspace(0, x0, n + 1)))


def change_point(y):
    y = np.asarray(y, dtype=float)
    n, m = len(y), 3
    best, k_best, tried = math.inf, None, 0
    for k in range(m, n - m + 1):
        tried += 1
        s2 = sse(y[:k]) + sse(y[k:])
        if s2 <= best * (1 + 1e-12) + 1e-9:
            best, k_best = s2, k
    s1 = sse(y)
    if best <= 1e-6:
        p = 0.0
    else:
        fstat = ((s1 - best) / 3) / (best / (n - 5))
        p = f_sf(fstat, 3, n - 5)
    return k_best, min(1.0, p * tried)


def leaks(totals):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        write_trace(path, totals)
        out = subprocess.run([MLPROF, "leaks", path, "--json"], check=True, capture_output=True,
                             text=True).stdout
    return json.loads(out)["devices"][0]


rng = np.random.default_rng(14)
MIB = 1 << 20
base = 512 * MIB
cases = {
    # flat for 12 steps (noise of a few KiB), then +1 MiB per step
    "late leak": [base + int(rng.integers(-4096, 4096)) for _ in range(12)] +
                 [base + (i + 1) * MIB + int(rng.integers(-4096, 4096)) for i in range(12)],
    # exact data: flat for 14 steps, then +256 KiB per step
    "late leak, exact": [base] * 14 + [base + (i + 1) * 256 * 1024 for i in range(10)],
    # warm-up: +8 MiB per step for 6 steps, then flat: a plateau, not a leak
    "plateau": [base + min(i, 6) * 8 * MIB + int(rng.integers(-2048, 2048)) for i in range(24)],
    # leak from the start: no change point, the overall slope
    "steady leak": [base + i * MIB for i in range(24)],
}
for name, totals in cases.items():
    got = leaks(totals)
    y = np.asarray(totals, dtype=float)
    k, p = change_point(y)
    if name == "steady leak":
        check(got["change_index"] == -1, f"{name}: no change point ({got['change_index']})")
        check(got["leak"], f"{name}: a leak")
        check(abs(got["slope_bytes_per_step"] - MIB) < 1, f"{name}: slope")
        continue
    check(got["change_index"] == k, f"{name}: change at sample {got['change_index']} vs {k}")
    check(got["growth_start_step"] == k, f"{name}: growth start step {got['growth_start_step']}")
    check(abs(got["change_p_value"] - p) <= 1e-3 * max(p, 1e-12) + 1e-12,
          f"{name}: change p {got['change_p_value']} vs {p}")
    rate = theil_sen(y[k:])
    before = theil_sen(y[:k])
    check(abs(got["slope_bytes_per_step"] - rate) <= 1e-6 * abs(rate) + 1,
          f"{name}: rate since the change {got['slope_bytes_per_step']} vs {rate}")
    check(abs(got["slope_before_bytes_per_step"] - before) <= 1e-6 * abs(before) + 1,
          f"{name}: rate before {got['slope_before_bytes_per_step']} vs {before}")
    overall = theil_sen(y)
    check(abs(got["overall_slope_bytes_per_step"] - overall) <= 1e-6 * abs(overall) + 1,
          f"{name}: overall slope")
    if name == "plateau":
        check(got["plateau"] and not got["leak"], f"{name}: plateau, not a leak: {got}")
    else:
        check(got["leak"] and not got["plateau"], f"{name}: a leak")
        # Over all steps (the old rule) the rate is well under the true one: the fix matters.
        check(overall < 0.8 * rate, f"{name}: overall slope {overall} vs rate {rate}")

finish()
