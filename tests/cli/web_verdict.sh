#!/bin/bash
# The report Overview's verdict agrees with the numbers on the same page (tests/web/verdict_test.mjs)
# on three shared traces: ProfilerSteps (ResNet with activation checkpointing on MI300X), SGLang
# iterations (one decode batch), and a trace without steps (the replay's one window).
# Skips (exit 0) without chromium or node_modules, 77 without the shared data.
# Usage: web_verdict.sh MLPROF DATA_DIR
set -u
MLPROF=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/browser_env.sh"
require_browser
source "$(dirname "$0")/shared_data.sh"
require_shared RESNET traces/modules/mi300_resnet_act_checkpoint.json.gz
SGLANG=$(shared_path traces/serving/sglang_decode/sglang_Qwen3-8B_decode.json.gz) || SGLANG=
NOSTEPS=$(shared_path traces/kineto-gpu/trace_file_list/inference_rank_1.json.gz) || NOSTEPS=
MLPROF_NODE_MODULES=$NODE_MODULES node "$HERE/web/verdict_test.mjs" "$MLPROF" "$RESNET" $SGLANG $NOSTEPS
