#!/bin/bash
# Units on the report's generic views (tests/web/units_test.mjs): a memory snapshot, a rank
# directory, a torch.compile trace, a module trace and a GPU trace from the shared data folder, each value read back from the
# page against the CLI's --json. Skips (exit 0) without chromium or node_modules, 77 without the
# shared data.
# Usage: web_units.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared RANKS traces/kineto-gpu/trace_filter
SNAPSHOT=$(shared_path traces/memory-snapshot/decomfl_opt_train_memory.pickle.gz) || SNAPSHOT=
COMPILE=$(shared_path traces/compile/kineto/xdit_sd_3.5_profile_trace_rank_0.json.gz) || COMPILE=
MODULES=$(shared_path traces/modules/mi300_sglang_Qwen3-8B_prefilldecode.json.gz) || MODULES=
GPU=$(shared_path traces/kineto-gpu/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz) || GPU=
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/units_test.mjs" "$MLPROF" "$SNAPSHOT" "$RANKS" "$COMPILE" "$MODULES" "$GPU"
