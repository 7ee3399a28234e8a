#!/bin/bash
# The Timeline tab driven as in Perfetto (tests/web/timeline_test.mjs) on a real GPU trace, in the
# report and in `mlprof serve`: ruler ticks follow zoom, a kernel's args panel (grid, launching op),
# search with highlight and next/previous, an area selection's per-name totals against a Python
# sum over the JSON (tests/web/timeline_area_expect.py), folding and pinning. Screenshots of the
# timelines of an MTIA trace and a CPU trace go to <build>/screenshots/timeline-*.png.
# Skips (exit 0) without chromium or node_modules, 77 without the shared data.
# Usage: web_timeline.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared GPU traces/kineto-gpu/df_index_resolver/df_index_resolver.json.gz
SPECS=()
MTIA=$(shared_path traces/kineto-gpu/mtia_trace_single_rank/mtia_rank_0.json.gz) && SPECS+=("mtia=$MTIA")
CPU=$(shared_path traces/pytorch-cpu-kineto-schema/c_leaky.kineto.json.gz) && SPECS+=("cpu-c_leaky=$CPU")
MODULES=$(shared_path traces/modules/mi300_resnet_act_checkpoint.json.gz) && SPECS+=("modules-mi300=$MODULES")
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/timeline_test.mjs" "$(cd "$(dirname "$MLPROF")" && pwd)/$(basename "$MLPROF")" "$BUILD/screenshots" "$GPU" "${SPECS[@]}"
