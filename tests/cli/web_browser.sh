#!/bin/bash
# Browser tests of the HTML report and the `mlprof serve` dashboard (tests/web/browser_test.mjs)
# in Debian's chromium via playwright-core. Skips (exit 0) when chromium or node_modules are absent,
# exit 77 (skipped) when the shared GPU trace is absent (tests/cli/shared_data.sh).
# Usage: web_browser.sh MLPROF DATA_DIR [report|serve]
set -u
MLPROF=$1
DATA=$2
MODES=${3:-report serve}
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared GPU_TRACE traces/kineto-gpu/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz
# The PyTorch views (torch.compile regions, a CUDA memory snapshot): checked when present.
COMPILE_TRACE=$(shared_path traces/compile/kineto/xdit_sd_3.5_profile_trace_rank_0.json.gz) || COMPILE_TRACE=
SNAPSHOT=$(shared_path traces/memory-snapshot/decomfl_opt_train_memory.pickle.gz) || SNAPSHOT=
COMPILE_LOG=$(shared_path traces/compile/tlparse/comp_metrics.log) || COMPILE_LOG=
# The Critical path tab: a real GPU trace with profiler steps.
CP_TRACE=$(shared_path traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz) || CP_TRACE=
status=0
for mode in $MODES; do
  MLPROF_TEST_GPU_TRACE=$GPU_TRACE MLPROF_TEST_COMPILE_TRACE=$COMPILE_TRACE MLPROF_TEST_SNAPSHOT=$SNAPSHOT \
    MLPROF_TEST_COMPILE_LOG=$COMPILE_LOG \
    MLPROF_TEST_CP_TRACE=$CP_TRACE \
    MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/browser_test.mjs" "$MLPROF" "$DATA" \
    "$BUILD/web-screenshots" "$mode" || status=1
done
exit $status
