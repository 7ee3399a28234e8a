#!/usr/bin/env bash
# Ingestion benchmark: mlprof importing the largest real trace into the Trace (via `mlprof
# summary`), next to Python's json.load on the same bytes, in the same run. Prints MB/s of
# uncompressed JSON and peak RSS for both, and their ratio (machines here are shared and noisy:
# compare the ratio, not the absolute numbers).
#   usage: bench/import_bench.sh [TRACE.json.gz] [MLPROF]
set -euo pipefail
cd "$(dirname "$0")/.."
TRACE=${1:-${MLPROF_SHARED_DIR:-../shared}/traces/pytorch-cpu/transformer_big.json.gz}
MLPROF=${2:-./build/mlprof}
RUNS=${RUNS:-3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ "$(head -c2 "$TRACE" | od -An -tx1 | tr -d ' ')" = "1f8b" ]; then zcat "$TRACE" > "$tmp/t.json"; else cp "$TRACE" "$tmp/t.json"; fi
bytes=$(stat -c %s "$tmp/t.json")
mb=$(python3 -c "print(f'{$bytes/1e6:.1f}')")
echo "trace: $TRACE ($mb MB of JSON)"

best() {  # best wall time (s) and its peak RSS (KB) over $RUNS runs of "$@"
  local bw=999999 br=0
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2>&1
    read -r w r < "$tmp/time"
    if python3 -c "import sys; sys.exit(0 if $w < $bw else 1)"; then bw=$w; br=$r; fi
  done
  echo "$bw $br"
}
read -r mw mr < <(best "$MLPROF" summary "$tmp/t.json" --top 1)
read -r gw gr < <(best "$MLPROF" summary "$TRACE" --top 1)
read -r pw pr < <(best python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/t.json")
python3 - "$bytes" "$mw" "$mr" "$gw" "$gr" "$pw" "$pr" <<'PY'
import sys
b, mw, mr, gw, gr, pw, pr = sys.argv[1:]
b = int(b); mw, gw, pw = float(mw), float(gw), float(pw)
mb = b / 1e6
print(f"{'what':34} {'wall s':>7} {'MB/s':>7} {'peak RSS MB':>12} {'RSS/JSON':>9}")
for name, w, r in [("mlprof (plain .json)", mw, mr), ("mlprof (.json.gz, igzip inside)", gw, gr),
                   ("python3 json.load (plain .json)", pw, pr)]:
    print(f"{name:34} {w:7.2f} {mb / w:7.0f} {int(r) / 1024:12.0f} {int(r) * 1024 / b:9.2f}")
print(f"mlprof is {pw / mw:.1f}x faster than json.load alone, with {int(pr) / int(mr):.1f}x less memory")
PY
