#!/usr/bin/env bash
# `mlprof export DIR -o merged.json` (one Chrome trace of every rank, docs/ranks.md) over growing
# rank sets generated from one real rank trace (bench/gen_ranks.py, clocks skewed): wall time,
# peak RSS and output size per size, with the ratios to the first size measured in the same run.
# The export streams the ranks (one trace per worker to read the clock offsets, then one trace at
# a time to write), so peak RSS should stay flat while the output grows with the ranks. Baseline:
# `mlprof ranks DIR --json` on the same ranks (pass 1 of the export is that reduction).
#   usage: bench/merged_export_rss.sh [MLPROF]   (SIZES="8 64", SRC=a rank trace, STEPS=5:5)
# Generated traces go under /tmp and are removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
SIZES=${SIZES:-"8 64"}
STEPS=${STEPS:-5:5}
SRC=${SRC:-${MLPROF_SHARED_DIR:-../shared}/traces/kineto-gpu/nccl_parser_config/nccl_data.json.gz}
[ -e "$SRC" ] || { echo "merged_export_rss: $SRC is absent (set SRC or MLPROF_SHARED_DIR)"; exit 77; }
tmp=$(mktemp -d /tmp/mlprof-merged-bench.XXXXXX); trap 'rm -rf "$tmp"' EXIT
max=0; for n in $SIZES; do [ "$n" -gt "$max" ] && max=$n; done
python3 bench/gen_ranks.py "$SRC" "$tmp/all" -n "$max" --skew-us 50000 --gzip
echo "generated $max ranks from $(basename "$SRC") ($(du -sh "$tmp/all" | cut -f1) gzipped)"
for n in $SIZES; do
  mkdir -p "$tmp/r$n"
  for ((i = 0; i < n; i++)); do ln -s "$tmp/all/$(printf 'rank-%05d.json.gz' "$i")" "$tmp/r$n/"; done
done

printf '%-26s %6s %8s %8s %9s %7s %10s\n' run ranks "wall s" "RSS MB" "out MB" "RSS/x" "events"
for mode in "ranks" "--steps $STEPS" "--max-events 0"; do
  base=""
  for n in $SIZES; do
    rm -f "$tmp/out.json"
    if [ "$mode" = ranks ]; then
      /usr/bin/time -f "%e %M" -o "$tmp/m" "$MLPROF" ranks "$tmp/r$n" --json > "$tmp/out.json" \
        2> "$tmp/err" || { echo "failed: $(tail -1 "$tmp/err")"; exit 1; }
      label="ranks --json (baseline)"; events=""
    else
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %M" -o "$tmp/m" "$MLPROF" export "$tmp/r$n" -o "$tmp/out.json" $mode \
        2> "$tmp/err" || { echo "failed: $(tail -1 "$tmp/err")"; exit 1; }
      label="export $mode"
      events=$(grep -o 'wrote .*' "$tmp/err" | sed 's/.*ranks*, \([0-9]*\) events.*/\1/')
    fi
    read -r w r < "$tmp/m"
    [ -z "$base" ] && base=$r
    printf '%-26s %6d %8.2f %8.1f %9.1f %7.2f %10s\n' "$label" "$n" "$w" \
      "$(echo "$r / 1024" | bc -l)" "$(echo "$(stat -c %s "$tmp/out.json") / 1048576" | bc -l)" \
      "$(echo "$r / $base" | bc -l)" "$events"
  done
done
