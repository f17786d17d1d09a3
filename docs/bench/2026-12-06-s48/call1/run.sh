#!/usr/bin/env bash
# Forty-eighth session, call 1: SPIR-V variants against the tree's shaders (base):
# allw   (attention_qkv_window_regs_coop with TS_QKV_ALLW=1: every head's qkv weights and bias
#         copied once at the start at levels of up to three heads, k and v in two buffers; wider
#         levels copy a head at a time with batched loads),
# batch  (the same with TS_ALLW_HEADS=1: a head at a time everywhere, batched loads),
# cbatch (the MLP and linear shaders' COPY_WEIGHTS with eight loads an invocation issued together).
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 300 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
cd $OUT && mkdir x && tar xzf v.tgz -C x && for f in x/*/check_*.txt; do echo "== $f"; grep -h "pipeline attention_qkv_window_regs_coop\|pipeline mlp_proj_head_regs_w_coop\|pipeline mlp_proj_regs_w_coop" $f | cut -c1-160 | sort -u; done; rm -rf x
