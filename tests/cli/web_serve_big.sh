#!/bin/bash
# The dashboard on a big trace (issue 33, tests/web/serve_big_test.mjs): loading progress (bytes
# and events read, ETA) shown while the trace parses and gone once the Overview is drawn, and a
# Timeline drawn from level-of-detail tiles that holds a small part of the slices and fetches
# exact slices when zoomed in. The trace comes from bench/gen_big_trace.py (400k events, ~75 MB).
# Skips (exit 0) without chromium or node_modules.
# Usage: web_serve_big.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/serve_big_test.mjs" "$(cd "$(dirname "$MLPROF")" && pwd)/$(basename "$MLPROF")" "$HERE/../bench/gen_big_trace.py"
