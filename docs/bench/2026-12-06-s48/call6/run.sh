#!/usr/bin/env bash
# Forty-eighth session, call 6: a block not followed by the head in one dispatch a window
# (block_regs_coop: attention_coop.comp with TS_BLOCK), by role (base: level 0's first block,
# every head's qkv weights beside the MLP's), nowhere (br0: TESSEL_VK_BLOCK_REGS=0) and wherever it
# fits (br2: level 1's blocks too, a head's weights at a time); level 2's MLP copying its weight
# halves four items at a time (the tree's mlp_regs_coop.comp, in every variant). Three rounds.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=$OUT/logs; mkdir -p $O
OUT=$O/v ENV_br0='TESSEL_VK_BLOCK_REGS=0' ENV_br2='TESSEL_VK_BLOCK_REGS=2' TESSEL_PIPELINE_STATS=1 \
  timeout 240 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
grep -h "pipeline block_regs_coop\|pipeline mlp_proj_regs_wh" $O/v/check_*.txt | sort -u | cut -c1-200
grep -h "^network: shaders" $O/v/check_base.txt | head -1 | tr ',' '\n' | grep -i "block"
cd $OUT && tar czf logs.tgz logs && rm -rf logs
