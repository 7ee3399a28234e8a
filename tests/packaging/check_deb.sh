#!/usr/bin/env bash
# Checks the two .deb files cpack made (docs/install.md): each one's exact file list
# (dpkg-deb -c) against the lists below, the runtime package's Depends (dpkg-deb -f) against the
# packages below and against what its ELF files link (objdump NEEDED, each library's package by
# dpkg -S: nothing more, nothing less), and the runtime package extracted with dpkg-deb -x into a
# temporary root (nothing installed on this machine): its mlprof runs --version, `demo` and
# `run --memory` from there (the capture library found relative to the binary: relocatable).
# With --portable (make package), also that the build used a portable -march.
#   check_deb.sh DEB_DIR BUILD_DIR [--portable]
set -euo pipefail
D=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
PORTABLE=${3:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mlprof-deb-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run=$(ls "$D"/mlprof_*.deb) || fail "no mlprof_*.deb in $D"
dev=$(ls "$D"/mlprof-dev_*.deb) || fail "no mlprof-dev_*.deb in $D"
for deb in "$run" "$dev"; do
  echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"
done

# Exact file lists (directories left out). libmlprof_cupti.so only from a build against a CUDA
# toolkit; the static libraries under lib/x86_64-linux-gnu when configured for /usr (make
# package), lib/ otherwise (cpack over build/).
files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sort; }
files "$run" | grep -v '^./usr/lib/mlprof/libmlprof_cupti.so$' > "$TMP/run.files" || true
cat > "$TMP/run.expected" <<'LIST'
./usr/bin/mlprof
./usr/lib/mlprof/libmlprof_preload.so
./usr/share/bash-completion/completions/mlprof
./usr/share/man/man1/mlprof.1
./usr/share/zsh/vendor-completions/_mlprof
LIST
diff -u "$TMP/run.expected" "$TMP/run.files" || fail "$(basename "$run"): file list differs (- expected, + packaged)"
files "$dev" | sed 's#^\./usr/lib/x86_64-linux-gnu/#./usr/lib/#' > "$TMP/dev.files"
{
  (cd "$SRC" && git ls-files include/mlprof 2> /dev/null || find include/mlprof -type f) | sed 's#^#./usr/#'
  for s in analyze export import record trace; do echo "./usr/lib/libmlprof_$s.a"; done
  for f in mlprofConfig.cmake mlprofConfigVersion.cmake mlprofTargets.cmake; do echo "./usr/lib/cmake/mlprof/$f"; done
  echo "./usr/lib/cmake/mlprof/mlprofTargets-$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$B/CMakeCache.txt" | tr 'A-Z' 'a-z').cmake"
  echo ./usr/lib/pkgconfig/mlprof-record.pc
  echo ./usr/lib/pkgconfig/mlprof.pc
} | sort > "$TMP/dev.expected"
diff -u "$TMP/dev.expected" "$TMP/dev.files" || fail "$(basename "$dev"): file list differs (- expected, + packaged)"

# Depends: what the binary and the capture library link on Debian 12, nothing the test suite
# needs (no OpenMPI, Python, GoogleTest, chromium).
depends=$(dpkg-deb -f "$run" Depends)
echo "Depends: $depends"
names() { tr ',' '\n' | sed 's/(.*)//; s/ //g' | grep . | sort -u; }
echo "$depends" | names > "$TMP/depends"
printf '%s\n' libc6 libdw1 libelf1 libfmt9 libgcc-s1 libisal2 libmicrohttpd12 libprotobuf-lite32 \
  libsimdjson14 libsqlite3-0 libssl3 libstdc++6 libunwind8 libzstd1 zlib1g | sort > "$TMP/depends.expected"
diff -u "$TMP/depends.expected" "$TMP/depends" || fail "Depends differs from the expected packages (- expected, + Depends)"
# The same set from the ELF files themselves: each NEEDED library's Debian package.
dpkg-deb -x "$run" "$TMP/root"
for elf in "$TMP/root/usr/bin/mlprof" "$TMP/root"/usr/lib/mlprof/*.so; do
  ldd "$elf" > "$TMP/ldd"  # where each library is found (ldconfig is not on a user's PATH)
  objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}' | while read -r so; do
    awk -v so="$so" '$1 == so && $3 ~ /^\// {print $3}' "$TMP/ldd"
  done
done | sort -u > "$TMP/needed"
while read -r path; do
  # dpkg knows a library by the path it shipped it under (/lib or /usr/lib, before usrmerge).
  pkg=$(dpkg -S "$path" 2> /dev/null || dpkg -S "$(readlink -f "$path")" 2> /dev/null \
        || dpkg -S "${path#/usr}" 2> /dev/null) || continue  # CUDA's libcupti: no package
  echo "${pkg%%:*}"
done < "$TMP/needed" | sort -u > "$TMP/linked"
diff -u "$TMP/linked" "$TMP/depends" || fail "Depends differs from the packages of the libraries the ELF files link (- linked, + Depends)"
echo "mlprof-dev Depends: $(dpkg-deb -f "$dev" Depends)"

if [ "$PORTABLE" = --portable ]; then  # the build that made them: portable -march only
  grep -q -- '-march=x86-64-v2\|-march=x86-64 ' "$B/compile_commands.json" || fail "no portable -march"
  if grep -q -- '-march=native\|-march=x86-64-v3' "$B/compile_commands.json"; then fail "non-portable -march"; fi
fi

# Relocated: the package's tree extracted anywhere works.
M="$TMP/root/usr/bin/mlprof"
"$M" --version
cd "$TMP"
"$M" demo > demo.log 2>&1 || { tail -20 demo.log; fail "mlprof demo from the extracted package"; }
grep -m3 -i "planted\|finding\|bottleneck" demo.log || true
"$M" run --memory -q -o "$TMP/true.mlprof" -- /bin/true > run.log 2>&1 || { cat run.log; fail "mlprof run --memory"; }
echo "check_deb: ok"
