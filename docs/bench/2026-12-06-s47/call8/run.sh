#!/usr/bin/env bash
# Forty-seventh session, call 8: the last block's MLP with the head, its pixel embeddings' token
# tiles loaded ahead (SPIR-V variants of mlp_proj_head_regs_w_coop from call8/mlp_regs_coop_prefetch.comp):
# unroll (the head loop unrolled, loads where they were), pf1 (all eight tiles before head_norm),
# pf2 (all eight before the MLP's hidden loop); three rounds against 4944057 (base).
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 240 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline" 
cd $OUT && mkdir x && tar xzf v.tgz -C x && grep -h "pipeline mlp_proj_head_regs_w_coop \[32" x/*/check_*.txt x/check_*.txt 2>/dev/null | cut -c1-160 | sort | uniq -c; rm -rf x
