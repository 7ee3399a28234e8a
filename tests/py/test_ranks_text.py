"""The text of `mlprof ranks` and `mlprof export DIR` on HTA's 2-rank set. The memory row of the
distributions: the traces have no memory events (counted here), so it is dashes (it read "0 B" on
every rank and named rank 1 the max). The clock-alignment line of `mlprof ranks` and `mlprof export DIR` on HTA's 2-rank set
(../shared/traces/kineto-gpu/trace_filter): how many traces lack baseTimeNanoseconds is counted
here from the JSON files (the note said "no baseTimeNanoseconds in every trace", read as "none"),
and export's stderr residual is the ranks JSON's residual_ns in the duration format the ranks
text uses (it printed raw ns). A copy where one rank has baseTimeNanoseconds gives "missing in 1
of 2". Skips (exit 77) without the shared data."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MLPROF = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shared_data import require  # noqa: E402
from checks import check, finish  # noqa: E402

SRC = os.path.dirname(require("traces/kineto-gpu/trace_filter/sampled_rank-0.json.gz"))
UNIT = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def lacking_base(d):
    n = 0
    for f in sorted(os.listdir(d)):
        with gzip.open(os.path.join(d, f)) as fh:
            n += "baseTimeNanoseconds" not in json.load(fh)
    return n


def note_want(d):
    files, lack = len(os.listdir(d)), lacking_base(d)
    return "no trace has baseTimeNanoseconds" if lack == files else f"baseTimeNanoseconds missing in {lack} of {files} traces"


with tempfile.TemporaryDirectory() as tmp:
    mixed = os.path.join(tmp, "mixed")
    os.mkdir(mixed)
    for f in sorted(os.listdir(SRC)):
        shutil.copy(os.path.join(SRC, f), mixed)
    # Rank 0 gets a baseTimeNanoseconds, rank 1 not: 1 of 2 lacks it.
    p = os.path.join(mixed, "sampled_rank-0.json.gz")
    with gzip.open(p) as fh:
        d = json.load(fh)
    d["baseTimeNanoseconds"] = 1700000000000000000
    with gzip.open(p, "wt") as fh:
        json.dump(d, fh)
    for d in (SRC, mixed):
        want = note_want(d)
        r = subprocess.run([MLPROF, "ranks", d, "--json"], capture_output=True, text=True)
        check(r.returncode == 0, f"ranks {d}: exit {r.returncode} {r.stderr[:200]}")
        if r.returncode:
            continue
        clock = json.loads(r.stdout)["clock_alignment"]
        check(clock["note"].startswith(want), f"{d}: note {clock['note']!r} should start with {want!r}")
        if d is SRC:
            e = subprocess.run([MLPROF, "export", d, "-o", os.path.join(tmp, "m.json"), "--steps", "552:552"],
                               capture_output=True, text=True)
            m = re.search(r"residual ([\d.]+) (ns|us|ms|s)\)", e.stderr.replace("µs", "us"))
            check(m is not None, f"export stderr residual as a duration: {e.stderr[:200]!r}")
            if m:
                got = float(m.group(1)) * UNIT[m.group(2)]
                # Scaled as the ranks text does (below 1000 of its unit), not raw ns.
                check(float(m.group(1)) < 1000 or m.group(2) == "s", f"export residual scaled: {m.group(0)}")
                check(abs(got - clock["residual_ns"]) <= 0.0005 * abs(clock["residual_ns"]) + 1,
                      f"export residual {m.group(0)} vs ranks JSON {clock['residual_ns']} ns")
# Memory events (Kineto's "[memory]" instants with Bytes) counted in the files: none, so the
# "memory peak" row has nothing to show.
mem = 0
for f in sorted(os.listdir(SRC)):
    with gzip.open(os.path.join(SRC, f)) as fh:
        mem += sum(1 for e in json.load(fh)["traceEvents"] if e.get("name") == "[memory]" or "Bytes" in (e.get("args") or {}))
r = subprocess.run([MLPROF, "ranks", SRC], capture_output=True, text=True)
row = [l for l in r.stdout.splitlines() if l.startswith("memory peak")]
check(mem == 0 and len(row) == 1 and row[0].split()[2:] == ["-"] * 7,
      f"memory peak row with {mem} memory events: {row}")
# CPU-only ranks (the legacy CPU traces of tests/data, no GPU event: checked here): the GPU columns
# are dashes (they read "0 ns 0.0% ... -%"), no "compute imbalance 0.000".
DATA = sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    gpu_events = 0
    for f in ("mlp_bs64.json.gz", "mlp_bs256.json.gz"):
        shutil.copy(os.path.join(DATA, f), tmp)
        with gzip.open(os.path.join(DATA, f)) as fh:
            d = json.load(fh)
        ev = d["traceEvents"] if isinstance(d, dict) else d
        gpu_events += sum(1 for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    r = subprocess.run([MLPROF, "ranks", tmp], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    head = lines.index(next(l for l in lines if l.startswith("rank ")))
    rows = [l.split() for l in lines[head + 2:head + 4]]
    check(gpu_events == 0 and len(rows) == 2 and all(x[-6:] == ["-"] * 6 for x in rows),
          f"CPU-only ranks ({gpu_events} GPU events): GPU columns {rows}")
    check(lines[0].startswith("2 ranks,") and "compute imbalance" not in lines[0], f"CPU-only header: {lines[0]}")
finish()
