#!/usr/bin/env bash
# `mlprof ranks` over growing rank sets: 8, 64, 256, 1024 ranks generated from one real rank trace
# (bench/gen_ranks.py; rank 3 late by 2 ms at every collective). Wall time and peak RSS per size,
# with the ratios to the 8-rank run measured in the same invocation: peak RSS should stay flat
# (one trace per worker in memory plus the summaries), time grow linearly in the ranks. The same
# with `mpirun -np 2` when mpirun is installed and mlprof was built with MPI (peak RSS there is
# the largest process's).
#   usage: bench/ranks_scale.sh [MLPROF]      (SIZES="8 64 256 1024", SRC=a rank trace)
# Generated traces go under /tmp and are removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
SIZES=${SIZES:-"8 64 256 1024"}
SRC=${SRC:-${MLPROF_SHARED_DIR:-../shared}/traces/kineto-gpu/trace_filter/sampled_rank-0.json.gz}
[ -e "$SRC" ] || { echo "ranks_scale: $SRC is absent (set SRC or MLPROF_SHARED_DIR)"; exit 77; }
tmp=$(mktemp -d /tmp/mlprof-ranks-bench.XXXXXX); trap 'rm -rf "$tmp"' EXIT
max=0; for n in $SIZES; do [ "$n" -gt "$max" ] && max=$n; done

t0=$(date +%s.%N)
python3 bench/gen_ranks.py "$SRC" "$tmp/all" -n "$max" --delay-rank 3 --delay-us 2000 \
  --skew-us 50000 --gzip
echo "generated $max ranks from $(basename "$SRC") in $(python3 -c "print(f'{$(date +%s.%N)-$t0:.1f}')") s" \
  "($(du -sh "$tmp/all" | cut -f1) gzipped)"
# The first n ranks of the generated job (their world size says $max: missing-rank warnings).
for n in $SIZES; do
  mkdir -p "$tmp/r$n"
  for ((i = 0; i < n; i++)); do ln -s "$tmp/all/$(printf 'rank-%05d.json.gz' "$i")" "$tmp/r$n/"; done
done

mpirun_ok=0
if command -v mpirun > /dev/null; then
  if mpirun --oversubscribe --allow-run-as-root -np 2 "$MLPROF" ranks "$tmp/r${SIZES%% *}" --json \
      > /dev/null 2> "$tmp/mpi_err"; then
    mpirun_ok=1
  else
    echo "mpirun: skipped ($(tail -1 "$tmp/mpi_err"))"
  fi
else
  echo "mpirun: not installed (Debian openmpi-bin): skipped"
fi

measure() {  # measure NAME COMMAND...: prints "wall_s rss_kb"
  /usr/bin/time -f "%e %M" -o "$tmp/m" "$@" > "$tmp/out.json" 2> "$tmp/err" || {
    echo "failed: $* : $(tail -1 "$tmp/err")" >&2; exit 1; }
  cat "$tmp/m"
}

printf '%-22s %6s %8s %10s %9s %9s %10s\n' run ranks "wall s" "ms/rank" "RSS MB" "RSS/8" "time/8"
base_w=""; base_r=""
for mode in single mpi2; do
  [ "$mode" = mpi2 ] && [ "$mpirun_ok" = 0 ] && continue
  base_w=""; base_r=""
  for n in $SIZES; do
    if [ "$mode" = single ]; then
      read -r w r < <(measure "$MLPROF" ranks "$tmp/r$n" --json)
    else
      read -r w r < <(measure mpirun --oversubscribe --allow-run-as-root -np 2 "$MLPROF" ranks \
        "$tmp/r$n" --json)
    fi
    straggler=$(python3 -c "import json; print(json.load(open('$tmp/out.json'))['stragglers'])")
    [ -z "$base_w" ] && { base_w=$w; base_r=$r; base_n=$n; }
    python3 -c "
w, r, n = $w, $r, $n
print(f'{\"mlprof ranks\" if \"$mode\" == \"single\" else \"mpirun -np 2 mlprof\":22} {n:6d} {w:8.2f} {1000*w/n:10.2f} '
      f'{r/1024:9.0f} {r/$base_r:9.2f} {w/$base_w:10.1f}   stragglers {\"$straggler\"}')"
  done
done
echo "(RSS/8 and time/8: ratios to the ${base_n}-rank run of the same mode; $(nproc) cores)"
