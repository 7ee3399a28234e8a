#!/usr/bin/env bash
# Builds the importer's libFuzzer target with clang (+ASan/UBSan) and fuzzes it for a bounded
# time, seeded with the real traces in tests/data and, when present, HTA's Kineto GPU traces in
# the shared data folder ($MLPROF_SHARED_DIR, default ../shared) (decompressed, first 64 KiB),
# and small cases.
#   usage: tests/fuzz/run_fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${1:-60}
command -v clang++ >/dev/null || { echo "run_fuzz: clang++ not installed (make deps installs it)"; exit 1; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMLPROF_FUZZ=ON \
  -DMLPROF_BUILD_TESTS=OFF -DMLPROF_BUILD_BENCH=OFF -DMLPROF_WITH_CUDA=OFF \
  -DCMAKE_CXX_FLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build build-fuzz --target import_fuzz -j "$(nproc)"
corpus=build-fuzz/corpus; mkdir -p "$corpus"
shared=${MLPROF_SHARED_DIR:-../shared}/traces/kineto-gpu
for f in tests/data/*.json tests/data/*.json.gz "$shared"/critical_path/simple_add/*.json.gz \
  "$shared"/trace_file_list/*.json.gz "$shared"/amd_trace/*.json.gz; do
  [ -e "$f" ] || continue
  b=$(basename "$f")
  if [[ $f == *.gz ]]; then (zcat "$f" 2>/dev/null || true) | head -c 65536 > "$corpus/$b.json"; cp "$f" "$corpus/$b"; else head -c 65536 "$f" > "$corpus/$b"; fi
done
printf '{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":2}]}' > "$corpus/be.json"
printf '[[1,2,3,4],[-1,1,5,7]]' > "$corpus/timeline.json"
# Recoverable damage: a cut file, trailing commas, a raw newline, flows v1/v2.
printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"ts":1,"dur":2,"args":{"k":1,}},{"ph":"X","name":"b\nc","tid":"7","ts":2' > "$corpus/recover.json"
printf '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":5,"bind_id":"0x1","flow_out":true},{"ph":"s","id":2,"pid":1,"tid":1,"ts":2},{"ph":"f","id":2,"pid":1,"tid":2,"ts":3},{"ph":"X","name":"b","pid":1,"tid":2,"ts":4,"dur":1,"bind_id":"0x1","flow_in":true},]' > "$corpus/flows.json"
ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/import_fuzz -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 \
  -max_len=262144 -timeout=20 "$corpus" 2>&1 | tail -5
echo "run_fuzz: no crash in ${SECONDS_TO_RUN}s"
