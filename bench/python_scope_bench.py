"""Cost of `with mlprof.profile("x"): pass` per use, beside a bare pair of time.perf_counter_ns()
calls and torch.profiler.record_function("x") measured in the same run (issue 12's bar: within 2x
of the perf_counter pair, at least 10x cheaper than record_function).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_scope_bench.py [--number N] [--repeat R]

Each figure is the best of R timeit repeats of N uses, in ns per use; the loop's own cost (an
empty `pass` statement) is subtracted from every row."""
import argparse
import sys
import timeit

import mlprof

ap = argparse.ArgumentParser()
ap.add_argument("--number", type=int, default=200_000)
ap.add_argument("--repeat", type=int, default=7)
a = ap.parse_args()

SETUP = "import time, mlprof\ntry:\n    import torch\nexcept ImportError:\n    torch = None\n"


def per_use(stmt):
    best = min(timeit.repeat(stmt, setup=SETUP, number=a.number, repeat=a.repeat))
    return best / a.number * 1e9


rows = []
loop = per_use("pass")
pair = per_use("time.perf_counter_ns(); time.perf_counter_ns()") - loop
idle = per_use("with mlprof.profile('x'): pass") - loop
# Recording: a session collects every scope (buffer sized so nothing is dropped).
session = mlprof.Session(buffer_mb=2048, rss_interval_ms=0)
session.start()
recording = per_use("with mlprof.profile('x'): pass") - loop
session.stop()
rows += [("perf_counter_ns() pair", pair), ("mlprof.profile, no session", idle),
         ("mlprof.profile, recording", recording)]
try:
    import torch  # noqa: F401

    rf = per_use("with torch.profiler.record_function('x'): pass") - loop
    rows.append(("torch record_function", rf))
except ImportError:
    rf = None
print(f"python {sys.version.split()[0]}, {a.repeat} x {a.number} uses, loop overhead {loop:.1f} ns subtracted")
for name, ns in rows:
    print(f"  {name:30s} {ns:8.1f} ns/use")
print(f"mlprof.profile (recording) / perf_counter pair: {recording / pair:.2f}x (bar: <= 2x)")
if rf:
    print(f"torch record_function / mlprof.profile (recording): {rf / recording:.1f}x (bar: >= 10x)")
