#!/usr/bin/env bash
# ctest install_consumer: `cmake --install BUILD --prefix TMP`, then what a user of the installed
# tree does (docs/install.md): a separate CMake project with find_package(mlprof) records a trace
# with MLPROF_SCOPE (mlprof::record), loads and analyzes it (mlprof::mlprof); the same two
# programs built with pkg-config alone; the installed binary (moved elsewhere after install, so
# nothing points back at the build tree) reads the trace and runs `mlprof run --memory` with the
# capture library found relative to itself; the man page and completions are there.
#   run.sh BUILD_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-install-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$TMP/stage" > "$TMP/install.log" || { cat "$TMP/install.log"; fail "cmake --install"; }
# Relocated: installed under one prefix, used from another.
mv "$TMP/stage" "$TMP/prefix"
P="$TMP/prefix"
for f in bin/mlprof lib/mlprof/libmlprof_preload.so include/mlprof/mlprof.h share/man/man1/mlprof.1 \
         share/bash-completion/completions/mlprof; do
  [ -e "$P/$f" ] || fail "installed tree lacks $f"
done
ls "$P"/share/zsh/*/_mlprof > /dev/null || fail "no zsh completion"
config=$(find "$P" -name mlprofConfig.cmake) && [ -n "$config" ] || fail "no mlprofConfig.cmake"
pcdir=$(dirname "$(find "$P" -name mlprof-record.pc)")

# CMake consumer.
gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
cmake -S "$HERE" -B "$TMP/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
  > "$TMP/configure.log" 2>&1 || { cat "$TMP/configure.log"; fail "configure the consumer"; }
cmake --build "$TMP/build" > "$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; fail "build the consumer"; }
"$TMP/build/record_scopes" "$TMP/run.mlprof"
"$TMP/build/analyze_trace" "$TMP/run.mlprof"

# Instrumentation only: find_package(mlprof COMPONENTS record) with the analysis stages'
# dependencies unfindable still configures, builds and records.
cmake -S "$HERE" -B "$TMP/build-record" "${gen[@]}" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
  -DMLPROF_CONSUMER_RECORD_ONLY=ON -DCMAKE_DISABLE_FIND_PACKAGE_simdjson=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_SQLite3=ON > "$TMP/configure-record.log" 2>&1 \
  || { cat "$TMP/configure-record.log"; fail "configure the record-only consumer"; }
cmake --build "$TMP/build-record" > "$TMP/build-record.log" 2>&1 \
  || { cat "$TMP/build-record.log"; fail "build the record-only consumer"; }
"$TMP/build-record/record_scopes" "$TMP/run_record_only.mlprof"
[ -s "$TMP/run_record_only.mlprof" ] || fail "record-only consumer wrote no trace"
echo "record-only consumer (COMPONENTS record, no simdjson/fmt/OpenSSL/SQLite3): ok"

# pkg-config consumer.
export PKG_CONFIG_PATH="$pcdir"
echo "pkg-config --cflags --libs mlprof-record: $(pkg-config --cflags --libs mlprof-record)"
echo "pkg-config --cflags --libs mlprof: $(pkg-config --cflags --libs mlprof)"
CXX=${CXX:-c++}
$CXX -std=c++20 -O1 "$HERE/record_scopes.cpp" -o "$TMP/record_pc" $(pkg-config --cflags --libs mlprof-record) \
  || fail "build against pkg-config mlprof-record"
$CXX -std=c++20 -O1 "$HERE/analyze_trace.cpp" -o "$TMP/analyze_pc" $(pkg-config --cflags --libs mlprof) \
  || fail "build against pkg-config mlprof"
"$TMP/record_pc" "$TMP/run_pc.mlprof"
"$TMP/analyze_pc" "$TMP/run_pc.mlprof" > /dev/null || fail "pkg-config build: analyze"

# The installed binary.
"$P/bin/mlprof" --version
"$P/bin/mlprof" summary "$TMP/run.mlprof" | grep -q forward || fail "installed mlprof summary"
"$P/bin/mlprof" run --memory -q -o "$TMP/capture.mlprof" -- "$TMP/build/record_scopes" "$TMP/x.mlprof" \
  > "$TMP/run.log" 2>&1 || { cat "$TMP/run.log"; fail "installed mlprof run --memory"; }
[ -s "$TMP/capture.mlprof" ] || fail "mlprof run wrote no capture"
echo "install_consumer: ok"
