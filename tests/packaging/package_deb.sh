#!/usr/bin/env bash
# ctest package_deb: the Debian packages (cmake/package.cmake) cpack'd from this build directory
# as it is (nothing rebuilt: cpack only runs the install rules, into a temporary directory), then
# checked by check_deb.sh: exact file lists, Depends, the extracted package running.
# `make package` makes the same packages from a build of their own (portable -march, /usr).
#   package_deb.sh BUILD_DIR
set -euo pipefail
B=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
for tool in cpack dpkg-deb dpkg-shlibdeps objdump; do
  command -v "$tool" > /dev/null || { echo "SKIP: no $tool (dpkg-dev, binutils: make deps-test)"; exit 77; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-cpack-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
start=$(date +%s)
(cd "$B" && cpack -G DEB -B "$TMP" > "$TMP/cpack.log" 2>&1) || { cat "$TMP/cpack.log"; echo "FAIL: cpack"; exit 1; }
echo "cpack: $(( $(date +%s) - start )) s"
bash "$HERE/check_deb.sh" "$TMP" "$B"
