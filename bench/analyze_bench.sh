#!/usr/bin/env bash
# End-to-end analysis benchmark: `mlprof analyze` (import + every analysis) on the largest real
# traces, next to the same kind of analysis done in Python (bench/analyze_baseline.py: json.load
# + a few dict passes) on the same file in the same run. Holistic Trace Analysis, for scale,
# needs 7.3 s and 622 MB for the 87 MB MTIA trace on these machines (FIELD_NOTES.md).
#   usage: bench/analyze_bench.sh [MLPROF]
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
S=${MLPROF_SHARED_DIR:-../shared}/traces
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '%-44s %9s %8s %8s %9s %8s %8s\n' trace "JSON MB" "mlprof s" "MB/s" "RSS MB" "python s" "RSS MB"
for t in pytorch-cpu/transformer_big.json.gz pytorch-cpu-kineto-schema/d_transformer_50steps.kineto.json.gz \
         kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz kineto-gpu/df_index_resolver/df_index_resolver.json.gz; do
  f=$S/$t; [ -e "$f" ] || continue
  bytes=$(zcat "$f" | wc -c)
  /usr/bin/time -f "%e %M" -o "$tmp/m" "$MLPROF" analyze "$f" --json > /dev/null 2> "$tmp/err" || { echo "mlprof failed on $f: $(tail -1 "$tmp/err")"; continue; }
  /usr/bin/time -f "%e %M" -o "$tmp/p" python3 bench/analyze_baseline.py "$f" > /dev/null
  read -r mw mr < "$tmp/m"; read -r pw pr < "$tmp/p"
  python3 -c "
b=$bytes; print(f'{\"$(basename "$t")\":44} {b/1e6:9.1f} {$mw:8.2f} {b/1e6/$mw:8.0f} {$mr/1024:9.0f} {$pw:8.2f} {$pr/1024:8.0f}   ({$pw/$mw:.1f}x faster)')"
done
# A directory of ranks loads in parallel on all cores.
mkdir -p "$tmp/ranks"; cp $S/kineto-gpu/trace_filter/sampled_rank-*.json.gz "$tmp/ranks/"
/usr/bin/time -f "ranks dir (2 ranks): %e s wall, %U s user (%P CPU)" "$MLPROF" analyze "$tmp/ranks" > /dev/null
