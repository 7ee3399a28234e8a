#!/bin/bash
# Soak of `mlprof serve` (issue 11): wrk against the heaviest endpoints (timeline events, flame,
# ops, compare, ranks) for DURATION seconds while hostile clients (slowloris, 2,600-range Range
# requests, endless headers, chunked bodies) run beside it. Bars: afterwards a cheap request
# (/api/traces) answers within 100 ms and RSS is within 20% of its value after the warm-up
# (every URL asked once). The baseline (cheap-request latency, RSS) is measured in the same
# run, before the soak. CACHE_MB (default 1) is serve's --cache-mb: 1 MiB recomputes nearly
# every analysis, a larger cache measures the HTTP layer.
# Usage: [CACHE_MB=N] bash bench/serve_soak.sh [BUILD_DIR] [DURATION_S]   (needs Debian's wrk)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
DURATION=${2:-60}
MLPROF=$BUILD/mlprof
command -v wrk >/dev/null || { echo "SKIP: wrk not installed (apt-get install wrk)"; exit 77; }
WORK=$(mktemp -d)
SERVE_PID=
cleanup() { [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# Traces: the repository's test traces, a few copies as ranks of one job.
mkdir -p "$WORK/traces"
cp "$ROOT"/tests/data/*.json.gz "$ROOT"/tests/data/*.json "$WORK/traces/"
for i in 0 1 2 3; do cp "$ROOT/tests/data/b_cnn.kineto.json.gz" "$WORK/traces/rank$i.json.gz"; done

"$MLPROF" serve "$WORK/traces" --port 0 --client-timeout 5 --cache-mb "${CACHE_MB:-1}" 2>"$WORK/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q "http://" "$WORK/serve.log" && break; sleep 0.1; done
PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/serve.log" | head -1)
[ -n "$PORT" ] || { cat "$WORK/serve.log"; exit 1; }
URL=http://127.0.0.1:$PORT

# The URLs wrk cycles through: every heavy analysis of every trace, compares, ranks.
curl -sf "$URL/api/traces" | python3 -c '
import json, sys
names = [t["name"] for t in json.load(sys.stdin)["traces"]]
for n in names:
    for a in ("timeline/events", "flame", "ops", "timeline", "memory", "summary"):
        print(f"/api/profiler/{a}?trace={n}")
for a, b in zip(names, names[1:]):
    print(f"/api/profiler/compare?base={a}&new={b}")
print("/api/profiler/ranks")' >"$WORK/paths.txt"
cat >"$WORK/cycle.lua" <<LUA
local paths = {}
for line in io.lines("$WORK/paths.txt") do paths[#paths + 1] = line end
local i = math.random(#paths)
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
LUA

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$SERVE_PID/status"; }
cheap_ms() { curl -s -o /dev/null -w '%{time_total}' "$URL/api/traces" | awk '{printf "%.1f", $1 * 1000}'; }
while read -r p; do curl -s -o /dev/null "$URL$p"; done <"$WORK/paths.txt"  # warm-up
rss_start=$(rss_kib)
cheap_before=$(cheap_ms)

python3 "$ROOT/bench/serve_soak_attackers.py" "$PORT" "$DURATION" >"$WORK/attackers.log" &
ATTACK_PID=$!
rss_peak=$rss_start
( while kill -0 "$ATTACK_PID" 2>/dev/null; do rss_kib; sleep 1; done ) >"$WORK/rss.log" &
wrk -t2 -c32 -d"${DURATION}s" --timeout 10s -s "$WORK/cycle.lua" "$URL" >"$WORK/wrk.log" 2>&1
wait "$ATTACK_PID"
sleep 1
rss_peak=$(sort -n "$WORK/rss.log" | tail -1)
sleep 6  # slow clients' connections time out (--client-timeout 5)
cheap_after=$(cheap_ms)
rss_end=$(rss_kib)

echo "mlprof serve soak: ${DURATION} s, $(wc -l <"$WORK/paths.txt") URLs (events, flame, ops, timeline, memory, summary, compare, ranks)"
sed -n 's/^ *\(Requests\/sec\|Transfer\/sec\|Latency\|Non-2xx\|Socket errors\)/wrk: &/p; s/^ *\([0-9]* requests in\)/wrk: &/p' "$WORK/wrk.log"
cat "$WORK/attackers.log"
python3 - "$cheap_before" "$cheap_after" "$rss_start" "$rss_peak" "$rss_end" <<'PY'
import sys
cb, ca, r0, rp, r1 = map(float, sys.argv[1:])
ok_lat, ok_rss = ca < 100, abs(r1 - r0) <= 0.2 * r0
print(f"cheap request (/api/traces): {cb:.1f} ms before, {ca:.1f} ms after (bar < 100 ms): "
      f"{'ok' if ok_lat else 'FAIL'}")
print(f"RSS: {r0/1024:.1f} MiB after warm-up, peak {rp/1024:.1f} MiB, {r1/1024:.1f} MiB after "
      f"= {r1/r0:.2f}x (bar within 20%): {'ok' if ok_rss else 'FAIL'}")
sys.exit(0 if ok_lat and ok_rss else 1)
PY
