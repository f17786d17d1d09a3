#!/usr/bin/env bash
# Forty-ninth session, call 2: call 1 found every dispatch slower cold than run again at once
# (the shaders' network 0.958 ms, twice 1.815: about 0.10 ms of cold runs). Two SPIR-V variants
# that shrink the code a cold run must fetch, against the committed shaders (base):
# nounroll  the attention's loop over heads not unrolled ([[dont_unroll]]);
# mlpnu     the register MLPs' loop over hidden chunks not unrolled.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 200 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
