#!/bin/bash
# `mlprof flame -o x.json` loads in speedscope itself (tests/web/speedscope_test.mjs): the npm
# speedscope package's web app served on loopback, the file opened in headless chromium, frame
# names and weights read back from its Sandwich table. Skips (exit 0) without chromium, node or
# the speedscope package (npm ci of web/ in the build directory installs it).
# Usage: speedscope.sh MLPROF DATA_DIR
set -u
MLPROF=$1; DATA=$2
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser speedscope/dist/release
source "$(dirname "$0")/shared_data.sh"
TRACES=("$DATA/mlp_bs64.json.gz")
GPU=$(shared_path traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz) && TRACES+=("$GPU")
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/speedscope_test.mjs" "$MLPROF" "$BUILD/screenshots" "${TRACES[@]}"
