#!/usr/bin/env bash
# `mlprof run` around the command's life: a bad -o is refused before the command starts; a
# capture whose path goes bad during the run is saved elsewhere (and said so); Ctrl-C/SIGTERM
# stop the wait for processes the command left behind; a SIGKILLed mlprof takes its command
# with it, and the next run removes the raw directory it left.
# Usage: run_lifecycle.sh MLPROF_BINARY TESTS_DATA_DIR
set -uo pipefail
mlprof=$1
tmp=$(mktemp -d)
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"
pids_to_kill=()
cleanup() {
  for p in "${pids_to_kill[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }

# 1. -o into a missing directory, onto a directory: exit 2, one line, the command never ran.
"$mlprof" run -q -o "$tmp/missing/x.mlprof" -- sh -c "touch '$tmp/ran'" > "$tmp/o1" 2> "$tmp/e1"
rc=$?
[[ $rc == 2 ]] || fail "bad -o: exit $rc, want 2"
[[ ! -e $tmp/ran ]] || fail "bad -o: the command ran"
[[ $(wc -l < "$tmp/e1") == 1 ]] || fail "bad -o: want one line, got: $(cat "$tmp/e1")"
grep -q "does not exist" "$tmp/e1" || fail "bad -o: $(cat "$tmp/e1")"
ok "-o in a missing directory refused before the command: $(cat "$tmp/e1")"
mkdir "$tmp/adir"
"$mlprof" run -q -o "$tmp/adir" -- sh -c "touch '$tmp/ran'" 2> "$tmp/e2"
[[ $? == 2 && ! -e $tmp/ran ]] || fail "-o DIRECTORY: $(cat "$tmp/e2")"
ok "-o onto a directory refused: $(cat "$tmp/e2")"

# 2. The output directory disappears while the command runs: saved under TMPDIR, said so.
mkdir "$tmp/gone"
"$mlprof" run -q -o "$tmp/gone/cap.mlprof" -- sh -c "rm -rf '$tmp/gone'" > /dev/null 2> "$tmp/e3"
rc=$?
[[ $rc == 0 ]] || fail "vanished output dir: exit $rc: $(cat "$tmp/e3")"
grep -q "saved the capture to $TMPDIR/cap.mlprof instead" "$tmp/e3" ||
  fail "vanished output dir: $(cat "$tmp/e3")"
"$mlprof" summary "$TMPDIR/cap.mlprof" > /dev/null || fail "the fallback capture does not load"
rm -f "$TMPDIR/cap.mlprof"
ok "capture saved to the fallback path: $(cat "$tmp/e3")"

# 3. An orphan that ignores nothing (SIGTERM) and one that ignores SIGINT (a background job of a
#    non-interactive shell): mlprof stops waiting at the signal, the capture is written, no
#    process is left.
for sig in TERM INT; do
  start=$(date +%s)
  "$mlprof" run -q -o "$tmp/orphan-$sig.mlprof" -- sh -c "sleep 300 & echo \$! > '$tmp/orphan-$sig.pid'" \
    > /dev/null 2> "$tmp/e-$sig" &
  mp=$!
  pids_to_kill+=("$mp")
  for _ in $(seq 100); do [[ -s $tmp/orphan-$sig.pid ]] && break; sleep 0.1; done
  sleep 0.5
  kill -s "$sig" "$mp"
  for _ in $(seq 150); do kill -0 "$mp" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$mp" 2>/dev/null; then fail "SIG$sig: mlprof still waiting after 15 s"; fi
  wait "$mp"
  elapsed=$(( $(date +%s) - start ))
  orphan=$(cat "$tmp/orphan-$sig.pid")
  if kill -0 "$orphan" 2>/dev/null; then fail "SIG$sig: the orphan $orphan still runs"; fi
  [[ -s $tmp/orphan-$sig.mlprof ]] || fail "SIG$sig: no capture written: $(cat "$tmp/e-$sig")"
  grep -q "interrupted" "$tmp/e-$sig" || fail "SIG$sig: $(cat "$tmp/e-$sig")"
  ok "SIG$sig while waiting for an orphan: done in ${elapsed}s, capture written, orphan gone"
done

# 4. SIGKILL of mlprof: its command dies with it; the next run removes the raw directory left.
"$mlprof" run -q -o "$tmp/killed.mlprof" -- sleep 300 > /dev/null 2>&1 &
mp=$!
pids_to_kill+=("$mp")
child=""
for _ in $(seq 100); do
  child=$(pgrep -P "$mp" | head -1)
  [[ -n $child ]] && [[ $(cat /proc/$child/comm 2>/dev/null) == sleep ]] && break
  sleep 0.1
done
[[ -n $child ]] || fail "SIGKILL: no child of mlprof found"
kill -9 "$mp"
wait "$mp" 2>/dev/null
for _ in $(seq 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$child" 2>/dev/null; then fail "SIGKILL: the command $child still runs"; fi
left=$(ls -d "$TMPDIR"/mlprof-run-* 2>/dev/null | wc -l)
[[ $left == 1 ]] || fail "SIGKILL: expected the killed run's raw directory, found $left"
"$mlprof" run -o "$tmp/next.mlprof" -- true > /dev/null 2> "$tmp/e4"
left=$(ls -d "$TMPDIR"/mlprof-run-* 2>/dev/null | wc -l)
[[ $left == 0 ]] || fail "the next run left $left raw directories: $(cat "$tmp/e4")"
grep -q "removed 1 raw capture directory left by killed runs" "$tmp/e4" || fail "$(cat "$tmp/e4")"
ok "SIGKILL: the command died with mlprof; the next run removed the raw directory"

# 5. --max-raw bounds what the tracker writes: past it events are counted, not written.
heavy=$(dirname "$mlprof")/bench/alloc_heavy_tool
if [[ -x $heavy ]]; then
  "$mlprof" run --max-raw 1 -o "$tmp/bounded.mlprof" -- "$heavy" 1 300000 > "$tmp/o5" 2>&1 ||
    fail "--max-raw: exit $?: $(cat "$tmp/o5")"
  grep -q "allocation events not recorded (raw capture limit --max-raw reached" "$tmp/o5" ||
    fail "--max-raw: no note: $(cat "$tmp/o5")"
  grep -qE "raw capture: [0-9.]+ (B|KiB) written" "$tmp/o5" ||
    fail "--max-raw: more than 1 MiB written: $(grep 'raw capture' "$tmp/o5")"
  grep -q "WARNING: the recorder dropped" "$tmp/o5" || fail "--max-raw: the summary does not warn"
  ok "--max-raw 1: $(grep -o 'raw capture: [^;]*' "$tmp/o5"), the rest counted"
else
  echo "skip --max-raw check: $heavy not built"
fi

echo "PASS run_lifecycle"
