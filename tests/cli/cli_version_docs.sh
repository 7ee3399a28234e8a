#!/usr/bin/env bash
# `mlprof --version` (version and commit; "commit unknown" without .git), and the man page and
# shell completions generated from the CLI's help (cmake/gen_cli_docs.py, in <build>/cli_docs):
# every command is in them, the man page renders without groff warnings, bash completes
# commands and a command's options.
#   usage: cli_version_docs.sh MLPROF DATA_DIR
set -u
MLPROF=$1; DATA=$2
ROOT=$(cd "$DATA/../.." && pwd)
DOCS=$(dirname "$MLPROF")/cli_docs
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

project=$(sed -n 's/^project(mlprof VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
# One version everywhere: CMake's project(), pyproject.toml, mlprof.__version__.
py_project=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/pyproject.toml")
py_module=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/python/mlprof/__init__.py")
[ "$py_project" = "$project" ] && [ "$py_module" = "$project" ] && ok \
  || bad "versions differ: CMakeLists.txt $project, pyproject.toml $py_project, __init__.py $py_module"
v=$("$MLPROF" --version); rc=$?
[ "$rc" = 0 ] && ok || bad "mlprof --version: exit $rc"
[[ $v =~ ^mlprof\ $project\ \(commit\ ([0-9a-f]{12}(-dirty)?|unknown)\)$ ]] && ok || bad "mlprof --version: '$v' (project $project)"
# The commit is a real commit of this repository (HEAD when just built; an older one when
# commits were made or rebased since, without a rebuild).
built=$(echo "$v" | sed -n 's/.*(commit \([0-9a-f]*\).*/\1/p')
if [ -n "$built" ] && git -C "$ROOT" rev-parse HEAD > /dev/null 2>&1; then
  git -C "$ROOT" cat-file -e "$built^{commit}" 2> /dev/null && ok \
    || bad "mlprof --version: $built is not a commit of this repository"
  [ "$(git -C "$ROOT" rev-parse --short=12 HEAD)" = "$built" ] \
    || echo "note: mlprof was built from $built, HEAD is $(git -C "$ROOT" rev-parse --short=12 HEAD)"
fi
# A source tree without .git (a release tarball): "commit unknown", no error.
mkdir "$tmp/src"
GIT_CEILING_DIRECTORIES=$tmp cmake -DSRC="$tmp/src" -DOUT="$tmp/v.cpp" -DVERSION=9.8.7 \
  -P "$ROOT/cmake/write_version.cmake" && ok || bad "write_version.cmake without .git failed"
grep -q '"mlprof 9.8.7 (commit unknown)"' "$tmp/v.cpp" && ok || bad "without .git: $(grep mlprof "$tmp/v.cpp")"
MLPROF_GIT_COMMIT=abc123 cmake -DSRC="$tmp/src" -DOUT="$tmp/v.cpp" -DVERSION=9.8.7 \
  -P "$ROOT/cmake/write_version.cmake"
grep -q '"mlprof 9.8.7 (commit abc123)"' "$tmp/v.cpp" && ok || bad "MLPROF_GIT_COMMIT not used"

if [ -f "$DOCS/mlprof.1" ]; then
  cmds=$("$MLPROF" --help | sed -n '/^Subcommands:/,$p' | awk '/^  [a-z]/{print $1}')
  [ "$(echo "$cmds" | wc -l)" -ge 20 ] && ok || bad "--help lists $(echo "$cmds" | wc -l) commands"
  for c in $cmds; do
    grep -q "^\.SS \"mlprof $c\"" "$DOCS/mlprof.1" || bad "man page lacks $c"
    grep -q "^    $c) opts=" "$DOCS/mlprof.bash" || bad "bash completion lacks $c"
    grep -q "^    '$c:" "$DOCS/_mlprof" || bad "zsh completion lacks $c"
  done
  ok
  if command -v groff > /dev/null; then
    warn=$(groff -man -Tutf8 -ww -z "$DOCS/mlprof.1" 2>&1)
    [ -z "$warn" ] && ok || bad "groff warnings: $(echo "$warn" | head -3)"
  fi
  complete_words() {  # the words bash offers for the command line "$@" (last word: being typed)
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _mlprof; echo "${COMPREPLY[*]}"' \
      _ "$DOCS/mlprof.bash" "$@"
  }
  [ "$(complete_words mlprof sum)" = "summary" ] && ok || bad "bash: 'mlprof sum' -> '$(complete_words mlprof sum)'"
  [[ " $(complete_words mlprof run --mem) " == *" --memory "* ]] && ok || bad "bash: 'mlprof run --mem'"
  [[ " $(complete_words mlprof summary --) " == *" --json "* ]] && ok || bad "bash: 'mlprof summary --'"
  if command -v zsh > /dev/null; then zsh -n "$DOCS/_mlprof" && ok || bad "zsh -n _mlprof"; fi
else
  echo "no $DOCS/mlprof.1 (no Python at configure time): man page and completions not checked"
fi

echo "cli_version_docs: $pass passed, $fail failed"
[ "$fail" = 0 ]
