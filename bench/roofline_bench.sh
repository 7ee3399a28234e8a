#!/usr/bin/env bash
# Issue 26's bar: the roofline adds at most 20% to `mlprof analyze` on the 87 MB MTIA trace.
# Measured two ways in the same run (best of 5 wall times each):
#   1. `mlprof analyze --json` of MLPROF (with the roofline section) against BASELINE's (a build
#      without it, e.g. the commit before; default MLPROF itself, ratio 1);
#   2. within MLPROF: `mlprof roofline` minus `mlprof steps` (the same load and steps, plus the
#      roofline) over `mlprof analyze`: the roofline's own share of analyze's time.
#   usage: bench/roofline_bench.sh [MLPROF] [BASELINE]
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
BASE=${2:-$MLPROF}
f=${MLPROF_SHARED_DIR:-../shared}/traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz
[ -e "$f" ] || { echo "SKIP: $f absent"; exit 0; }
python3 - "$BASE" "$MLPROF" "$f" <<'PY'
import subprocess, sys, time
base, new, f = sys.argv[1:]
def best(cmd, n=5):
    b = 1e9
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        b = min(b, time.perf_counter() - t)
    return b
a1 = best([new, "analyze", f, "--json"])
r = best([new, "roofline", f, "--json"])
s = best([new, "steps", f, "--json"])
line = (f"mtia_rank_0: analyze {a1:.3f} s; roofline {r:.3f} s - steps {s:.3f} s = {r - s:.3f} s, "
        f"{100 * max(0.0, r - s) / a1:.1f}% of analyze (bar: <= 20%)")
if base != new:
    a0 = best([base, "analyze", f, "--json"])
    line += f"; analyze {a0:.3f} s without the roofline (baseline): {100 * (a1 / a0 - 1):+.1f}%"
print(line)
PY
