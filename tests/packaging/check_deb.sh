#!/usr/bin/env bash
# `make package` runs this on what cpack made (docs/install.md): the two .deb files' contents and
# Depends, the packaged build's -march (portable: no x86-64-v3, no native), and the runtime
# package extracted with dpkg-deb -x into a temporary root (nothing installed on this machine):
# its mlprof runs --version, `demo` and `run --memory` from there (the capture library found
# relative to the binary: the installed tree is relocatable).
#   check_deb.sh BUILD_PACKAGE_DIR
set -euo pipefail
B=$(cd "$1" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-deb-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run=$(ls "$B"/mlprof_*.deb) || fail "no mlprof_*.deb in $B"
dev=$(ls "$B"/mlprof-dev_*.deb) || fail "no mlprof-dev_*.deb in $B"
for deb in "$run" "$dev"; do
  echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"
done

dpkg-deb -c "$run" | awk '{print $6}' > "$TMP/run.files"
for f in ./usr/bin/mlprof ./usr/lib/mlprof/libmlprof_preload.so ./usr/share/man/man1/mlprof.1 \
         ./usr/share/bash-completion/completions/mlprof ./usr/share/zsh/vendor-completions/_mlprof; do
  grep -qx "$f" "$TMP/run.files" || fail "$(basename "$run") lacks $f"
done
if grep -q '^./usr/include\|\.a$' "$TMP/run.files"; then fail "headers or static libraries in $(basename "$run")"; fi
dpkg-deb -c "$dev" | awk '{print $6}' > "$TMP/dev.files"
for f in ./usr/include/mlprof/mlprof.h ./usr/lib/x86_64-linux-gnu/libmlprof_record.a \
         ./usr/lib/x86_64-linux-gnu/cmake/mlprof/mlprofConfig.cmake \
         ./usr/lib/x86_64-linux-gnu/pkgconfig/mlprof.pc; do
  grep -qx "$f" "$TMP/dev.files" || fail "$(basename "$dev") lacks $f"
done

depends=$(dpkg-deb -f "$run" Depends)
echo "Depends: $depends"
# What the binary links, nothing the test suite or MPI needs.
for lib in libc6 libstdc++6 libsimdjson libisal libzstd libsqlite3 libmicrohttpd libdw1 libunwind; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib"
done
for lib in openmpi libgtest libbenchmark python3 chromium; do
  [[ $depends == *"$lib"* ]] && fail "Depends has $lib, which the binary does not link"
done
echo "mlprof-dev Depends: $(dpkg-deb -f "$dev" Depends)"

# The build that made them: portable -march only.
grep -q -- '-march=x86-64-v2\|-march=x86-64 ' "$B/compile_commands.json" || fail "no portable -march"
if grep -q -- '-march=native\|-march=x86-64-v3' "$B/compile_commands.json"; then fail "non-portable -march"; fi

# Relocated: the package's tree extracted anywhere works.
dpkg-deb -x "$run" "$TMP/root"
M="$TMP/root/usr/bin/mlprof"
"$M" --version
cd "$TMP"
"$M" demo > demo.log 2>&1 || { tail -20 demo.log; fail "mlprof demo from the extracted package"; }
grep -m3 -i "planted\|finding\|bottleneck" demo.log || true
"$M" run --memory -q -o "$TMP/true.mlprof" -- /bin/true > run.log 2>&1 || { cat run.log; fail "mlprof run --memory"; }
echo "check_deb: ok"
