#!/bin/bash
# First screens of inputs that are not profiles (a torch.compile log, a CUDA memory snapshot) and
# the dashboard's Ranks view grouped by job (tests/web/input_screens_test.mjs), in Debian's
# chromium; screenshots into build/screenshots/. Skips (exit 0) without chromium or node_modules,
# 77 without the shared compile logs.
# Usage: web_inputs.sh MLPROF DATA_DIR
set -u
MLPROF=$1
DATA=$2
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared FAILURE_LOG traces/compile/tlparse/comp_failure.log
require_shared BREAK_LOG traces/compile/tlparse/comp_metrics.log
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/input_screens_test.mjs" "$MLPROF" "$BUILD/screenshots" \
  "$FAILURE_LOG" "$BREAK_LOG" "$DATA/h100/h100_eager_snapshot.pickle.gz" \
  "$DATA/h100/oom/h100_oom_snapshot.pickle.gz"
