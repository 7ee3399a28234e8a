#!/usr/bin/env bash
# Host-allocation tracking cost: bench/alloc_heavy_tool plain, under `mlprof run --memory` and
# under heaptrack, in one run; prints in-process and end-to-end time, peak memory, and mlprof's
# added time and peak memory against heaptrack's.
# In-process = the time the program measures itself (tracking cost in the hot path);
# end to end = the whole command, including writing and post-processing the capture
# (mlprof: symbolize, build the trace, save .mlprof, print the reports; heaptrack: record,
# then heaptrack_print's analysis). Added = end to end minus plain.
# Peak RSS = the largest resident set of any process of the command (GNU time's %M: mlprof's
# post-processing or the program; heaptrack's program, its interpreter, or heaptrack_print).
# Every configuration runs RUNS times, interleaved (so load from other work hits them alike), and
# the best time of each is kept; slowdowns are against the plain runs of the same invocation.
# Usage: bench/run_memory_bench.sh [BUILD_DIR=build-run] [THREADS=4] [OPS_PER_THREAD=1000000] [RUNS=3]
# EVENTS=0 leaves out the --events runs (their memory grows with the events: ~70 B per event),
# HEAPTRACK=0 the heaptrack runs. MAX_RSS_MB=N: exit 1 when the default mlprof runs' peak RSS is
# above N MB (the bound on a long run, e.g. 50M events:
# MAX_RSS_MB=100 EVENTS=0 HEAPTRACK=0 bash bench/run_memory_bench.sh build 4 6250000 1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-run}
threads=${2:-4}
ops=${3:-1000000}
runs=${4:-3}
tool=$build/bench/alloc_heavy_tool
mlprof=$build/mlprof
for f in "$tool" "$mlprof" "$build/libmlprof_preload.so" /usr/bin/time; do
  [[ -e $f ]] || { echo "missing $f: cmake --build $build --target mlprof alloc_heavy_tool"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
inproc() { sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$1" | tail -1; }
min() { if [[ -z $1 ]]; then echo "$2"; else echo "if ($2 < $1) $2 else $1" | bc -l; fi; }
max() { if [[ -z $1 ]]; then echo "$2"; else echo "if ($2 > $1) $2 else $1" | bc -l; fi; }
have_heaptrack=0
command -v heaptrack > /dev/null && command -v heaptrack_print > /dev/null && have_heaptrack=1
[[ ${HEAPTRACK:-1} == 0 ]] && have_heaptrack=0

declare -A IN E2E RSS
# measure NAME OUTFILE CMD...: one timed run; keeps the best time and the largest peak RSS.
measure() {
  local name=$1 out=$2 t0 t1 rss
  shift 2
  t0=$(now)
  /usr/bin/time -f %M -o "$tmp/rss" "$@" > "$out" 2>&1
  t1=$(now)
  rss=$(tail -1 "$tmp/rss")
  IN[$name]=$(min "${IN[$name]:-}" "$(inproc "$out" || true)")
  E2E[$name]=$(min "${E2E[$name]:-}" "$(echo "$t1 - $t0" | bc -l)")
  RSS[$name]=$(max "${RSS[$name]:-}" "$rss")
}

ml_stream_q() { measure stream_q "$tmp/a.out" "$mlprof" run --memory -q -o "$tmp/run.mlprof" -- "$tool" "$threads" "$ops"; }
ml_stream_r() { measure stream_r "$tmp/b.out" "$mlprof" run --memory -o "$tmp/run.mlprof" -- "$tool" "$threads" "$ops"; }
ml_events_q() {
  [[ ${EVENTS:-1} == 0 ]] && return
  measure events_q "$tmp/c.out" "$mlprof" run --memory --events -q -o "$tmp/ev.mlprof" -- "$tool" "$threads" "$ops"
}
heaptrack_both() {
  local t0 t1 rss1 rss2
  rm -f "$tmp"/ht*
  t0=$(now)
  /usr/bin/time -f %M -o "$tmp/rss1" heaptrack -o "$tmp/ht" "$tool" "$threads" "$ops" > "$tmp/ht.out" 2>&1
  local htfile
  htfile=$(ls "$tmp"/ht*.zst "$tmp"/ht*.gz 2>/dev/null | head -1 || true)
  /usr/bin/time -f %M -o "$tmp/rss2" heaptrack_print "$htfile" > /dev/null 2>&1 || true
  t1=$(now)
  rss1=$(tail -1 "$tmp/rss1")
  rss2=$(tail -1 "$tmp/rss2")
  IN[heaptrack]=$(min "${IN[heaptrack]:-}" "$(inproc "$tmp/ht.out")")
  E2E[heaptrack]=$(min "${E2E[heaptrack]:-}" "$(echo "$t1 - $t0" | bc -l)")
  RSS[heaptrack]=$(max "${RSS[heaptrack]:-}" "$(max "$rss1" "$rss2")")
}

echo "alloc_heavy_tool: $threads threads x $ops malloc/free pairs, best of $runs"
for ((run = 1; run <= runs; run++)); do
  measure plain "$tmp/plain.out" "$tool" "$threads" "$ops"
  # The order of the mlprof runs rotates (the first one after the plain run was seen to be
  # slower on a loaded machine).
  case $((run % 3)) in
    1) ml_stream_q; ml_stream_r; ml_events_q ;;
    2) ml_stream_r; ml_events_q; ml_stream_q ;;
    0) ml_events_q; ml_stream_q; ml_stream_r ;;
  esac
  ((have_heaptrack)) && heaptrack_both
done

plain_in=${IN[plain]} plain_e2e=${E2E[plain]}
row() {  # label key
  local k=$2
  if [[ -z ${E2E[$k]:-} ]]; then printf "%-34s %10s\n" "$1" "n/a"; return; fi
  local in=${IN[$k]:-0}
  printf "%-34s %9.3fs %6.2fx %9.3fs %6.2fx %8.3fs %8.0f MB\n" "$1" "$in" \
    "$(echo "$in / $plain_in" | bc -l)" "${E2E[$k]}" "$(echo "${E2E[$k]} / $plain_e2e" | bc -l)" \
    "$(echo "${E2E[$k]} - $plain_e2e" | bc -l)" "$(echo "${RSS[$k]} / 1024" | bc -l)"
}
printf "%-34s %10s %7s %10s %7s %9s %11s\n" "" "in-process" "slowdn" "end-to-end" "slowdn" "added" \
  "peak RSS"
row "plain" plain
row "mlprof run --memory -q" stream_q
row "mlprof run --memory (reports)" stream_r
row "mlprof run --memory --events -q" events_q
row "heaptrack (+ heaptrack_print)" heaptrack
if [[ -n ${E2E[heaptrack]:-} ]]; then
  ht_added=$(echo "${E2E[heaptrack]} - $plain_e2e" | bc -l)
  for k in stream_q stream_r events_q; do
    [[ -z ${E2E[$k]:-} ]] && continue
    printf "%-16s added time %.2f of heaptrack's, peak RSS %.2f of heaptrack's\n" "$k" \
      "$(echo "(${E2E[$k]} - $plain_e2e) / $ht_added" | bc -l)" \
      "$(echo "${RSS[$k]} / ${RSS[heaptrack]}" | bc -l)"
  done
fi
printf "trace size: %s (default), %s (--events)\n" "$(du -h "$tmp/run.mlprof" | cut -f1)" \
  "$( [[ -f $tmp/ev.mlprof ]] && du -h "$tmp/ev.mlprof" | cut -f1 || echo n/a)"
if [[ -n ${MAX_RSS_MB:-} ]]; then
  for k in stream_q stream_r; do
    mb=$(echo "${RSS[$k]} / 1024" | bc)
    if ((mb > MAX_RSS_MB)); then
      echo "FAIL: $k peak RSS $mb MB > $MAX_RSS_MB MB"
      exit 1
    fi
  done
  echo "ok: mlprof's peak RSS within $MAX_RSS_MB MB for $((threads * ops * 2)) events"
fi
