#!/usr/bin/env bash
# GPU verification of mlprof on a machine with an NVIDIA GPU, driver, nvcc and PyTorch (issue 31).
#
#   scripts/gpu_check.sh [--bundle DIR] [OUTDIR]
#
# --bundle DIR: use the mlprof binary and capture libraries packed by scripts/gpu_bundle.sh
# (built elsewhere, no build here); without it, mlprof is built here (CMake, CUDA toolkit).
# OUTDIR (default $OUT, else a new temporary folder) receives summary.txt (this log),
# analyses.tsv (every mlprof analysis on every trace: exit code, seconds, bytes out, first error
# line), traces.tar.gz (the traces and captures, gzip) and analyses.tar.gz (each trace's JSON).
#
# What it does, each part under its own time limit so that one failure leaves the rest:
#  1. builds examples/cuda/vector_add.cu with nvcc, runs it plain and under
#     `mlprof run --gpu --memory --rss 20`, and compares the capture with what the program did and
#     measured itself (kernel/memcpy/memset counts, the kernel loop's CUDA-event time, NVML);
#  2. scripts/gpu/torch_step.py (a 3-layer bf16 transformer training step) under
#     `mlprof run --gpu --memory`, against its own CUDA events and torch.profiler's trace of the
#     same program (kernels per step, per kernel name);
#  3. torch.profiler traces (record_shapes, profile_memory, with_stack) of the step eager, under
#     torch.compile (inductor) and under torch.compile(mode="reduce-overhead") (CUDA graphs), a
#     CUDA memory snapshot and the TORCH_TRACE log of the compiled run;
#  4. every mlprof analysis on each of them.
# GPU_CHECK_BUDGET_S (default 330) bounds the whole run: optional parts are skipped past it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=""
if [[ ${1:-} == --bundle ]]; then bundle=$(cd "$2" && pwd); shift 2; fi
out=${1:-${OUT:-$(mktemp -d)}}
mkdir -p "$out"
work=${GPU_CHECK_WORK:-$(mktemp -d /tmp/gpucheck.XXXXXX)}  # GPU_CHECK_WORK: a dry run's prepared folder
mkdir -p "$work"
exec > >(tee -a "$out/summary.txt") 2>&1
t0=$SECONDS
budget=${GPU_CHECK_BUDGET_S:-330}
left() { echo $((budget - (SECONDS - t0))); }
step() { echo; echo "== [$((SECONDS - t0)) s] $*"; }
py=${PYTHON:-python3}
gpudir=$root/scripts/gpu

step "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv 2>&1 ||
  echo "(no nvidia-smi)"
nvcc --version 2>/dev/null | tail -1
$py -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda,
"triton", triton.__version__, "gpu", torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1 | tail -1
for d in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls "$d"/libcupti.so.* 2>/dev/null; done
$py -c 'import glob, os, nvidia; print(*glob.glob(os.path.join(os.path.dirname(nvidia.__path__[0]), "nvidia", "*", "lib", "libcupti*")))' 2>/dev/null

if [[ -n $bundle ]]; then
  M=$bundle/mlprof
  if ldd "$M" | grep -q "not found"; then
    echo "system lacks: $(ldd "$M" | grep 'not found' | awk '{print $1}' | tr '\n' ' ')-> lib-fallback"
    export LD_LIBRARY_PATH=$bundle/lib-fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  ldd "$M" "$bundle/libmlprof_cupti.so" "$bundle/libmlprof_preload.so" | grep "not found" &&
    echo "WARNING: libraries missing"
else
  build=$root/build-gpucheck
  step "configure + build ($build)"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLPROF_BUILD_TESTS=OFF \
    -DMLPROF_BUILD_BENCH=OFF -DMLPROF_WITH_CUDA=ON > "$work/configure.log" 2>&1 ||
    { tail -30 "$work/configure.log"; exit 1; }
  cmake --build "$build" -j"$(nproc)" --target mlprof mlprof_preload mlprof_cupti 2>&1 | tail -2
  M=$build/mlprof
fi
"$M" --version || { echo "FAIL: mlprof does not run"; exit 1; }

# ---- 1. the CUDA C++ example ------------------------------------------------------------------
step "1. CUDA example (nvcc) under mlprof run --gpu --memory"
app=${GPU_CHECK_APP:-}
if [[ -z $app ]]; then
  app=$work/vector_add
  nvcc -O2 -arch=native -o "$app" "$root/examples/cuda/vector_add.cu" 2>&1 | tail -3 ||
    nvcc -O2 -o "$app" "$root/examples/cuda/vector_add.cu" 2>&1 | tail -3
fi
if [[ -x $app ]]; then
  timeout -k 5 60 "$app" 20 > "$work/cuda_expect.json"; echo "plain run: rc=$? $(tail -1 "$work/cuda_expect.json")"
  timeout -k 5 90 "$M" run --gpu --memory --rss 20 --gpu-interval 20 -o "$work/h100_cuda_vector_add.mlprof" \
    -- "$app" 20 > "$work/cuda_run.txt" 2>&1
  echo "mlprof run: rc=$?"; head -40 "$work/cuda_run.txt"
  "$M" export "$work/h100_cuda_vector_add.mlprof" -o "$work/cuda_capture.json" > /dev/null &&
    $py "$gpudir/check_run.py" cuda "$work/cuda_expect.json" "$work/cuda_capture.json"
  "$M" kernels "$work/h100_cuda_vector_add.mlprof" 2>&1 | head -16
  "$M" gpu "$work/h100_cuda_vector_add.mlprof" 2>&1 | head -16
else
  echo "FAIL: no CUDA example binary"
fi

# ---- 2./3. PyTorch ----------------------------------------------------------------------------
torch_ok=0
$py -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null && torch_ok=1
torch_run() {  # NAME LIMIT_S CMD... : runs, logs rc and time, shows the error's tail
  local name=$1 limit=$2; shift 2
  local s=$SECONDS
  timeout -k 5 "$limit" "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  echo "$name: rc=$rc in $((SECONDS - s)) s; $(tail -c 600 "$work/$name.out" | tail -1 | cut -c1-400)"
  ((rc == 0)) || tail -25 "$work/$name.err"
  return $rc
}
if ((torch_ok)); then
  # The traces first (they are what the tests keep), then the captures of the same program.
  step "2. torch.profiler traces: eager, compile, reduce-overhead; memory snapshot"
  torch_run prof_eager 60 $py "$gpudir/torch_step.py" --mode eager --steps 6 \
    --profile "$work/h100_eager.json.gz" --result "$work/h100_eager_result.json"
  torch_run snapshot 60 $py "$gpudir/torch_step.py" --mode eager --steps 3 \
    --snapshot "$work/h100_eager_snapshot.pickle" --result "$work/h100_snapshot_result.json"
  TORCH_TRACE=$work/torch_trace torch_run prof_compile 120 $py "$gpudir/torch_step.py" \
    --mode compile --steps 6 --profile "$work/h100_compile.json.gz" --result "$work/h100_compile_result.json"
  torch_run prof_graphs 120 $py "$gpudir/torch_step.py" --mode graphs --steps 8 \
    --profile "$work/h100_graphs.json.gz" --result "$work/h100_graphs_result.json"
  ls -la "$work"/*.json.gz "$work"/*.pickle "$work"/torch_trace 2>/dev/null

  step "3. torch step (eager, 100 ms gaps): torch.profiler alone, then under mlprof run --gpu"
  torch_run prof_eager_gaps 60 $py "$gpudir/torch_step.py" --mode eager --steps 6 --gap-ms 100 \
    --profile "$work/eager_gaps.json.gz" --result "$work/prof_eager_gaps_result.json"
  # The injection library must bind to the libcupti PyTorch loads, not a second copy.
  tcupti=$($py -c 'import glob, os, nvidia; print(sorted(glob.glob(os.path.join(nvidia.__path__[0], "*", "lib", "libcupti.so.*")))[0])' 2>/dev/null)
  tb=$bundle
  if [[ -n $bundle && -f $tcupti ]]; then
    tb=$work/bundle-torch; cp -r "$bundle" "$tb"; ln -sf "$tcupti" "$tb/lib/libcupti.so.13"
    echo "torch's CUPTI: $tcupti"
  fi
  TM=${tb:+$tb/mlprof}; TM=${TM:-$M}
  torch_run mlprof_eager 60 "$TM" run --gpu --gpu-interval 20 -q \
    -o "$work/h100_torch_eager.mlprof" -- $py "$gpudir/torch_step.py" --mode eager --steps 6 \
    --gap-ms 100 --result "$work/mlprof_eager_result.json"
  grep -iE "warn|error|lost|dropped|cupti" "$work/mlprof_eager.err" | head -10
  if [[ -f $work/h100_torch_eager.mlprof ]]; then
    "$M" export "$work/h100_torch_eager.mlprof" -o "$work/torch_capture.json" > /dev/null
    $py "$gpudir/check_run.py" torch "$work/mlprof_eager_result.json" "$work/torch_capture.json" \
      "$work/eager_gaps.json.gz"
  fi
else
  echo "(no PyTorch with CUDA: parts 2-3 skipped)"
fi

# ---- 4. every analysis on every trace ---------------------------------------------------------
step "4. every mlprof analysis on every trace ($(left) s left)"
mkdir -p "$work/json"
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
analyses() {  # TRACE NAME: one TSV row per command
  local t=$1 n=$2 c s rc
  for c in summary ops steps gpu kernels memory leaks flops modules critical-path bottlenecks \
           timeline analyze compare report flame export-sqlite export-json sql; do
    s=$EPOCHREALTIME
    case $c in
      report) timeout -k 5 60 "$M" report "$t" -o "$work/json/$n.report.html" > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
      flame) timeout -k 5 60 "$M" flame "$t" -o "$work/json/$n.flame.txt" > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
      compare) timeout -k 5 60 "$M" compare "$t" "$t" --json > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
      export-sqlite) timeout -k 5 60 "$M" export "$t" -o "$work/$n.sqlite" > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
      export-json) timeout -k 5 60 "$M" export "$t" -o "$work/$n.export.json" > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
      sql) timeout -k 5 60 "$M" sql "$t" "select sum(count) as kernels, sum(total_ns) as kernel_ns from kernels" --json > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
      *) timeout -k 5 60 "$M" "$c" "$t" --json > "$work/json/$n.$c.out" 2> "$work/json/$n.$c.err" ;;
    esac
    rc=$?
    printf '%s\t%s\t%s\t%.2f\t%s\t%s\n' "$n" "$c" "$rc" "$(since "$s")" \
      "$(stat -c %s "$work/json/$n.$c.out")" "$(grep -m1 -iE 'error|fail|cannot|invalid' "$work/json/$n.$c.err" | cut -c1-200)"
  done > "$work/json/$n.tsv"
}
if (($(left) < 40)); then echo "(analyses skipped: $(left) s left; run them on the returned traces)"; fi
pids=()  # a plain `wait` would also wait for the log's tee (a process substitution)
for t in "$work"/h100_*.mlprof "$work"/h100_eager.json.gz "$work"/h100_compile.json.gz "$work"/h100_graphs.json.gz; do
  [[ -f $t ]] && (($(left) >= 40)) || continue
  n=$(basename "$t"); n=${n%%.*}
  analyses "$t" "$n" &
  pids+=($!)
done
wait "${pids[@]}"
{
  printf 'trace\tcommand\trc\tseconds\tbytes_out\tfirst_error\n'
  cat "$work"/json/*.tsv
  # The snapshot and the compile logs have their own readers.
  if [[ -f $work/h100_eager_snapshot.pickle ]]; then
    s=$EPOCHREALTIME; timeout -k 5 60 "$M" memory "$work/h100_eager_snapshot.pickle" --json > "$work/json/snapshot.memory.out" 2> "$work/json/snapshot.memory.err"
    printf 'h100_eager_snapshot\tmemory\t%s\t%.2f\t%s\t\n' "$?" "$(since "$s")" "$(stat -c %s "$work/json/snapshot.memory.out")"
  fi
  if [[ -d $work/torch_trace ]]; then
    s=$EPOCHREALTIME; timeout -k 5 60 "$M" compile "$work/torch_trace" "$work/h100_compile.json.gz" --json > "$work/json/compile.compile.out" 2> "$work/json/compile.compile.err"
    printf 'h100_compile+torch_trace\tcompile\t%s\t%.2f\t%s\t\n' "$?" "$(since "$s")" "$(stat -c %s "$work/json/compile.compile.out")"
  fi
} > "$out/analyses.tsv"
(column -t -s $'\t' "$out/analyses.tsv" 2>/dev/null || cat "$out/analyses.tsv") | cut -c1-160
echo "nonzero exits: $(awk -F'\t' 'NR > 1 && $3 != 0' "$out/analyses.tsv" | wc -l) of $(($(wc -l < "$out/analyses.tsv") - 1))"
for f in "$work"/json/h100_eager.steps.out "$work"/json/h100_graphs.kernels.out; do
  [[ -f $f ]] && { echo "-- $(basename "$f")"; head -c 1500 "$f"; echo; }
done
"$M" bottlenecks "$work/h100_eager.json.gz" 2>&1 | head -30
[[ -d $work/torch_trace ]] && "$M" compile "$work/torch_trace" "$work/h100_compile.json.gz" 2>&1 | head -30

# ---- pack -------------------------------------------------------------------------------------
step "pack"
cd "$work" || exit 1
[[ -f h100_eager_snapshot.pickle ]] && gzip -kf h100_eager_snapshot.pickle
[[ -d torch_trace ]] && tar czf h100_compile_torch_trace.tar.gz torch_trace
tar czf "$out/traces.tar.gz" --ignore-failed-read h100_*.json.gz ./*_result.json cuda_expect.json \
  eager_gaps.json.gz both_prof.json.gz 2>/dev/null
tar czf "$out/captures.tar.gz" --ignore-failed-read h100_*.mlprof h100_eager_snapshot.pickle.gz \
  h100_compile_torch_trace.tar.gz ./*.out ./*.err 2>/dev/null
# JSON outputs under 2 MB (the analyze/critical-path JSON of a big trace can be tens of MB).
find json -name '*.out' -size -2M -o -name '*.err' -o -name '*.tsv' | tar czf "$out/analyses.tar.gz" -T - 2>/dev/null
ls -la "$out"
echo "packed in $((SECONDS - t0)) s"

# ---- 5. optional: the torch step under --memory (hung at the first try), with a diagnosis ------
if ((torch_ok)) && (($(left) > 50)); then
  step "5. torch step under mlprof run --gpu --memory (40 s limit; thread states if it hangs)"
  "$TM" run --gpu --memory -q -o "$work/h100_torch_eager_memory.mlprof" -- $py "$gpudir/torch_step.py" \
    --mode eager --steps 3 --result "$work/mem_result.json" > "$work/mem.out" 2> "$work/mem.err" &
  mp=$!
  for _ in $(seq 40); do kill -0 $mp 2>/dev/null || break; sleep 1; done
  if kill -0 $mp 2>/dev/null; then
    echo "still running after 40 s; threads of mlprof's descendants:"
    for p in $(pgrep -f torch_step.py); do
      ps -L -o pid,tid,stat,pcpu,wchan:28,comm -p "$p" | head -40
      for t in /proc/$p/task/*; do echo "$t $(cat $t/stat | cut -d' ' -f3) $(cat $t/wchan 2>/dev/null)"; done | sort -k2 | uniq -c -f1 | head
    done
    kill -9 $mp $(pgrep -f torch_step.py) 2>/dev/null
  fi
  wait $mp; echo "rc=$?"; tail -5 "$work/mem.err"; tail -c 300 "$work/mem.out"
  [[ -f $work/h100_torch_eager_memory.mlprof ]] && ls -la "$work/h100_torch_eager_memory.mlprof"
fi
# ---- 6. optional: torch.profiler inside mlprof run --gpu (two CUPTI activity clients) -----------
if ((torch_ok)) && (($(left) > 50)); then
  step "6. torch.profiler inside mlprof run --gpu (two CUPTI clients in one process)"
  torch_run mlprof_and_profiler 45 "$TM" run --gpu -q -o "$work/both.mlprof" -- $py "$gpudir/torch_step.py" \
    --mode eager --steps 6 --gap-ms 100 --profile "$work/both_prof.json.gz" --result "$work/both_result.json"
  grep -iE "cupti|warn|error" "$work/mlprof_and_profiler.err" | head -8
  if [[ -f $work/both.mlprof ]]; then
    "$M" export "$work/both.mlprof" -o "$work/both_capture.json" > /dev/null
    $py "$gpudir/check_run.py" torch "$work/both_result.json" "$work/both_capture.json" \
      "$work/both_prof.json.gz" | tail -12
  fi
fi
echo "done in $((SECONDS - t0)) s"
