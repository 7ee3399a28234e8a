#!/bin/bash
# Peak memory of `mlprof memory SNAPSHOT --json` (read, replay, allocator view, the trace the
# snapshot loads as) against the file's size: the largest shared snapshot and synthetic pickles
# of growing size (bench/gen_memory_snapshot.py, written under $TMPDIR and removed after), with
# Python's own pickle.load of the same file as the baseline where it fits (PY_MAX entries).
# BASELINE=OTHER_MLPROF (e.g. a build of an older commit) measures that binary on the same files in
# the same run and prints mlprof's RSS as a ratio of it.
# Usage: [BASELINE=old/mlprof] bench/memory_snapshot_rss.sh MLPROF [ENTRIES...]
#        (default 1000000 4000000 16000000)
set -eu
MLPROF=$1
shift
SIZES=${*:-1000000 4000000 16000000}
PY_MAX=${PY_MAX:-4000000}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-snapshot-rss.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SHARED=${MLPROF_SHARED_DIR:-$HERE/../../shared}

measure() {  # label file entries
  local out rss user bytes
  out=$( { /usr/bin/time -f "%M %U" "$MLPROF" memory --json "$2" >/dev/null; } 2>&1 | tail -1)
  rss=${out% *}
  user=${out#* }
  bytes=$(stat -c %s "$2")
  if [[ $2 == *.gz ]]; then bytes=$(gzip -dc "$2" | wc -c); fi
  printf '%-38s %12s B %10s entries  mlprof %8.1f MB peak RSS (%.2fx the file, %s B/entry), %s s CPU' \
    "$1" "$bytes" "$3" "$(echo "$rss / 1024" | bc -l)" "$(echo "$rss * 1024 / $bytes" | bc -l)" \
    "$([[ $3 -gt 0 ]] && echo "$rss * 1024 / $3" | bc || echo -)" "$user"
  if [[ -n ${BASELINE:-} ]]; then
    out=$( { /usr/bin/time -f "%M %U" "$BASELINE" memory --json "$2" >/dev/null; } 2>&1 | tail -1)
    printf '; baseline %8.1f MB, %s s CPU (mlprof %.2fx of it)' "$(echo "${out% *} / 1024" | bc -l)" \
      "${out#* }" "$(echo "$rss / ${out% *}" | bc -l)"
  fi
  if [[ $3 -le $PY_MAX ]]; then
    out=$( { /usr/bin/time -f "%M %U" python3 -c "import gzip,pickle,sys; f=sys.argv[1]; pickle.load((gzip.open if f.endswith('.gz') else open)(f,'rb'))" "$2"; } 2>&1 | tail -1)
    printf '; python pickle.load %8.1f MB (%.1fx mlprof)' "$(echo "${out% *} / 1024" | bc -l)" \
      "$(echo "${out% *} / $rss" | bc -l)"
  fi
  echo
}

real=$SHARED/traces/memory-snapshot/decomfl_opt_train_memory.pickle.gz
if [[ -f $real ]]; then
  n=$(python3 -c "import gzip,pickle,sys; print(sum(len(t) for t in pickle.load(gzip.open(sys.argv[1],'rb'))['device_traces']))" "$real")
  measure "$(basename "$real") (decompressed)" "$real" "$n"
fi
for n in $SIZES; do
  python3 "$HERE/gen_memory_snapshot.py" "$TMP/synthetic_$n.pickle" "$n"
  measure "synthetic, $n entries" "$TMP/synthetic_$n.pickle" "$n"
  rm -f "$TMP/synthetic_$n.pickle"
done
