#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ASan/UBSan) and fuzzes each for a bounded time:
#   import_fuzz  the Chrome/Kineto JSON importer, differential (fast path / simdjson, chunk sizes,
#                one parser / split parse, clean prefixes)
#   native_fuzz  the .mlprof reader (whole files, payloads behind the checksum, JSON round trips)
#   serve_fuzz   serve's HTTP request handling (raw requests to a server in the process)
#   pickle_fuzz  the CUDA memory-snapshot readers (the pickle VM, its JSON twin)
#   compile_log_fuzz  the torch.compile structured-log reader and the compile analysis
#   sqlite_fuzz  the SQLite trace readers (nsys, rpd, rocpd): database images and SQL scripts
#   rocprofv3_fuzz, xspace_fuzz  the rocprofv3 JSON and JAX XSpace readers
#   perfetto_fuzz  the .pftrace reader, and the writer by round trip
# Seeds are small inputs written by tests/fuzz/make_seeds.py and make_format_seeds.py (a few KiB
# at most, every event kind; nothing copied from real traces) and inputs are capped at 4 KiB (16
# KiB for sqlite_fuzz: a database image of ten tables takes a page each), so each is parsed every
# way.
# New inputs found are kept in build-fuzz/corpus/TARGET (reused by the next run), crashes in
# build-fuzz/artifacts/. Exit status: non-zero if any target found a crash.
#   usage: tests/fuzz/run_fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   FUZZ_JOBS=N: N fuzzing processes per target (libFuzzer -fork; make fuzz-long uses every core)
#   FUZZ_ENTROPIC=1: libFuzzer's entropic scheduler (make fuzz-long). Off by default: in short
#     runs its bookkeeping costs most of the CPU (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(import_fuzz native_fuzz serve_fuzz pickle_fuzz compile_log_fuzz
                                     sqlite_fuzz rocprofv3_fuzz xspace_fuzz perfetto_fuzz)
JOBS=${FUZZ_JOBS:-1}
ENTROPIC=${FUZZ_ENTROPIC:-0}
MAX_LEN=${FUZZ_MAX_LEN:-4096}
command -v clang++ >/dev/null || { echo "run_fuzz: clang++ not installed (make deps installs it)"; exit 1; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMLPROF_FUZZ=ON \
  -DMLPROF_BUILD_TESTS=OFF -DMLPROF_BUILD_BENCH=OFF -DMLPROF_WITH_CUDA=OFF \
  -DMLPROF_WEB_FROM_SOURCE=OFF \
  -DCMAKE_CXX_FLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build build-fuzz --target "${TARGETS[@]}" -j "$(nproc)"

seeds=build-fuzz/seeds
rm -rf "$seeds"
python3 tests/fuzz/make_seeds.py "$seeds"
python3 tests/fuzz/make_format_seeds.py "$seeds"
if [[ " ${TARGETS[*]} " == *" native_fuzz "* ]]; then
  # .mlprof payload seeds: the JSON seeds through the writer (native_fuzz's JSON mode).
  mkdir -p "$seeds/native_payloads"
  MLPROF_FUZZ_SEED_DIR="$seeds/native_payloads" ./build-fuzz/native_fuzz "$seeds"/native/* \
    >/dev/null 2>&1
fi

status=0
summary=""
for target in "${TARGETS[@]}"; do
  corpus=build-fuzz/corpus/$target
  mkdir -p "$corpus" build-fuzz/artifacts
  case $target in
    import_fuzz) dirs=("$seeds/import") ;;
    native_fuzz) dirs=("$seeds/native" "$seeds/native_payloads") ;;
    serve_fuzz) dirs=("$seeds/serve") ;;
    pickle_fuzz) dirs=("$seeds/pickle") ;;
    compile_log_fuzz) dirs=("$seeds/compile_log") ;;
    sqlite_fuzz) dirs=("$seeds/sqlite") ;;
    rocprofv3_fuzz) dirs=("$seeds/rocprofv3") ;;
    xspace_fuzz) dirs=("$seeds/xspace") ;;
    perfetto_fuzz) dirs=("$seeds/perfetto") ;;
  esac
  max_len=$MAX_LEN
  [ "$target" = sqlite_fuzz ] && [ "$MAX_LEN" -lt 16384 ] && max_len=16384
  log=build-fuzz/$target.log
  fork=()
  [ "$JOBS" -gt 1 ] && fork=(-fork="$JOBS")
  set +e
  TIMEFORMAT='%U %S'  # the CPU seconds the target used (the machine may be shared)
  { time ASAN_OPTIONS=detect_leaks=1:malloc_context_size=6:quarantine_size_mb=16 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      ./build-fuzz/"$target" "$corpus" "${dirs[@]}" -entropic="$ENTROPIC" \
      -max_total_time="$SECONDS_TO_RUN" -max_len="$max_len" -timeout=20 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$target-" "${fork[@]}" \
      >"$log" 2>&1; } 2>"$log.cpu"
  rc=$?
  set -e
  runs=$(grep -ao 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  # -fork: the parent's last status line ("#N ...") counts every child's runs.
  [ "$JOBS" -gt 1 ] && runs=$(grep -ao '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  rate=$((runs / (SECONDS_TO_RUN > 0 ? SECONDS_TO_RUN : 1)))
  cpu=$(awk '{printf "%d", $1 + $2 + 0.5}' "$log.cpu" 2>/dev/null || echo 0)
  per_cpu=$((runs / (cpu > 0 ? cpu : 1)))
  if [ $rc -ne 0 ]; then
    status=1
    tail -40 "$log"
    summary+="run_fuzz: $target FAILED (exit $rc; log $log, input in build-fuzz/artifacts/)"$'\n'
  else
    summary+="run_fuzz: $target: $runs runs in ${SECONDS_TO_RUN}s (~$rate/s; ~$per_cpu per CPU second, $cpu CPU s), no crash"$'\n'
  fi
done
printf '%s' "$summary"
exit $status
