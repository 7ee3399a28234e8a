#!/bin/bash
# Issue 32 item 8, the scale traps, each as a ratio against a baseline measured in the same run:
#  names:    1e6 distinct op names vs 1,000 names, same 1.1M events (bench/gen_many_names.py):
#            peak RSS and time of `summary --json`, `ops --json --top 20` and `report -o`;
#  sql:      a 1M-row cross join printed as a table vs the same query's first 10 rows:
#            peak RSS (the table streams; before, every row was held until the end);
#  snapshot: a memory snapshot of 100k devices vs 10k (bench/gen_snapshot_devices.py): time and
#            peak RSS of `memory --json` (linear: ~10x; it was quadratic).
# BASELINE=OTHER_MLPROF (e.g. a build of an older commit) measures that binary on the same files.
# Files go under $TMPDIR and are removed after.
# Usage: [BASELINE=old/mlprof] bench/scale_traps.sh MLPROF [names|sql|snapshot ...]
set -eu
MLPROF=$(realpath "$1")
shift
WHAT=${*:-names sql snapshot}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-scale.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# "RSS_KB SECONDS" of one run (stdout discarded).
measure() {
  /usr/bin/time -o "$TMP/time" -f "%M %e" "$@" >/dev/null 2>/dev/null || true
  tail -1 "$TMP/time"
}
mb() { echo "scale=1; $1 / 1024" | bc; }
ratio() { echo "scale=2; $1 / $2" | bc; }

row() {  # label binary args... : prints the run's RSS and time
  local label=$1
  shift
  read -r rss secs < <(measure "$@")
  printf '  %-44s %8s MB peak RSS %7s s\n' "$label" "$(mb "$rss")" "$secs"
  LAST_RSS=$rss
  LAST_S=$secs
}

for bin in "$MLPROF" ${BASELINE:+"$BASELINE"}; do
  echo "== $bin"
  for what in $WHAT; do
    case $what in
      names)
        [[ -f $TMP/n1e3.json ]] || python3 "$HERE/gen_many_names.py" "$TMP/n1e3.json" 1000000 1000
        [[ -f $TMP/n1e6.json ]] || python3 "$HERE/gen_many_names.py" "$TMP/n1e6.json" 1000000 1000000
        echo "names: $(stat -c %s "$TMP/n1e6.json") B of JSON, 1.1M events"
        for cmd in "summary --json" "ops --json --top 20" "report -o $TMP/r.html"; do
          row "$cmd, 1,000 names" "$bin" $cmd "$TMP/n1e3.json"
          r0=$LAST_RSS t0=$LAST_S
          row "$cmd, 1,000,000 names" "$bin" $cmd "$TMP/n1e6.json"
          printf '  -> %s: 1e6 names / 1e3 names: %sx peak RSS, %sx time\n' "${cmd%% *}" \
            "$(ratio "$LAST_RSS" "$r0")" "$(ratio "$LAST_S" "$t0")"
        done
        ;;
      sql)
        trace=$HERE/../tests/data/mlp_bs64.json.gz
        q="SELECT a.id, a.name, b.name FROM slice a, slice b"
        row "sql table, first 10 rows" "$bin" sql "$trace" "$q LIMIT 10"
        r0=$LAST_RSS
        row "sql table, 1,000,000 rows" "$bin" sql "$trace" "$q LIMIT 1000000"
        printf '  -> sql table: 1M rows / 10 rows: %sx peak RSS\n' "$(ratio "$LAST_RSS" "$r0")"
        row "sql --csv, 1,000,000 rows" "$bin" sql "$trace" "$q LIMIT 1000000" --csv
        ;;
      snapshot)
        for n in 10000 100000; do
          [[ -f $TMP/dev$n.pickle ]] || python3 "$HERE/gen_snapshot_devices.py" "$TMP/dev$n.pickle" $n
        done
        row "memory --json, 10,000 devices" "$bin" memory "$TMP/dev10000.pickle" --json
        r0=$LAST_RSS t0=$LAST_S
        row "memory --json, 100,000 devices" "$bin" memory "$TMP/dev100000.pickle" --json
        printf '  -> snapshot: 100k devices / 10k devices: %sx time, %sx peak RSS (linear: ~10x)\n' \
          "$(ratio "$LAST_S" "$t0")" "$(ratio "$LAST_RSS" "$r0")"
        ;;
    esac
  done
done
