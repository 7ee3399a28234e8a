#!/usr/bin/env bash
# Bad input through the CLI: one line on stderr naming the file, exit code 2, no output file;
# or, when events could be read, one warning line per kind of problem and exit 0 (2 with --strict).
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
expect_recovered() {  # name, file, expected warning substring, expected "events read" count ("1 event read")
  local name=$1 file=$2 want=$3 events=$4
  "$MLPROF" summary "$file" > "$tmp/out" 2> "$tmp/err"; rc=$?
  if [ "$rc" = 0 ] && grep -q "^mlprof: warning: $file: " "$tmp/err" && grep -qF -- "$want" "$tmp/err" \
     && grep -qF "; $events event$([ "$events" = 1 ] || echo s) read" "$tmp/err" && grep -q "import problems (recovered)" "$tmp/out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name: rc=$rc: $(cat "$tmp/err")"
  fi
  "$MLPROF" summary "$file" --strict > "$tmp/out" 2> "$tmp/err"; rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -qF -- "--strict" "$tmp/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name --strict: rc=$rc: $(cat "$tmp/err")"
  fi
}
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X"' > "$tmp/truncated.json"
expect_recovered truncated "$tmp/truncated.json" "byte 78: unexpected end of file" 1
printf '{"traceEvents":[{"ph":"X"' > "$tmp/truncated_first.json"
expect_error truncated-before-any-event "$tmp/truncated_first.json" "unexpected end of file"
printf '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},\n]' > "$tmp/comma.json"
expect_recovered trailing-comma "$tmp/comma.json" "byte 53: trailing ','" 1
printf '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X","name":"b","pid":1,"tid":1,"ts":1}]' > "$tmp/nodur.json"
expect_recovered missing-dur "$tmp/nodur.json" 'event field "dur": missing' 1
"$MLPROF" summary "$tmp/truncated.json" --json 2>/dev/null > "$tmp/summary.json"
if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p=d['import']['problems']['truncated']; sys.exit(0 if p['count']==1 and p['first_byte']==78 and d['import']['events_read']==1 else 1)" "$tmp/summary.json"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL summary --json has no import problems"; fi
: > "$tmp/empty.json"
expect_error empty "$tmp/empty.json" "empty file"
echo '{"rows": [1, 2]}' > "$tmp/notatrace.json"
expect_error not-a-trace "$tmp/notatrace.json" "not a trace"
echo '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"soon","dur":2}]}' > "$tmp/badfield.json"
expect_error wrong-type "$tmp/badfield.json" '"ts"'
echo '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1}]}' > "$tmp/missing.json"
expect_error missing-field "$tmp/missing.json" '"dur"'
head -c 20000 "$DATA/mlp_bs64.json.gz" > "$tmp/cut.json.gz"
"$MLPROF" summary "$tmp/cut.json.gz" > "$tmp/out" 2> "$tmp/err"; rc=$?
if [ "$rc" = 0 ] && grep -qF "truncated gzip" "$tmp/err"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL truncated-gzip recovered: rc=$rc $(cat "$tmp/err")"; fi
head -c 200 "$DATA/mlp_bs64.json.gz" > "$tmp/cut_early.json.gz"
expect_error truncated-gzip-no-event "$tmp/cut_early.json.gz" "truncated gzip"
expect_error missing-path "$tmp/does-not-exist.json" "cannot open"
# A directory is a set of rank traces (summary analyzes the straggler, else the slowest); one without traces is an error.
mkdir "$tmp/no-traces"
expect_error directory "$tmp/no-traces" "no trace files"
# 5 GB files (sparse: no disk used): garbage, and a trace whose events are garbage.
truncate -s 5G "$tmp/huge_zeros.json"
expect_error huge-garbage "$tmp/huge_zeros.json" "expected '{' or '['"
printf '{"traceEvents":[' > "$tmp/huge_events.json"; truncate -s 5G "$tmp/huge_events.json"
expect_error huge-events "$tmp/huge_events.json" "expected an event object"
# JSON without events is not a trace (Perfetto would open an empty timeline; nothing to analyze).
echo '[]' > "$tmp/noevents.json"
expect_error no-events-array "$tmp/noevents.json" "no trace events"
echo '{"traceEvents": [], "schemaVersion": 1}' > "$tmp/noevents_obj.json"
expect_error no-events-object "$tmp/noevents_obj.json" "no trace events"
# A rank directory with a damaged rank: recovered (warned about) without --strict; with --strict
# every subcommand fails (exit 2) and names the file, as `export DIR --strict` does.
mkdir "$tmp/ranks"
for r in 0 1; do
  printf '{"distributedInfo":{"rank":%d,"world_size":2},"traceEvents":[{"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":1,"dur":100},{"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":2,"dur":50}' "$r" > "$tmp/ranks/rank$r.json"
done
echo ']}' >> "$tmp/ranks/rank0.json"
printf ',{"ph":"X"' >> "$tmp/ranks/rank1.json"  # cut mid-event
for sub in ranks summary analyze bottlenecks sql; do
  extra=(); [ "$sub" = sql ] && extra=("select count(*) from slice")
  "$MLPROF" "$sub" "$tmp/ranks" "${extra[@]}" > "$tmp/out" 2> "$tmp/err"; rc=$?
  if [ "$rc" = 0 ] && grep -qF "rank1.json" "$tmp/err"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $sub DIR (damaged rank recovered): rc=$rc $(cat "$tmp/err")"; fi
  "$MLPROF" "$sub" "$tmp/ranks" "${extra[@]}" --strict > "$tmp/out" 2> "$tmp/err"; rc=$?
  if [ "$rc" = 2 ] && grep -qF "rank1.json: byte" "$tmp/err" && grep -qF -- "--strict: 1 of 2 rank files failed" "$tmp/err"; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $sub DIR --strict: rc=$rc $(cat "$tmp/err")"; fi
done
# export must not leave a file behind on failure.
"$MLPROF" export "$tmp/truncated_first.json" -o "$tmp/out.json" 2>/dev/null; rc=$?
if [ "$rc" = 2 ] && [ ! -e "$tmp/out.json" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL export left output (rc=$rc)"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
