#!/usr/bin/env bash
# Bad input through the CLI: one line on stderr naming the file, exit code 2, no output file.
#   usage: import_errors.sh MLPROF DATA_DIR
set -u
MLPROF=$1; DATA=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
expect_error() {  # name, file, expected substring
  local name=$1 file=$2 want=$3
  "$MLPROF" summary "$file" > "$tmp/out" 2> "$tmp/err"; rc=$?
  lines=$(wc -l < "$tmp/err")
  if [ "$rc" = 2 ] && [ "$lines" = 1 ] && grep -qF -- "$file" "$tmp/err" && grep -qF -- "$want" "$tmp/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name: rc=$rc lines=$lines: $(cat "$tmp/err")"
  fi
}
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X"' > "$tmp/truncated.json"
expect_error truncated "$tmp/truncated.json" "unexpected end of file"
: > "$tmp/empty.json"
expect_error empty "$tmp/empty.json" "empty file"
echo '{"rows": [1, 2]}' > "$tmp/notatrace.json"
expect_error not-a-trace "$tmp/notatrace.json" "not a trace"
echo '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"soon","dur":2}]}' > "$tmp/badfield.json"
expect_error wrong-type "$tmp/badfield.json" '"ts"'
echo '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1}]}' > "$tmp/missing.json"
expect_error missing-field "$tmp/missing.json" '"dur"'
head -c 20000 "$DATA/mlp_bs64.json.gz" > "$tmp/cut.json.gz"
expect_error truncated-gzip "$tmp/cut.json.gz" "truncated gzip"
expect_error missing-path "$tmp/does-not-exist.json" "cannot open"
expect_error directory "$tmp" "directory"
# 5 GB files (sparse: no disk used): garbage, and a trace whose events are garbage.
truncate -s 5G "$tmp/huge_zeros.json"
expect_error huge-garbage "$tmp/huge_zeros.json" "expected '{' or '['"
printf '{"traceEvents":[' > "$tmp/huge_events.json"; truncate -s 5G "$tmp/huge_events.json"
expect_error huge-events "$tmp/huge_events.json" "expected an event object"
# export must not leave a file behind on failure.
"$MLPROF" export "$tmp/truncated.json" -o "$tmp/out.json" 2>/dev/null; rc=$?
if [ "$rc" = 2 ] && [ ! -e "$tmp/out.json" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL export left output (rc=$rc)"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
