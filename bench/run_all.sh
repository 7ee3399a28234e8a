#!/usr/bin/env bash
# Runs every benchmark that exists; each prints its own figures.
set -uo pipefail
cd "$(dirname "$0")/.."
for b in bench/*_bench.sh; do echo "== $b"; bash "$b"; done
for b in build/bench/*_bench; do [ -x "$b" ] && { echo "== $b"; "$b"; }; done
