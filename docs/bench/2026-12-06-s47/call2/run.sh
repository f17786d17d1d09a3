#!/usr/bin/env bash
# Forty-seventh session, call 2: the per-dispatch profile of the f16 streams (base, 7cbfa93)
# against f32 (s32: TESSEL_VK_STREAM16=0) and against linear_coop.comp with f16 outputs eight at
# a time (epi8: -DTS_EPI8=1; the expansions and the merge into level 2), three rounds.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 ENV_s32='TESSEL_VK_STREAM16=0' TESSEL_PIPELINE_STATS=1 \
  timeout 300 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
