#!/usr/bin/env bash
# Instructions per recorder scope (begin+end), counted by callgrind: stable on noisy VMs where
# wall time is not. Counts only the loop functions (--toggle-collect), subtracts the empty loop.
#   bash bench/recorder_callgrind.sh [path/to/recorder_bench] [iterations]
set -euo pipefail
BENCH=${1:-build/bench/recorder_bench}
N=${2:-200000}
command -v valgrind >/dev/null || { echo "valgrind not installed (apt-get install valgrind)"; exit 2; }
[ -x "$BENCH" ] || { echo "$BENCH: not built (cmake --build build --target recorder_bench)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() {  # $1 = loop kind, $2 = function to collect
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$1.out" --toggle-collect="$2" \
    "$BENCH" --loop="$1" "$N" >/dev/null 2>"$tmp/$1.log"
  awk '/^(summary|totals):/ {print $2; exit}' "$tmp/$1.out"
}

empty=$(count empty '*run_loop_empty*')
scope=$(count scope '*run_loop_scope*')
disabled=$(count disabled '*run_loop_disabled*')
python3 - "$N" "$empty" "$scope" "$disabled" <<'PY'
import sys
n, empty, scope, disabled = (int(x) for x in sys.argv[1:])
print(f"callgrind, {n} iterations (instructions per iteration, loop overhead subtracted):")
print(f"| what | instructions |")
print(f"| --- | ---: |")
print(f"| enabled scope (begin+end) | {(scope - empty) / n:.1f} |")
print(f"| scope disabled at run time | {(disabled - empty) / n:.1f} |")
print(f"| empty loop iteration | {empty / n:.1f} |")
PY
