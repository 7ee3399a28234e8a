#!/usr/bin/env bash
# GPU verification of `mlprof run --gpu` on a machine with an NVIDIA GPU and driver:
# builds only what is needed (mlprof, the capture libraries, examples/cuda), runs the CUDA
# example under `mlprof run --gpu --memory --rss 20`, and prints the kernels, memcpys, memsets,
# launch->kernel links and NVML counters found, next to what the example says it did.
# Usage: scripts/gpu_check.sh [BUILD_DIR=build-gpucheck]   (about 2-4 minutes on 16 cores)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpucheck}
jobs=$(nproc)
echo "== GPU"
nvidia-smi -L 2>/dev/null || echo "(no nvidia-smi)"
echo "== configure + build ($build)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLPROF_BUILD_TESTS=OFF \
  -DMLPROF_BUILD_BENCH=OFF -DMLPROF_WITH_CUDA=ON > "$build.configure.log" 2>&1 ||
  { tail -30 "$build.configure.log"; exit 1; }
grep "CUPTI injection" "$build.configure.log" || echo "WARNING: CUPTI library not enabled"
cmake --build "$build" -j"$jobs" --target mlprof mlprof_preload mlprof_cupti cuda_example 2>&1 | tail -3
app=$build/examples/cuda_vector_add
[[ -x $app && -x $build/mlprof ]] || { echo "FAIL: build did not produce $app / mlprof"; exit 1; }

out=$(mktemp -d)
echo "== plain run"
"$app" 20 | tee "$out/expect.json"
echo "== mlprof run --gpu --memory --rss 20 -- $app 20"
"$build/mlprof" run --gpu --memory --rss 20 --gpu-interval 20 -o "$out/gpu.mlprof" -- "$app" 20 \
  2>&1 | tee "$out/run.txt" | head -60
echo "== mlprof kernels"
"$build/mlprof" kernels "$out/gpu.mlprof" 2>&1 | head -25
echo "== mlprof gpu"
"$build/mlprof" gpu "$out/gpu.mlprof" 2>&1 | head -25
echo "== check (Chrome JSON export of the capture)"
if "$build/mlprof" export "$out/gpu.mlprof" -o "$out/gpu.json" > /dev/null 2>&1 ||
   "$build/mlprof" export --format chrome "$out/gpu.mlprof" -o "$out/gpu.json" > /dev/null 2>&1; then
  python3 - "$out/expect.json" "$out/gpu.json" <<'PY'
import json, sys, collections
expect = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
doc = json.load(open(sys.argv[2]))
events = doc["traceEvents"] if isinstance(doc, dict) else doc
kern = collections.Counter(); memcpy = collections.Counter(); memset = 0; flows = 0
durs = collections.defaultdict(list); counters = collections.defaultdict(list); launches = 0
for e in events:
    cat, ph, name = e.get("cat", ""), e.get("ph"), e.get("name", "")
    if ph == "X" and cat == "kernel":
        short = name.split("(")[0].split("<")[0].split()[-1]
        kern[short] += 1; durs[short].append(e.get("dur", 0))
    elif ph == "X" and cat == "gpu_memcpy":
        memcpy[name] += 1; durs[name].append(e.get("dur", 0))
    elif ph == "X" and cat == "gpu_memset":
        memset += 1
    elif ph == "X" and cat == "cuda_runtime" and "Launch" in name:
        launches += 1
    elif ph in ("s", "f") and e.get("cat") == "ac2g":
        flows += ph == "s"
    elif ph == "C":
        for k, v in e.get("args", {}).items():
            counters[e["name"] + (" " + k if k not in e["name"] else "")].append(v)
ok = True
for k, n in expect["kernels"].items():
    got = kern.get(k, 0); ok &= got == n
    d = durs.get(k, [0]); print(f"kernel {k}: {got} (expected {n}), mean {sum(d)/len(d):.1f} us")
for name, n in memcpy.items():
    d = durs[name]; print(f"{name}: {n}, mean {sum(d)/len(d):.1f} us")
htod = sum(n for k, n in memcpy.items() if "HtoD" in k); dtoh = sum(n for k, n in memcpy.items() if "DtoH" in k)
ok &= htod == expect["memcpy_htod"] and dtoh == expect["memcpy_dtoh"] and memset == expect["memsets"]
print(f"memcpy HtoD {htod} (expected {expect['memcpy_htod']}), DtoH {dtoh} (expected {expect['memcpy_dtoh']}), memsets {memset} (expected {expect['memsets']})")
print(f"kernel launches (cuda_runtime) {launches}, launch->GPU flows {flows}")
for k, v in sorted(counters.items()):
    print(f"counter {k}: {len(v)} samples, min {min(v)}, max {max(v)}")
print("RESULT:", "PASS" if ok else "FAIL")
PY
else
  echo "(mlprof export not available; counts from the run output above)"
  grep -E "GPU capture|NVML" "$out/run.txt"
fi
echo "files in $out"
