#!/usr/bin/env bash
# Forty-ninth session, call 1: is a layer slower for being the first of its kind in a while?
# TESSEL_PROFILE_TWICE=1 records each profiled dispatch (shaders) or launch (native network) twice
# in a row inside its timestamps: twice the plain time less the doubled time is the cold run's
# extra. Shaders: base against `twice` (an env-only variant) in alternated rounds at 4K; the
# native network: hip-net's per-launch profile plain and twice, alternated.
# (Cut to one round of base and twice, the device time being nearly spent by refused starts.)
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1; do
  for tw in 0 1; do
    echo "== native round $r twice=$tw"
    TESSEL_PROFILE_TWICE=$tw timeout 120 $B/network_gpu --test-threads=1 --nocapture native_network_gpu_time 2>&1 | grep -E "^  |as graphs|ms at" | head -40
  done
done
ENV_twice='TESSEL_PROFILE_TWICE=1' OUT=$OUT/v PACK=1 TESSEL_PIPELINE_STATS=1 timeout 150 bash scripts/shader_variants.sh run 1 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
# The pipelines model load builds on the cooperative-matrix path (this tree builds each linear
# layer's one variant: no scalar `linear` pipelines).
echo "== pipelines built (TESSEL_PIPELINE_STATS=1, tessel info --network vulkan)"
TESSEL_PIPELINE_STATS=1 TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size 1280x720 --ratio 2 --frames 3 2>&1 | grep "^pipeline " | awk '{print $2}' | sort | uniq -c
