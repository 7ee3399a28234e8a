#!/usr/bin/env bash
# `mlprof compile` over TORCH_TRACE logs with N compile ids (bench/gen_compile_log.py: dynamo
# start, chromium phases, metrics and a cache artifact per id; recompiles and restarts that need
# another record's code object and caller). Per size: wall and CPU seconds (user + sys: the
# machine may be shared, CPU time is what compares), CPU per 1,000 ids, and time(4N) / time(N)
# for the sizes 4x apart, measured in this run: about 4 when linear. Issue 32: 10k ids took
# 0.85 s, 20k 4.5 s, 40k 43 s, 300k more than 120 s (a scan of the log per record).
#   usage: bench/compile_scale.sh [MLPROF]     (SIZES="10000 20000 40000 160000 300000")
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
SIZES=${SIZES:-"10000 20000 40000 160000 300000"}
tmp=$(mktemp -d /tmp/mlprof-compile-bench.XXXXXX); trap 'rm -rf "$tmp"' EXIT
declare -A cpu
printf '%8s %8s %8s %8s %14s\n' ids "log MB" "wall s" "CPU s" "CPU ms/1k ids"
for n in $SIZES; do
  python3 bench/gen_compile_log.py "$n" "$tmp/c$n.log"
  /usr/bin/time -o "$tmp/time" -f "%e %U %S" "$MLPROF" compile "$tmp/c$n.log" > "$tmp/out" 2>&1 ||
    { cat "$tmp/out"; exit 1; }
  grep -q "$n" "$tmp/out" || { echo "compile_scale: the output does not mention $n ids"; exit 1; }
  read -r wall user sys < "$tmp/time"
  cpu[$n]=$(python3 -c "print($user + $sys)")
  python3 -c "
n, wall, cpu, mb = $n, $wall, ${cpu[$n]}, $(stat -c %s "$tmp/c$n.log") / 1e6
print(f'{n:8d} {mb:8.1f} {wall:8.2f} {cpu:8.2f} {cpu / n * 1e6:14.1f}')"
  rm -f "$tmp/c$n.log"
done
# Linear: time(4N) / time(N) about 4 (from 10k to 40k ids it was 50).
for n in $SIZES; do
  if [ -n "${cpu[$((4 * n))]:-}" ]; then
    python3 -c "print(f'CPU time({4 * $n}) / time($n) = {${cpu[$((4 * n))]} / ${cpu[$n]}:.2f} (linear: 4)')"
  fi
done
