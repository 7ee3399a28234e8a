#!/bin/bash
# The report Overview's "Iterations by phase" table with --step-annotation, in chromium
# (tests/web/serving_phases_test.mjs): each cell against the planted truths of a generated
# multi-iteration vLLM trace (tests/py/serving_steps_traces.py). No shared data needed.
# Skips (exit 0) without chromium or node_modules.
# Usage: web_serving_phases.sh MLPROF DATA_DIR
set -eu
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 "$HERE/py/serving_steps_traces.py" "$TMP/serving.json" vllm > "$TMP/truths.json"
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/serving_phases_test.mjs" "$MLPROF" "$TMP/serving.json" \
  "$TMP/truths.json" '^execute_\d+_context_0\(.*_generation_(16|32)\('
