#!/usr/bin/env bash
# The command line as a person meets it: a mistyped or missing command names the problem and
# lists the commands (exit 2); the progress bar is drawn on a terminal only, and erased.
#   usage: cli_usage.sh MLPROF DATA_DIR
set -u
MLPROF=$1; DATA=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

"$MLPROF" foo > "$tmp/out" 2> "$tmp/err"; rc=$?
[ "$rc" = 2 ] && ok || bad "mlprof foo: exit $rc, expected 2"
grep -q "^mlprof: unknown command 'foo'$" "$tmp/err" && ok || bad "mlprof foo: $(head -1 "$tmp/err")"
for c in summary analyze report flame serve timeline; do
  grep -q "^commands: .*\b$c\b" "$tmp/err" && ok || bad "mlprof foo: command list lacks $c: $(cat "$tmp/err")"
done
[ ! -s "$tmp/out" ] && ok || bad "mlprof foo printed on stdout"
"$MLPROF" sumary 2> "$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "unknown command 'sumary' (did you mean 'summary'?)" "$tmp/err" && ok || bad "mlprof sumary: $(head -1 "$tmp/err")"
"$MLPROF" 2> "$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "^mlprof: a command is required" "$tmp/err" && grep -q "^commands: " "$tmp/err" && ok || bad "mlprof (no command): rc=$rc $(cat "$tmp/err")"
# A known command still works, and --help / --version still exit 0.
"$MLPROF" summary "$DATA/tiny_linear.json" > "$tmp/out" 2>&1 && ok || bad "mlprof summary: $(cat "$tmp/out")"
"$MLPROF" --help > "$tmp/out" 2>&1 && grep -q "summary" "$tmp/out" && ok || bad "mlprof --help"
"$MLPROF" --version > /dev/null 2>&1 && ok || bad "mlprof --version"

# Progress bar: never on a pipe or file (stderr here is a file)...
"$MLPROF" summary "$DATA/mlp_bs64.json.gz" --json > "$tmp/out" 2> "$tmp/err"
! grep -q $'\r' "$tmp/err" && ok || bad "progress drawn on a non-terminal: $(cat -v "$tmp/err")"
# ...on a terminal (script gives the command a pty); MLPROF_PROGRESS_DELAY_MS=0 draws at once
# (the default waits a second, and these files load faster than that).
if command -v script > /dev/null; then
  MLPROF_PROGRESS_DELAY_MS=0 script -qec "'$MLPROF' summary '$DATA/mlp_bs64.json.gz' > '$tmp/tty_out'" /dev/null > "$tmp/tty" 2>&1
  grep -q "mlprof: loading mlp_bs64.json.gz \[.*%" "$tmp/tty" && ok || bad "no progress bar on a terminal: $(cat -v "$tmp/tty")"
  grep -q $'\r\033\[K' "$tmp/tty" && ok || bad "progress bar not erased: $(cat -v "$tmp/tty")"
  grep -q "^Trace" "$tmp/tty_out" || grep -q "events" "$tmp/tty_out" && ok || bad "summary output on a terminal: $(head -3 "$tmp/tty_out")"
  MLPROF_NO_PROGRESS=1 MLPROF_PROGRESS_DELAY_MS=0 script -qec "'$MLPROF' summary '$DATA/mlp_bs64.json.gz' > /dev/null" /dev/null > "$tmp/tty" 2>&1
  ! grep -q "loading" "$tmp/tty" && ok || bad "MLPROF_NO_PROGRESS=1 still draws: $(cat -v "$tmp/tty")"
else
  echo "SKIP: no script(1) for the terminal check"
fi
# ...and forced on (MLPROF_PROGRESS=1): a rank directory's bar, stdout untouched.
mkdir "$tmp/ranks"; cp "$DATA/mlp_bs64.json.gz" "$tmp/ranks/rank0.json.gz"; cp "$DATA/mlp_bs256.json.gz" "$tmp/ranks/rank1.json.gz"
MLPROF_PROGRESS=1 MLPROF_PROGRESS_DELAY_MS=0 "$MLPROF" steps "$tmp/ranks" --json > "$tmp/out" 2> "$tmp/err"
grep -q "loading rank directory" "$tmp/err" && ok || bad "rank directory progress: $(cat -v "$tmp/err")"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/out" && ok || bad "stdout JSON broken by the progress bar"

echo "cli_usage: $pass passed, $fail failed"
[ "$fail" = 0 ]
