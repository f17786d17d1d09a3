#!/usr/bin/env bash
# Forty-eighth session, call 7: SPIR-V variants of linear_direct_coop.comp's four shaders
# (linear_direct_coop, linear_direct_w_coop, linear_regs_coop, linear_regs_w_coop: the embedding,
# the merges and expansions) against 8354c3e (base):
# ku   the k loop over input tiles unrolled where A comes from the buffer (TS_K_UNROLL=1),
# kub  ku, and the bias's 16 rows stored from loads issued first (TS_BIAS_BATCH=8).
# Then scripts/device_check.sh quick on 8354c3e.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 240 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
(cd $OUT && mkdir x && tar xzf v.tgz -C x && for f in x/*/check_*.txt; do echo "== $f"; grep -h "pipeline linear_" $f | cut -c1-120 | sort -u; done; rm -rf x)
# Then the whole check on 8354c3e (the carried binaries): scripts/device_check.sh quick.
OUT=$OUT/dc PACK=1 timeout 480 bash scripts/device_check.sh quick > /dev/null 2>&1; echo "device_check quick: rc $?"
tail -3 $OUT/dc/summary.txt
