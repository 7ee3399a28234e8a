#!/usr/bin/env bash
# ctest pip_venv: the Python path of docs/install.md. `pip wheel` builds a wheel from BUILD_DIR
# as it is (MLPROF_BUILD_DIR, MLPROF_SKIP_BUILD=1: nothing is relinked while other tests run the
# binary); the wheel must carry the binary and the capture libraries. pip installs it into a
# fresh venv (--system-site-packages: Debian's numpy), offline; then `mlprof --version`,
# `python -m mlprof --version`, `import mlprof`, `mlprof demo` and `mlprof run --memory` work
# from the venv alone.
#   pip_venv.sh REPO_ROOT BUILD_DIR [PYTHON]
set -euo pipefail
ROOT=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
PY=${3:-/usr/bin/python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-pip-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$PY" -c 'import setuptools, wheel' 2> /dev/null && "$PY" -m pip --version > /dev/null 2>&1 || { echo "SKIP: $PY lacks pip/setuptools/wheel"; exit 77; }

"$PY" -m venv --system-site-packages "$TMP/venv"
V="$TMP/venv/bin"
cd "$ROOT"
MLPROF_BUILD_DIR="$BUILD" MLPROF_SKIP_BUILD=1 "$V/pip" wheel --no-build-isolation --no-deps --no-index -q -w "$TMP/wheels" . \
  > "$TMP/wheel.log" 2>&1 || { tail -40 "$TMP/wheel.log"; fail "pip wheel"; }
whl=$(ls "$TMP"/wheels/mlprof-*.whl)
echo "wheel: $(basename "$whl") ($(du -k "$whl" | cut -f1) KiB)"
"$V/python" - "$whl" <<'PY' || fail "wheel contents"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["mlprof/__main__.py", "mlprof/__init__.pyi", "mlprof/py.typed", "mlprof/_bin/mlprof", "mlprof/_bin/libmlprof_preload.so"]
missing = [n for n in need if n not in names]
if missing or not any(n.startswith("mlprof/_core") for n in names):
    sys.exit(f"wheel lacks {missing or 'mlprof/_core*.so'}")
if not any(n.endswith("entry_points.txt") for n in names):
    sys.exit("wheel has no entry points (the mlprof command)")
PY
# The bundled binary is the installed one: no MPI library (build/mlprof links it when found).
"$V/python" -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("mlprof/_bin/mlprof"))' \
  "$whl" > "$TMP/bundled"
if objdump -p "$TMP/bundled" | awk '$1 == "NEEDED" {print $2}' | grep -q mpi; then fail "the wheel's mlprof links MPI"; fi
"$V/pip" install --no-index --no-deps -q "$whl" > "$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "pip install"; }

cd "$TMP"  # not the source tree: import what pip installed
[ -x "$V/mlprof" ] || fail "no mlprof command in the venv"
out=$("$V/mlprof" --version) || fail "mlprof --version"
echo "venv mlprof --version: $out"
[[ $out == mlprof\ [0-9]* ]] || fail "unexpected version line: $out"
out2=$("$V/python" -m mlprof --version) || fail "python -m mlprof --version"
[ "$out" = "$out2" ] || fail "python -m mlprof says '$out2', the command '$out'"
where=$("$V/python" -c 'import mlprof, mlprof._core; print(mlprof.__file__)') || fail "import mlprof"
case "$where" in "$TMP"/venv/*) ;; *) fail "import mlprof found $where, not the venv's";; esac
"$V/mlprof" demo > "$TMP/demo.log" 2>&1 || { tail -20 "$TMP/demo.log"; fail "mlprof demo from the venv"; }
"$V/mlprof" run --memory -q -o "$TMP/true.mlprof" -- /bin/true > "$TMP/run.log" 2>&1 \
  || { cat "$TMP/run.log"; fail "mlprof run --memory from the venv (capture library in the wheel)"; }
echo "pip_venv: ok"
