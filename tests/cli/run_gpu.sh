#!/usr/bin/env bash
# `mlprof run --gpu` on examples/cuda (vector_add: 2 kernels x ITER, 3 HtoD + 1 DtoH memcpys,
# 1 memset, counts printed by the example itself). Skips without a GPU or without the example.
# Usage: run_gpu.sh MLPROF_BINARY TESTS_DATA_DIR
set -uo pipefail
mlprof=$1
bindir=$(dirname "$mlprof")
app=$bindir/examples/cuda_vector_add
if [[ ! -x $app ]]; then
  echo "SKIP: $app not built (needs nvcc; cmake --build ... --target cuda_example)"; exit 0
fi
if [[ ! -f $bindir/libmlprof_cupti.so ]]; then
  echo "SKIP: libmlprof_cupti.so not built (no CUPTI headers at build time)"; exit 0
fi
if ! "$app" 1 > /dev/null 2>&1; then
  echo "SKIP: no usable CUDA GPU on this machine ($app exits non-zero)"; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$app" 10 | tail -1 > "$tmp/expect.json"
"$mlprof" run --gpu -o "$tmp/gpu.mlprof" -- "$app" 10 > "$tmp/run.txt" 2>&1 || {
  echo "FAIL: mlprof run --gpu exited $?"; cat "$tmp/run.txt"; exit 1; }
python3 - "$tmp/expect.json" "$tmp/run.txt" <<'PY'
import json, re, sys
expect = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
m = re.search(r"GPU capture: (\d+) kernels, (\d+) memcpys, (\d+) memsets, \d+ syncs, (\d+) CUDA API calls, (\d+) launch->GPU links", text)
if not m:
    print("FAIL: no GPU capture line in the output:\n" + text); sys.exit(1)
kernels, memcpys, memsets, api, links = map(int, m.groups())
want_k = sum(expect["kernels"].values())
want_m = expect["memcpy_htod"] + expect["memcpy_dtoh"]
ok = kernels == want_k and memcpys == want_m and memsets == expect["memsets"] and links >= want_k + want_m
print(f"kernels {kernels}/{want_k}, memcpys {memcpys}/{want_m}, memsets {memsets}/{expect['memsets']}, "
      f"api calls {api}, links {links}")
sys.exit(0 if ok else 1)
PY
rc=$?
[[ $rc == 0 ]] && echo "PASS run_gpu"
exit $rc
