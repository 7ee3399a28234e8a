# Sourced by tests/cli/*.sh (not a test itself: it has no `set`/exit at top level).
# Test data from other projects' repositories lives in the shared data folder, not in the
# repository. ONE setting: env MLPROF_SHARED_DIR, default <repository root>/../shared.
#   shared_path REL   prints the path, or prints a SKIP line on stderr and returns 1
#   require_shared VAR REL   sets VAR to the path, or exits 77 (ctest's SKIP_RETURN_CODE)
mlprof_shared_dir() {
  if [[ -n ${MLPROF_SHARED_DIR:-} ]]; then
    echo "$MLPROF_SHARED_DIR"
  else
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    echo "$(cd "$here/../.." && pwd)/../shared"
  fi
}

shared_path() {
  local p
  p="$(mlprof_shared_dir)/$1"
  if [[ -e $p ]]; then echo "$p"; return 0; fi
  echo "SKIP: shared test data $p is absent (set MLPROF_SHARED_DIR to the shared data folder;" \
    "default <repository root>/../shared)" >&2
  return 1
}

require_shared() {
  local p
  p=$(shared_path "$2") || exit 77
  printf -v "$1" '%s' "$p"
}
