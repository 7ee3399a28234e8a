#!/usr/bin/env bash
# Errors tagged at their source reach the user through the one mapping (include/mlprof/status.h,
# issue 24 item 5): a missing input is not found (exit 2), an input past the limit is too large
# (exit 2), an output that cannot be written or an input read that fails is the system's refusal
# (exit 1); each is one line on stderr naming the path and what is wrong, and nothing is written
# half-way.
#   usage: error_codes.sh MLPROF DATA_DIR
set -u
MLPROF=$1; DATA=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
expect() {  # name, exit code, expected stderr line, command...
  local name=$1 want_rc=$2 want=$3; shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
  if [ "$rc" = "$want_rc" ] && [ "$(wc -l < "$tmp/err")" = 1 ] && [ "$(cat "$tmp/err")" = "$want" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name: rc=$rc (want $want_rc): $(cat "$tmp/err") (want: $want)"
  fi
}
trace=$DATA/tiny_linear.json

# Not found (kNotFound -> exit 2), from open() itself and from a rank directory with no traces.
expect missing-file 2 "mlprof: $tmp/missing.json: cannot open: No such file or directory" \
  "$MLPROF" summary "$tmp/missing.json"
expect missing-file-analyze 2 "mlprof: $tmp/missing.json: cannot open: No such file or directory" \
  "$MLPROF" analyze "$tmp/missing.json" --json
mkdir "$tmp/empty"
expect empty-directory 2 "mlprof: $tmp/empty: no trace files (*.json, *.json.gz, *.mlprof, *.perfetto-trace, *.pftrace, *.rpd, *.sqlite, *.xplane.pb) (a directory of rank traces)" \
  "$MLPROF" summary "$tmp/empty"

# A path that does not resolve is not found too (exit 2); a read the system refuses (kIo:
# /proc/self/mem reads EIO at offset 0) is exit 1, whichever command opened the input: the
# analysis commands (open_analysis), export, compare, report's base, compile --trace, sql.
ln -s loop "$tmp/loop"
expect symlink-loop 2 "mlprof: $tmp/loop: cannot open: Too many levels of symbolic links" \
  "$MLPROF" summary "$tmp/loop"
if [ -r /proc/self/mem ]; then
  expect read-error-summary 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" summary /proc/self/mem
  expect read-error-analyze 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" analyze /proc/self/mem --json
  expect read-error-export 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" export /proc/self/mem -o "$tmp/mem.json"
  expect read-error-compare 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" compare /proc/self/mem "$trace"
  expect read-error-report-base 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" report /proc/self/mem "$trace" -o "$tmp/r.html"
  expect read-error-sql 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" sql /proc/self/mem "SELECT 1"
  expect read-error-sqlite-export 1 "mlprof: /proc/self/mem: read error: Input/output error" \
    "$MLPROF" export /proc/self/mem -o "$tmp/mem.sqlite"
  [ ! -e "$tmp/mem.json" ] && [ ! -e "$tmp/r.html" ] && [ ! -e "$tmp/mem.sqlite" ] ||
    { fail=$((fail + 1)); echo "FAIL: an output was written for an unreadable input"; }
fi

# Too large (kTooLarge -> exit 2): the limit and how to raise it.
python3 -c "
import json
print(json.dumps([{'ph': 'X', 'name': 'op', 'ts': i, 'dur': 1, 'pid': 1, 'tid': 1} for i in range(30000)]))" > "$tmp/big.json"
expect too-large 2 "mlprof: $tmp/big.json: the decompressed trace exceeds the input limit of 1 MiB (MLPROF_MAX_INPUT_MB=N raises it: docs/hardening.md)" \
  env MLPROF_MAX_INPUT_MB=1 "$MLPROF" summary "$tmp/big.json"

# An output that cannot be written (kIo -> exit 1), before anything is written and at the write.
expect report-no-dir 1 "mlprof: $tmp/no/report.html: cannot write: directory $tmp/no does not exist" \
  "$MLPROF" report "$trace" -o "$tmp/no/report.html"
expect report-to-directory 1 "mlprof: $tmp/empty: is a directory" \
  "$MLPROF" report "$trace" -o "$tmp/empty"
expect export-no-dir 1 "mlprof export: $tmp/no/t.mlprof: cannot write: directory $tmp/no does not exist" \
  "$MLPROF" export "$trace" -o "$tmp/no/t.mlprof"
expect flame-no-dir 1 "mlprof flame: $tmp/no/f.html: cannot write: directory $tmp/no does not exist" \
  "$MLPROF" flame "$trace" -o "$tmp/no/f.html"
[ ! -e "$tmp/no" ] || { fail=$((fail + 1)); echo "FAIL: $tmp/no was created"; }

echo "error codes: $pass passed, $fail failed"
[ "$fail" = 0 ]
