#!/usr/bin/env bash
# Forty-eighth session, call 5: SPIR-V variants of mlp_regs_wh_coop and mlp_proj_regs_wh_coop
# (level 2's MLPs: the weights in shared memory a half of the hidden at a time) against d2ff25d
# (base), all from shaders/mlp_regs_coop.comp's copy_half:
# hb4   each half's fc1 rows and fc2 columns copied four items of each an invocation at a time,
#       the loads issued before the stores (TS_HALF_BATCH=4),
# hb8   eight at a time (TS_HALF_BATCH=8),
# hb4e  hb4, and the first half's fc2 columns copied at the start, beside the projection's
#       weights, before the stream rows are loaded (TS_HALF_EARLY=1).
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 300 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
cd $OUT && mkdir x && tar xzf v.tgz -C x && for f in x/*/check_*.txt; do echo "== $f"; grep -h "pipeline mlp_.*wh_coop" $f | cut -c1-150 | sort -u; done; rm -rf x
