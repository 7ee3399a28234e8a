#!/usr/bin/env bash
# `mlprof run --memory` never damages the program it traces, and says what it could not record:
# 1. a program that closes fds 3..1023 (closefrom / the daemon pattern) and opens a file gets the
#    tracker's old number: its file must hold only its own bytes, the capture every allocation,
#    and the note must say the tracker's file was closed and reopened;
# 2. the tracker's writes fail (RLIMIT_FSIZE, EFBIG: as a full $TMPDIR, ENOSPC, would): the note
#    names the cause, and kept + counted-but-lost allocations equal an unlimited run's;
# 3. children that cannot create their capture file (RLIMIT_NOFILE = 3, hard): reported with the
#    cause and their counts; with only the soft limit lowered they are captured.
# The programs (tests/cli/programs/capture_fd_abuse.c) are built here with cc.
# Usage: run_capture_fd.sh MLPROF_BINARY TESTS_DATA_DIR
set -uo pipefail
mlprof=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
export TMPDIR=$tmp/tmpdir
mkdir -p "$TMPDIR"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }
command -v cc > /dev/null || { echo "skip: no C compiler (cc)"; exit 77; }
app=$tmp/abuse
cc -O0 -o "$app" "$here/programs/capture_fd_abuse.c" || fail "cannot build capture_fd_abuse.c"
# "memory capture: P process(es), A allocations, ..." -> A
allocs() { sed -n 's/.*memory capture: [0-9]* process(es), \([0-9]*\) allocations.*/\1/p' "$1"; }
processes() { sed -n 's/.*memory capture: \([0-9]*\) process(es).*/\1/p' "$1"; }

# 1. closefrom: the program's file is exactly what it wrote.
mkdir "$tmp/plain" "$tmp/traced"
(cd "$tmp/plain" && "$app" closefrom data.txt) || fail "closefrom: the program fails alone"
want=$(wc -c < "$tmp/plain/data.txt")
(cd "$tmp/traced" && "$mlprof" run --memory -o "$tmp/closefrom.mlprof" -- "$app" closefrom data.txt) \
  > "$tmp/o1" 2>&1 || fail "closefrom under mlprof run: $(cat "$tmp/o1")"
got=$(wc -c < "$tmp/traced/data.txt")
cmp -s "$tmp/plain/data.txt" "$tmp/traced/data.txt" ||
  fail "closefrom: the program's data.txt is $got bytes under mlprof run, $want without"
ok "closefrom: the program's data.txt is its own $got bytes"
a=$(allocs "$tmp/o1")
[[ -n $a && $a -ge 300000 ]] || fail "closefrom: want >= 300000 allocations captured: $(cat "$tmp/o1")"
grep -q "closed the memory tracker's capture file 1 time .*reopened it each time, nothing was lost" \
  "$tmp/o1" || fail "closefrom: no note naming the cause: $(cat "$tmp/o1")"
grep -q "killed, _exit or exec" "$tmp/o1" && fail "closefrom: said killed: $(cat "$tmp/o1")"
ok "closefrom: $a allocations captured; $(grep -o 'note: pid [0-9]* closed.*' "$tmp/o1")"

# 2. The tracker's file cannot grow past 1 MiB (EFBIG).
"$mlprof" run --memory -o "$tmp/full.mlprof" -- "$app" fsize 0 > "$tmp/o2" 2>&1 ||
  fail "fsize 0: $(cat "$tmp/o2")"
total=$(allocs "$tmp/o2")
"$mlprof" run --memory -o "$tmp/limited.mlprof" -- "$app" fsize 1048576 > "$tmp/o3" 2>&1 ||
  fail "fsize 1 MiB: $(cat "$tmp/o3")"
kept=$(allocs "$tmp/o3")
lost=$(sed -n 's/.*NOT recorded: \([0-9]*\) allocations.*/\1/p' "$tmp/o3")
[[ -n $kept && -n $lost && $kept -gt 0 && $lost -gt 0 ]] ||
  fail "fsize: want some kept and some counted-lost allocations: $(cat "$tmp/o3")"
[[ $((kept + lost)) == "$total" ]] ||
  fail "fsize: kept $kept + lost $lost != $total allocations of the unlimited run"
grep -q "writing its capture file failed (File too large) after $kept allocations" "$tmp/o3" ||
  fail "fsize: no note naming EFBIG: $(cat "$tmp/o3")"
grep -q "killed, _exit or exec" "$tmp/o3" && fail "fsize: said killed: $(cat "$tmp/o3")"
"$mlprof" summary "$tmp/limited.mlprof" > /dev/null || fail "fsize: the capture does not load"
ok "write failure: $kept kept + $lost lost = $total allocations; $(grep -o 'note: pid [0-9]*: writing.*' "$tmp/o3" | cut -c1-110)..."

# 3. RLIMIT_NOFILE = 3: hard (the children cannot open a file), soft (the tracker raises it for
#    its own open and puts it back: the children are captured).
"$mlprof" run --memory -o "$tmp/nofile.mlprof" -- "$app" nofile hard > "$tmp/o4" 2>&1 ||
  fail "nofile hard: $(cat "$tmp/o4")"
n=$(grep -c "could not create its capture file (Too many open files)" "$tmp/o4")
[[ $n == 2 ]] || fail "nofile hard: want 2 children reported: $(cat "$tmp/o4")"
grep -q "its [0-9]\{4,\} allocations and [0-9]\{4,\} frees were counted, not recorded" "$tmp/o4" ||
  fail "nofile hard: the exiting child's counts: $(cat "$tmp/o4")"
grep -q "could not create its capture file (Too many open files) and ended without running its exit handlers" \
  "$tmp/o4" || fail "nofile hard: the _exit child: $(cat "$tmp/o4")"
ok "RLIMIT_NOFILE=3 (hard): $(grep -o 'note: pid [0-9]* (abuse) could not create.*' "$tmp/o4" | head -1)"
"$mlprof" run --memory -o "$tmp/nofile-soft.mlprof" -- "$app" nofile soft > "$tmp/o5" 2>&1 ||
  fail "nofile soft: $(cat "$tmp/o5")"
[[ $(processes "$tmp/o5") == 3 ]] || fail "nofile soft: want 3 processes captured: $(cat "$tmp/o5")"
grep -q "could not create" "$tmp/o5" && fail "nofile soft: $(cat "$tmp/o5")"
ok "RLIMIT_NOFILE=3 (soft): parent and both children captured"
