#!/usr/bin/env bash
# Forty-seventh session, call 6: with the streams in f16, every layer's tile again: rows a
# workgroup (TESSEL_VK_COOP_ROWS=32|128 everywhere) and output chunks (TESSEL_VK_COOP_COLS=32|16
# everywhere) against the per-layer defaults (base), two rounds of the per-dispatch profile;
# each layer's line read on its own.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 ENV_r32='TESSEL_VK_COOP_ROWS=32' ENV_r128='TESSEL_VK_COOP_ROWS=128' ENV_c32='TESSEL_VK_COOP_COLS=32' ENV_c16='TESSEL_VK_COOP_COLS=16' TESSEL_PIPELINE_STATS=1 \
  timeout 300 bash scripts/shader_variants.sh run 2 2>&1 | grep -v "^pipeline\|^tessel: shader"
