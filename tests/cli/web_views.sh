#!/bin/bash
# The report's HTA and TensorBoard-plugin views, clicked through in chromium
# (tests/web/views_test.mjs): the GPU tab's idle breakdown against `mlprof gpu --json`, with the
# HTA toggle against --hta-compatible and HTA's published numbers; operators grouped by input
# shape against a Python sum over the trace; every tab of several kinds of input scanned for raw
# field names, -1, NaN and undefined. MLPROF_SCREENSHOTS=DIR keeps a screenshot of each tab.
# Skips (exit 0) without chromium or node_modules, 77 without the shared data.
# Usage: web_views.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared GPU traces/kineto-gpu/trace_diff/control/control.json.gz
REF=$(shared_path traces/reference/trace_diff_control.json) || REF=
SHAPES=$(shared_path traces/pytorch-cpu-kineto-schema/b_cnn.kineto.json.gz) || SHAPES=
SCAN=()
for rel in kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz \
  modules/mi300_sglang_Qwen3-8B_prefilldecode.json.gz serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz \
  rocm/rpd/matmul_result.json pytorch-cpu-kineto-schema/c_leaky.kineto.json.gz \
  memory-snapshot/decomfl_opt_train_memory.pickle.gz compile/kineto/xdit_sd_3.5_profile_trace_rank_0.json.gz; do
  p=$(shared_path "traces/$rel") && SCAN+=("$p")
done
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/views_test.mjs" "$MLPROF" "$GPU" "$REF" "$SHAPES" "${SCAN[@]}"
