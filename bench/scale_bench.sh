#!/usr/bin/env bash
# Scale benchmark (issue 33): generated Kineto-shaped traces (bench/gen_big_trace.py) of 1M, 3M
# and 10M complete events, and for each of `mlprof summary`, `mlprof analyze`, `mlprof report`
# and Python's `mlprof.load(f).ops()`: wall time, MB/s of JSON, peak RSS / JSON size, and the
# time as a multiple of the same command at the smallest size (10x the events should take at most
# ~10x the time: linear). All in one run, on the same machine state (shared machines are noisy:
# read the ratios; `uptime` is printed).
#   usage: bench/scale_bench.sh [MLPROF]
#   SIZES="1000000 3000000 10000000" (default), CMDS="summary analyze report python",
#   DIR=where traces go (default a temp dir under build/, deleted at exit), RUNS=1 (best of),
#   TRACES=a directory holding trace_N.json from an earlier run: read, not generated nor deleted.
# CPU s (user + sys) is printed beside the wall time: on a shared machine it is the steadier
# figure. The last table is report's time over summary's (the import) at each size, same run.
set -euo pipefail
cd "$(dirname "$0")/.."
MLPROF=${1:-./build/mlprof}
SIZES=${SIZES:-1000000 3000000 10000000}
CMDS=${CMDS:-summary analyze report python}
RUNS=${RUNS:-1}
PY=${PY:-/usr/bin/python3}
mkdir -p build
tmp=${DIR:-$(mktemp -d build/scale_bench.XXXXXX)}
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

best() {  # best wall time (s), its CPU time (s) and peak RSS (KB) over $RUNS runs of "$@"
  local bw=999999 bc=0 br=0
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err" || {
      echo "FAILED: $*" >&2; cat "$tmp/err" >&2; exit 1; }
    read -r w u s r < "$tmp/time"
    if python3 -c "import sys; sys.exit(0 if $w < $bw else 1)"; then
      bw=$w; br=$r; bc=$(python3 -c "print(f'{$u + $s:.2f}')"); fi
  done
  echo "$bw $bc $br"
}

echo "machine: $(nproc) cores, $(uptime | sed 's/.*load/load/')"
: > "$tmp/rows"
for n in $SIZES; do
  if [ -n "${TRACES:-}" ]; then f="$TRACES/trace_$n.json"; else
    f="$tmp/trace_$n.json"
    python3 bench/gen_big_trace.py "$n" "$f"
  fi
  bytes=$(stat -c %s "$f")
  for c in $CMDS; do
    case $c in
      summary) read -r w cpu r < <(best "$MLPROF" summary "$f" --top 1) ;;
      analyze) read -r w cpu r < <(best "$MLPROF" analyze "$f") ;;
      report) read -r w cpu r < <(best "$MLPROF" report "$f" -o "$tmp/report.html")
              r="$r $(stat -c %s "$tmp/report.html")" ;;
      python) read -r w cpu r < <(best env PYTHONPATH=build/python "$PY" -c \
                "import mlprof, sys; mlprof.load(sys.argv[1]).ops()" "$f") ;;
      *) echo "unknown command $c" >&2; exit 2 ;;
    esac
    echo "$n $bytes $c $w $cpu $r" >> "$tmp/rows"
  done
  [ -n "${TRACES:-}" ] || rm -f "$f"
  rm -f "$tmp/report.html"
done
python3 - "$tmp/rows" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
base = {}
print(f"{'events':>9} {'JSON MB':>8} {'command':8} {'wall s':>7} {'CPU s':>7} {'MB/s':>6} "
      f"{'RSS MB':>7} {'RSS/JSON':>8} {'x time of ' + rows[0][0]:>14}  {'report MB':>9}")
times = {}
for r in rows:
    n, b, c, w, cpu, rss = int(r[0]), int(r[1]), r[2], float(r[3]), float(r[4]), int(r[5])
    times[(n, c)] = (w, cpu)
    base.setdefault(c, (n, w))
    n0, w0 = base[c]
    extra = f"{int(r[6]) / 2**20:9.1f}" if len(r) > 6 else ""
    print(f"{n:9d} {b / 1e6:8.0f} {c:8} {w:7.2f} {cpu:7.2f} {b / 1e6 / w:6.0f} {rss / 1024:7.0f} "
          f"{rss * 1024 / b:8.2f} {w / w0:8.1f} ({n / n0:.0f}x)  {extra}")
sizes = sorted({n for n, c in times if c == "report" and (n, "summary") in times})
for n in sizes:
    (rw, rc), (sw, sc) = times[(n, "report")], times[(n, "summary")]
    print(f"report / summary at {n}: {rw / sw:.2f}x wall, {rc / sc:.2f}x CPU")
PY
