#!/usr/bin/env bash
# The second GPU session's checks (issue 31's leftovers), run from bundles like gpu_check.sh:
#
#   scripts/gpu_followup.sh --bundle DIR [OUTDIR]
#
#  A. `mlprof run --gpu --memory` of the PyTorch step (the first H100 session: the program ended
#     after 3.8 s and mlprof's post-processing was still running at 40 s): wall time, the
#     program's own time, so the post-processing time; the notes mlprof prints; what the heap
#     analysis attributes allocations to (symbolized sites).
#  B. torch.profiler inside `mlprof run --gpu` (two CUPTI activity clients in one process): both
#     traces checked against the program's CUDA events and against each other (check_run.py).
#  C. the reduce-overhead step profiled from step 1: the trace holds cudagraph trees' capture pass
#     and the replays, so `mlprof graphs` attributes the replays to the captured ops (issue 27).
#  D. every analysis on the new traces (exit codes).
# Parts A-C run at the same time (16 cores; each program uses ~1 GB of the GPU).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ ${1:-} == --bundle ]] || { echo "usage: $0 --bundle DIR [OUTDIR]"; exit 2; }
bundle=$(cd "$2" && pwd); shift 2
out=${1:-${OUT:-$(mktemp -d)}}
mkdir -p "$out"
work=$(mktemp -d /tmp/gpufollow.XXXXXX)
exec > >(tee -a "$out/summary.txt") 2>&1
t0=$SECONDS
step() { echo; echo "== [$((SECONDS - t0)) s] $*"; }
py=${PYTHON:-python3}
gpudir=$root/scripts/gpu

step "machine"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
$py -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1

# The bundles, with PyTorch's own libcupti (the injection must bind to the copy torch loads).
tcupti=$($py -c 'import glob, os, nvidia; print(sorted(glob.glob(os.path.join(nvidia.__path__[0], "*", "lib", "libcupti.so.*")))[0])' 2>/dev/null)
echo "torch's CUPTI: $tcupti"
prep() {  # BUNDLE DEST: a copy linked to torch's CUPTI
  cp -r "$1" "$2"
  [[ -f $tcupti ]] && ln -sf "$tcupti" "$2/lib/libcupti.so.13"
  if ldd "$2/mlprof" | grep -q "not found"; then
    export LD_LIBRARY_PATH=$2/lib-fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
}
prep "$bundle" "$work/new"
M=$work/new/mlprof
"$M" --version || { echo "FAIL: mlprof does not run"; exit 1; }

timed() {  # NAME LIMIT CMD...: rc and wall seconds into $work/NAME.time
  local name=$1 limit=$2; shift 2
  local s=$EPOCHREALTIME
  timeout -k 5 "$limit" "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  awk -v a="$s" -v b="$EPOCHREALTIME" -v rc="$rc" 'BEGIN { printf "%d %.2f\n", rc, b - a }' \
    > "$work/$name.time"
}
program_ms() {  # the program's own duration as mlprof run reports it ("exit code 0, 812.5 ms" / "6.044 s")
  grep -oE 'exit code [0-9-]+, [0-9.]+ m?s' "$1" | head -1 | awk '{print ($5 == "s") ? $4 * 1000 : $4}'
}
step_args=(--mode eager --steps 3)

step "A-C in parallel: run --gpu --memory, torch.profiler inside run --gpu, graphs capture"
timed mem_new 150 "$M" run --gpu --memory -o "$work/h100_torch_memory.mlprof" -- \
  $py "$gpudir/torch_step.py" "${step_args[@]}" --result "$work/mem_new_result.json" &
pa=$!
timed both 120 "$M" run --gpu -o "$work/both.mlprof" -- $py "$gpudir/torch_step.py" --mode eager \
  --steps 6 --gap-ms 100 --profile "$work/both_prof.json.gz" --result "$work/both_result.json" &
pc=$!
timed graphs 150 $py "$gpudir/torch_step.py" --mode graphs --steps 5 --profile-from 1 \
  --profile "$work/h100_graphs_capture.json.gz" --result "$work/graphs_result.json" &
pd=$!
# Thread states of a post-processing that takes long (what it is doing, if it hangs again).
( sleep 60; for p in $(pgrep -f "mlprof run --gpu --memory"); do
    echo "-- still running at 60 s: pid $p"; ps -L -o tid,stat,pcpu,wchan:24,comm -p "$p" | head -12
    [[ -r /proc/$p/stack ]] && head -5 /proc/$p/stack
  done ) &
pw=$!
wait $pa $pc $pd
kill $pw 2>/dev/null

step "A. run --gpu --memory: post-processing time"
read -r rc wall < "$work/mem_new.time"
prog=$(program_ms "$work/mem_new.out")
echo "rc=$rc wall ${wall} s, program ${prog:-?} ms, after the program: $(awk -v w="$wall" -v p="${prog:-0}" 'BEGIN { printf "%.1f", w - p / 1000 }') s"
grep -iE "note|slow|warn|dropped|symboliz" "$work/mem_new.out" "$work/mem_new.err" | cut -c1-300 | head -8
grep -v "note: pid" "$work/mem_new.out" | head -30
if [[ -f $work/h100_torch_memory.mlprof ]]; then
  ls -la "$work/h100_torch_memory.mlprof"
  "$M" heap "$work/h100_torch_memory.mlprof" 2>&1 | head -30
  "$M" leaks "$work/h100_torch_memory.mlprof" 2>&1 | head -16
  "$M" memory "$work/h100_torch_memory.mlprof" --json > "$work/mem_memory.json" 2>&1; echo "memory --json rc=$?"
fi

step "B. torch.profiler inside mlprof run --gpu"
cat "$work/both.time"; tail -c 400 "$work/both.out"; echo
grep -iE "cupti|warn|error" "$work/both.err" "$work/both.out" | head -8
if [[ -f $work/both.mlprof ]]; then
  "$M" export "$work/both.mlprof" -o "$work/both_capture.json" > /dev/null
  $py "$gpudir/check_run.py" torch "$work/both_result.json" "$work/both_capture.json" \
    "$work/both_prof.json.gz" 2>&1 | tail -20
fi

step "C. reduce-overhead from step 1 (capture pass + replays)"
cat "$work/graphs.time"; tail -25 "$work/graphs.err" | grep -v "^\s*$" | tail -8
if [[ -f $work/h100_graphs_capture.json.gz ]]; then
  ls -la "$work/h100_graphs_capture.json.gz"
  "$M" graphs "$work/h100_graphs_capture.json.gz" 2>&1 | head -40
  "$M" graphs "$work/h100_graphs_capture.json.gz" --json > "$work/graphs.json" 2>&1
  "$M" steps "$work/h100_graphs_capture.json.gz" 2>&1 | head -14
fi

step "E. symbol lookup in PyTorch's libraries: libdw's dwfl_module_addrname vs mlprof's table"
if [[ -x $work/new/symbolizer_tool ]]; then
  tlib=$($py -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
  for l in libtorch_cuda.so libtorch_cpu.so; do
    [[ -f $tlib/$l ]] && timeout -k 5 90 "$work/new/symbolizer_tool" "$tlib/$l" 400 2>&1 | tail -4
  done
fi

step "D. every analysis on the new traces"
for t in "$work/h100_graphs_capture.json.gz" "$work/h100_torch_memory.mlprof" "$work/both.mlprof" "$work/both_prof.json.gz"; do
  [[ -f $t ]] || continue
  for c in summary ops steps gpu kernels memory leaks heap flops modules critical-path bottlenecks \
           roofline graphs timeline analyze; do
    s=$EPOCHREALTIME
    timeout -k 5 60 "$M" "$c" "$t" --json > "$work/an.out" 2> "$work/an.err"
    rc=$?
    printf '%s\t%s\t%s\t%.2f\t%s\n' "$(basename "$t")" "$c" "$rc" \
      "$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$(head -c 160 "$work/an.err" | head -1)"
  done
done | tee "$out/analyses.tsv" | awk -F'\t' '$3 != 0'
echo "nonzero exits: $(awk -F'\t' '$3 != 0' "$out/analyses.tsv" | wc -l) of $(wc -l < "$out/analyses.tsv")"

step "pack"
cd "$work" || exit 1
for f in h100_torch_memory.mlprof both.mlprof; do [[ -f $f ]] && gzip -kf "$f"; done
tar czf "$out/traces.tar.gz" --ignore-failed-read h100_graphs_capture.json.gz both_prof.json.gz \
  ./*_result.json ./*.time graphs.json 2>/dev/null
for f in h100_torch_memory.mlprof.gz both.mlprof.gz; do
  [[ -f $f ]] && (($(stat -c %s "$f") < 16000000)) && cp "$f" "$out/"
done
tar czf "$out/logs.tar.gz" ./*.out ./*.err 2>/dev/null
ls -la "$out"
echo "done in $((SECONDS - t0)) s"
