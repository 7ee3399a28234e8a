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
best() {  # best wall seconds of 3 runs of "$@"
  local b=999999 t
  for _ in 1 2 3; do
    t=$( { /usr/bin/time -f "%e" "$@" > /dev/null 2>/dev/null; } 2>&1 | tail -1)
    b=$(python3 -c "print(min($b, $t))")
  done
  echo "$b"
}
a=$(best "$BASE" analyze "$f" --json)
b=$(best "$MLPROF" bottlenecks "$f" --json)
python3 -c "a=$a; b=$b; print(f'mtia_rank_0: analyze {a:.2f} s (baseline), bottlenecks {b:.2f} s, ratio {b/a:.2f} (bar: <= 1.5)')"
