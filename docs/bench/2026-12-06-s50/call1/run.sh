#!/usr/bin/env bash
# Fiftieth session, call 1.
# (a) The native network's weights in a persisting L2 window across frames
#     (TESSEL_HIP_L2_WEIGHTS=1, Stream::keep_in_l2) against none, alternated: hip-net's per-launch
#     profile and the network as graphs (network_gpu native_network_gpu_time: tessel-v12 and the
#     fast preset), then the split frame's network time (`tessel bench --network hip`, 4K).
# (b) The shaders' weights touched ahead (TESSEL_VK_TOUCH=1, the forty-ninth session's
#     touch.patch, applied): an env-only variant against base in alternated rounds at 4K.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2; do
  for l2 in 0 1; do
    echo "== native round $r l2=$l2"
    TESSEL_HIP_L2_WEIGHTS=$l2 timeout 120 $B/network_gpu --test-threads=1 --nocapture native_network_gpu_time 2>&1 | grep -E "^  |as graphs|ms at|L2|^tessel" | grep -v "registers" | head -40
  done
done
for r in 1 2; do
  for l2 in 0 1; do
    echo "== split frame round $r l2=$l2"
    TESSEL_HIP_L2_WEIGHTS=$l2 timeout 90 $B/tessel bench --network hip --size 3840x2160 --ratio 2 --frames 200 2>&1 | grep -E "network|frame|L2" | head -12
  done
done
export ENV_touch='TESSEL_VK_TOUCH=1'
OUT=$OUT/v PACK=1 timeout 200 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^tessel: shader" | grep -v "^pipeline"
# Then every GPU check on this tree (the new settings off, as by default).
OUT=$OUT/dc PACK=1 timeout 420 bash scripts/device_check.sh quick > /dev/null 2>&1; tail -40 $OUT/dc/summary.txt
