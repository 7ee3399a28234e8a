#!/usr/bin/env bash
# Host-allocation tracking overhead: bench/alloc_heavy_tool plain, under `mlprof run --memory`
# and under heaptrack, in one run; prints in-process and end-to-end slowdowns.
# In-process = the time the program measures itself (tracking cost in the hot path);
# end to end = the whole command, including writing and post-processing the capture
# (mlprof: symbolize, build the trace, save .mlprof, print the reports; heaptrack: record,
# then heaptrack_print's analysis).
# Every configuration runs RUNS times, interleaved (so load from other work hits them alike), and
# the best time of each is kept; slowdowns are against the plain runs of the same invocation.
# Usage: bench/run_memory_bench.sh [BUILD_DIR=build-run] [THREADS=4] [OPS_PER_THREAD=1000000] [RUNS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-run}
threads=${2:-4}
ops=${3:-1000000}
runs=${4:-3}
tool=$build/bench/alloc_heavy_tool
mlprof=$build/mlprof
for f in "$tool" "$mlprof" "$build/libmlprof_preload.so"; do
  [[ -e $f ]] || { echo "missing $f: cmake --build $build --target mlprof alloc_heavy_tool"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
inproc() { sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$1" | tail -1; }
min() { if [[ -z $1 ]]; then echo "$2"; else echo "if ($2 < $1) $2 else $1" | bc -l; fi; }
have_heaptrack=0
command -v heaptrack > /dev/null && have_heaptrack=1

# -q: capture, build the trace, save it; no reports.
ml_quiet() {
  local t0 t1
  t0=$(now)
  "$mlprof" run --memory -q -o "$tmp/run.mlprof" -- "$tool" "$threads" "$ops" > "$tmp/mlprof.out"
  t1=$(now)
  q_in=$(min "$q_in" "$(inproc "$tmp/mlprof.out")")
  q_e2e=$(min "$q_e2e" "$(echo "$t1 - $t0" | bc -l)")
}
# The default: also the summary, heap, memory and bottlenecks reports (as heaptrack_print).
ml_reports() {
  local t0 t1
  t0=$(now)
  "$mlprof" run --memory -o "$tmp/run.mlprof" -- "$tool" "$threads" "$ops" > "$tmp/mlprof_r.out"
  t1=$(now)
  r_in=$(min "$r_in" "$(inproc "$tmp/mlprof_r.out")")
  r_e2e=$(min "$r_e2e" "$(echo "$t1 - $t0" | bc -l)")
}

echo "alloc_heavy_tool: $threads threads x $ops malloc/free pairs, best of $runs"
plain_in="" plain_e2e="" q_in="" q_e2e="" r_in="" r_e2e="" ml_heap="" ht_in="" ht_e2e=""
for ((run = 1; run <= runs; run++)); do
  t0=$(now); "$tool" "$threads" "$ops" > "$tmp/plain.out"; t1=$(now)
  plain_in=$(min "$plain_in" "$(inproc "$tmp/plain.out")")
  plain_e2e=$(min "$plain_e2e" "$(echo "$t1 - $t0" | bc -l)")

  # Which of the two mlprof runs goes first alternates (the first one after the plain run was
  # seen to be slower on a loaded machine).
  if ((run % 2)); then ml_quiet; ml_reports; else ml_reports; ml_quiet; fi

  t2=$(now); "$mlprof" heap "$tmp/run.mlprof" > /dev/null; t3=$(now)
  ml_heap=$(min "$ml_heap" "$(echo "$t3 - $t2" | bc -l)")

  if ((have_heaptrack)); then
    rm -f "$tmp"/ht*
    t0=$(now)
    heaptrack -o "$tmp/ht" "$tool" "$threads" "$ops" > "$tmp/ht.out" 2>&1
    htfile=$(ls "$tmp"/ht*.zst "$tmp"/ht*.gz 2>/dev/null | head -1 || true)
    heaptrack_print "$htfile" > /dev/null 2>&1 || heaptrack --analyze "$htfile" > /dev/null 2>&1 || true
    t1=$(now)
    ht_in=$(min "$ht_in" "$(inproc "$tmp/ht.out")")
    ht_e2e=$(min "$ht_e2e" "$(echo "$t1 - $t0" | bc -l)")
  fi
done

row() {  # name in_s e2e_s
  if [[ -z $2 ]]; then printf "%-30s %10s\n" "$1" "n/a"; return; fi
  printf "%-30s %9.3fs %6.2fx %9.3fs %6.2fx\n" "$1" "$2" "$(echo "$2 / $plain_in" | bc -l)" \
    "$3" "$(echo "$3 / $plain_e2e" | bc -l)"
}
printf "%-30s %10s %7s %10s %7s\n" "" "in-process" "slowdn" "end-to-end" "slowdn"
row "plain" "$plain_in" "$plain_e2e"
row "mlprof run --memory -q" "$q_in" "$q_e2e"
row "mlprof run --memory (reports)" "$r_in" "$r_e2e"
row "heaptrack (+ heaptrack_print)" "$ht_in" "$ht_e2e"
printf "mlprof heap on the saved trace: %.3fs; trace size %s\n" "$ml_heap" \
  "$(du -h "$tmp/run.mlprof" | cut -f1)"
