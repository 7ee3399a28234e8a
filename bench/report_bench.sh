#!/bin/bash
# HTML report of a 1M-event trace: file size against the JSON, and time to interactive in
# headless Chromium (bar: within 2 s). Usage: bash bench/report_bench.sh [BUILD_DIR] [TRACE]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
TRACE=${2:-${MLPROF_SHARED_DIR:-$ROOT/../shared}/traces/pytorch-cpu/transformer_big.json.gz}
MLPROF=$BUILD/mlprof
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
NM=$BUILD/web/node_modules
[ -d "$NM/playwright-core" ] || NM=$ROOT/web/node_modules

json_bytes=$(gzip -dc "$TRACE" | wc -c)
gz_bytes=$(stat -c %s "$TRACE")
start=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$OUT/rss" "$MLPROF" report "$TRACE" -o "$OUT/report.html" 2>/dev/null
end=$(date +%s.%N)
html_bytes=$(stat -c %s "$OUT/report.html")
events=$("$MLPROF" summary "$TRACE" --json | python3 -c 'import json,sys; e = json.load(sys.stdin)["events"]; print(e["total"] if isinstance(e, dict) else e)')
echo "trace:            $TRACE ($events events)"
echo "JSON:             $json_bytes bytes ($(python3 -c "print(f'{$json_bytes/2**20:.1f}')") MiB), .gz $gz_bytes bytes"
echo "report.html:      $html_bytes bytes ($(python3 -c "print(f'{$html_bytes/2**20:.1f}')") MiB) = $(python3 -c "print(f'{$html_bytes/$json_bytes*100:.1f}')")% of the JSON"
echo "mlprof report:    $(python3 -c "print(f'{$end-$start:.2f}')") s wall, $(cat "$OUT/rss") KiB max RSS"
if [ -x /usr/bin/chromium ] && [ -d "$NM/playwright-core" ]; then
  MLPROF_NODE_MODULES=$NM node "$ROOT/bench/report_tti.mjs" "$OUT/report.html" 3 | python3 -c '
import json, sys
r = json.load(sys.stdin)
for k in ("overview", "timeline"):
    v = sorted(r[k])
    med = v[len(v) // 2]
    verdict = "ok" if med <= 2000 else "MISSED"
    print(f"interactive ({k:8} first): median {med} ms (runs {r[k]}), bar 2000 ms: {verdict}")
print("timeline redraw, full span (ms per frame):", r["pan_frame_ms"])'
else
  echo "time to interactive: skipped (no /usr/bin/chromium or playwright-core)"
fi
