#!/usr/bin/env bash
# Issue 25's bar: `mlprof bottlenecks` (rules + the step-graph replays that price them) on the
# 87 MB MTIA trace takes at most 1.5x the time of `mlprof analyze` on it. Both run here, in the
# same run, interleaved (analyze, bottlenecks, analyze, ...: the machine is shared and noisy),
# ROUNDS times (default 5); it prints the best wall time of each and the median of the per-round
# ratios. BASELINE (default: MLPROF itself) is the binary whose analyze is the reference, e.g. a
# build of the commit before the replay.
#   usage: bench/bottlenecks_replay_bench.sh [MLPROF] [BASELINE]
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
BASE=${2:-$MLPROF}
f=${MLPROF_SHARED_DIR:-../shared}/traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz
[ -e "$f" ] || { echo "SKIP: $f absent"; exit 0; }
python3 - "$BASE" "$MLPROF" "$f" "${ROUNDS:-5}" <<'PY'
import statistics, subprocess, sys, time
base, new, f, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t
a, b = [], []
for _ in range(rounds):
    a.append(wall([base, "analyze", f, "--json"]))
    b.append(wall([new, "bottlenecks", f, "--json"]))
ratio = statistics.median(y / x for x, y in zip(a, b))
print(f"mtia_rank_0: analyze {min(a):.2f} s (baseline, best of {rounds}), bottlenecks "
      f"{min(b):.2f} s, median ratio {ratio:.2f} (bar: <= 1.5)")
PY
