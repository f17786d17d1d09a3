#!/usr/bin/env bash
# Forty-eighth session, call 2: SPIR-V variants of attention_qkv_window_regs_coop against the
# tree's shaders (base), all from shaders/attention_coop.comp with TS_QKV_ALLW=1:
# allw       every head's qkv weights and bias loaded at the start (levels of up to three heads;
#            wider levels a head at a time), k and v in two buffers,
# batch      a head at a time everywhere (TS_ALLW_HEADS=1), each head's loads issued together,
# ahead      batch, the next head's loads issued before this head's products (TS_QKV_AHEAD=1),
# allw_ahead allw, and ahead at the wider levels.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 300 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
cd $OUT && mkdir x && tar xzf v.tgz -C x && for f in x/*/check_*.txt; do echo "== $f"; grep -h "pipeline attention_qkv_window_regs_coop" $f | cut -c1-150 | sort -u; done; rm -rf x
