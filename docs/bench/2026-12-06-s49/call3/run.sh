#!/usr/bin/env bash
# Forty-ninth session, call 3: the merge into level 2 (0.043 ms at 4K, 19 MB: the least efficient
# dispatch) under other tiles, by the settings that reach it (each also changes other layers;
# only merge2's line is read):
# d2   TESSEL_VK_COOP_DIRECT=2 (linear_direct_coop.comp, its weights from the buffer);
# d2w  and TESSEL_VK_COOP_LINEAR_W=2 (its weights in shared memory where they fit);
# r32  TESSEL_VK_COOP_ROWS=32 (32 tokens a workgroup instead of 64);
# c64  TESSEL_VK_COOP_COLS=64 (chunks of 64 outputs instead of 32).
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export ENV_d2='TESSEL_VK_COOP_DIRECT=2' ENV_d2w='TESSEL_VK_COOP_DIRECT=2 TESSEL_VK_COOP_LINEAR_W=2' ENV_r32='TESSEL_VK_COOP_ROWS=32' ENV_c64='TESSEL_VK_COOP_COLS=64'
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 150 bash scripts/shader_variants.sh run 2 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
