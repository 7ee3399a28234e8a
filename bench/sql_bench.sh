#!/usr/bin/env bash
# `mlprof sql` speed: the GROUP BY name query over the 1M-slice trace on the virtual tables next to
# an ordinary SQLite table holding the same rows (bench/sql_bench_tool.cpp, one process, best of
# RUNS each), then end to end (import + query) next to `mlprof ops` on the same file.
#   usage: bench/sql_bench.sh [TRACE] [MLPROF]
set -euo pipefail
cd "$(dirname "$0")/.."
TRACE=${1:-${MLPROF_SHARED_DIR:-../shared}/traces/pytorch-cpu/transformer_big.json.gz}
MLPROF=${2:-./build/mlprof}
TOOL=${TOOL:-./build/bench/sql_bench_tool}
RUNS=${RUNS:-3}
[ -e "$TRACE" ] || { echo "skip: $TRACE absent (MLPROF_SHARED_DIR)"; exit 77; }
"$TOOL" "$TRACE" "$RUNS"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
best() {  # best wall time (s) and its peak RSS (KB) over $RUNS runs of "$@"
  local bw=999999 br=0
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null
    read -r w r < "$tmp/time"
    if python3 -c "import sys; sys.exit(0 if $w < $bw else 1)"; then bw=$w; br=$r; fi
  done
  echo "$bw $br"
}
read -r sw sr < <(best "$MLPROF" sql "$TRACE" "SELECT name, count(*), sum(dur) FROM slice GROUP BY name" --csv)
read -r ow or < <(best "$MLPROF" ops "$TRACE" --top 0 --json)
echo "end to end (load + query), best of $RUNS:"
printf '  %-62s %6.2f s  %5.0f MB\n' "mlprof sql TRACE \"SELECT name, count(*), sum(dur) ... GROUP BY name\"" "$sw" "$(echo "$sr/1024" | bc -l)"
printf '  %-62s %6.2f s  %5.0f MB\n' "mlprof ops TRACE --top 0 --json" "$ow" "$(echo "$or/1024" | bc -l)"
