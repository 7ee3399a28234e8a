#!/bin/bash
# The report as a person sees it (tests/web/report_layout_test.mjs): reports of three real traces
# from the shared data folder (a GPU trace, a CPU training trace, a rank directory) and of 80
# ranks generated from the real rank, a screenshot of every tab in <build>/screenshots/, layout
# facts checked. Skips (exit 0) without chromium or node_modules, 77 without the shared data.
# Usage: web_layout.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared GPU traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz
require_shared CPU traces/pytorch-cpu-kineto-schema/c_leaky.kineto.json.gz
require_shared RANKS traces/kineto-gpu/trace_filter
SPECS=("gpu-df_index_resolver=$GPU" "cpu-c_leaky=$CPU" "ranks-trace_filter=$RANKS")
# nn.Module annotations (the Modules tab): optional
MODULES=$(shared_path traces/modules/mi300_resnet_act_checkpoint.json.gz) && SPECS+=("modules-mi300_resnet=$MODULES")
# A rank directory past one bar per rank (80 ranks generated from the real rank, rank 17 late):
# the Ranks tab draws the distribution and the worst ranks.
GEN=$(mktemp -d)
trap 'rm -rf "$GEN"' EXIT
python3 "$HERE/../bench/gen_ranks.py" "$RANKS/sampled_rank-0.json.gz" "$GEN/ranks80" -n 80 \
  --delay-rank 17 --delay-us 2000 --gzip >/dev/null && SPECS+=("ranks-80=$GEN/ranks80")
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/report_layout_test.mjs" "$MLPROF" "$BUILD/screenshots" "${SPECS[@]}"
