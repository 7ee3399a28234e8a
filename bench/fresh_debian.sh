#!/usr/bin/env bash
# What a user on a fresh Debian 12 machine sees (docs/install.md, issue 29), measured in a
# debootstrap'd bookworm chroot (a minimal base system: no compiler, no make, no git):
#   bench/fresh_debian.sh demo [ROOT]          `apt-get install make` then `make demo` from a clean
#                                              clone of this repository; prints the wall time of
#                                              each part and the build's CPU time
#   bench/fresh_debian.sh deb DEB_DIR [ROOT]   `apt install ./mlprof_*.deb`, then mlprof --version,
#                                              demo, run --memory; then ./mlprof-dev_*.deb with g++
#                                              and cmake, and tests/install_consumer built against it
# Needs root, debootstrap and a Debian mirror (deb.debian.org). ROOT (default: a new directory
# under /var/tmp) is created, used and left in place; delete it afterwards (umount ROOT/{proc,sys,dev/pts,dev}).
# The machine's load shows in the wall times: the script prints the load average at each end.
set -euo pipefail
mode=${1:?usage: fresh_debian.sh demo [ROOT] | deb DEB_DIR [ROOT]}
REPO=$(cd "$(dirname "$0")/.." && pwd)
if [ "$mode" = deb ]; then DEBS=$(cd "${2:?DEB_DIR}" && pwd); ROOT=${3:-}; else ROOT=${2:-}; fi
ROOT=${ROOT:-$(mktemp -d /var/tmp/mlprof-fresh-XXXXXX)}
[ "$(id -u)" = 0 ] || { echo "fresh_debian.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap > /dev/null || { echo "fresh_debian.sh: apt-get install debootstrap" >&2; exit 2; }

if [ ! -e "$ROOT/etc/debian_version" ]; then
  echo "debootstrap --variant=minbase bookworm $ROOT ..."
  debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian > "$ROOT.debootstrap.log"
fi
for d in proc sys dev dev/pts; do mountpoint -q "$ROOT/$d" || mount --bind "/$d" "$ROOT/$d"; done
cp /etc/resolv.conf "$ROOT/etc/"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$mode" = demo ]; then
  rm -rf "$ROOT/root/mlprof" && git clone -q "$REPO" "$ROOT/root/mlprof"
  cat > "$ROOT/root/fresh_demo.sh" << 'EOF'
#!/bin/bash
set -e
export DEBIAN_FRONTEND=noninteractive
cd /root/mlprof
t0=$(date +%s.%N)
apt-get update -qq && apt-get install -y -qq make > /dev/null
t1=$(date +%s.%N)
TIMEFORMAT='make demo: %R s wall, %U s user + %S s sys CPU'
time make demo > /root/make_demo.log 2>&1
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "apt-get install make: %.0f s\nmake demo: %.0f s (of which the Debian packages: see /var/log/apt/history.log)\n", b - a, c - b }'
grep -A1 '^Start-Date' /var/log/apt/history.log | grep -v '^--' | paste - - | tail -1
EOF
  chmod +x "$ROOT/root/fresh_demo.sh"
  chroot "$ROOT" /root/fresh_demo.sh
else
  cp "$DEBS"/mlprof_*.deb "$DEBS"/mlprof-dev_*.deb "$ROOT/root/"
  rm -rf "$ROOT/root/install_consumer" && cp -r "$REPO/tests/install_consumer" "$ROOT/root/"
  cat > "$ROOT/root/fresh_deb.sh" << 'EOF'
#!/bin/bash
set -e
export DEBIAN_FRONTEND=noninteractive
cd /root
apt-get update -qq
s=$(date +%s); apt-get install -y -qq ./mlprof_*.deb > apt_runtime.log 2>&1; e=$(date +%s)
echo "apt install ./mlprof_*.deb: $((e - s)) s, $(grep -c '^Setting up' apt_runtime.log) packages set up"
mlprof --version
mkdir -p /tmp/fresh && cd /tmp/fresh
mlprof demo > demo.log 2>&1 && echo "mlprof demo: ok ($(grep -c . demo.log) lines)"
mlprof run --memory -q -o /tmp/fresh/true.mlprof -- /bin/true && echo "mlprof run --memory: ok"
cd /root
s=$(date +%s); apt-get install -y -qq ./mlprof-dev_*.deb g++ cmake make > apt_dev.log 2>&1; e=$(date +%s)
echo "apt install ./mlprof-dev_*.deb g++ cmake make: $((e - s)) s"
cmake -S install_consumer -B consumer -DCMAKE_BUILD_TYPE=Release > consumer.log 2>&1
cmake --build consumer >> consumer.log 2>&1
./consumer/record_scopes /tmp/fresh/r.mlprof && ./consumer/analyze_trace /tmp/fresh/r.mlprof > /dev/null
echo "find_package(mlprof) consumer against the installed mlprof-dev: ok"
EOF
  chmod +x "$ROOT/root/fresh_deb.sh"
  chroot "$ROOT" /root/fresh_deb.sh
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
