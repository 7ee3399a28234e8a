#!/usr/bin/env bash
# Issue 25's bar: `mlprof bottlenecks` (rules + the step-graph replays that price them) on the
# 87 MB MTIA trace takes at most 1.5x the time of `mlprof analyze` on it. Both run here, in the
# same run (best of 3 wall times each); BASELINE (default: MLPROF itself) is the binary whose
# analyze is the reference, e.g. a build of the commit before the replay.
#   usage: bench/bottlenecks_replay_bench.sh [MLPROF] [BASELINE]
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
BASE=${2:-$MLPROF}
f=${MLPROF_SHARED_DIR:-../shared}/traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz
[ -e "$f" ] || { echo "SKIP: $f absent"; exit 0; }
python3 - "$BASE" "$MLPROF" "$f" <<'PY'
import subprocess, sys, time
base, new, f = sys.argv[1:]
def best(cmd):  # best wall seconds of 3 runs
    b = 1e9
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        b = min(b, time.perf_counter() - t)
    return b
a = best([base, "analyze", f, "--json"])
b = best([new, "bottlenecks", f, "--json"])
print(f"mtia_rank_0: analyze {a:.2f} s (baseline), bottlenecks {b:.2f} s, ratio {b / a:.2f} (bar: <= 1.5)")
PY
