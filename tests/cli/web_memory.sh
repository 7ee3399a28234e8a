#!/bin/bash
# The report's memory view in chromium (tests/web/memory_range_test.mjs): a drag across the memory
# curve lists every allocation allocated or freed in the range (freed ones too), equal to a Python
# pairing of the trace's [memory] events (tests/web/memory_range_expect.py).
# Skips (exit 0) without chromium or node_modules, 77 without the shared data.
# Usage: web_memory.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared TRACE traces/pytorch-cpu-kineto-schema/c_leaky.kineto.json.gz
MLPROF_CHROMIUM=$CHROMIUM MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/memory_range_test.mjs" "$MLPROF" "$TRACE"
