#!/usr/bin/env bash
# Fifty-third session, call 3: the landed build (scripts/device_build.sh, TS_MERGE_OCC=4 on sm_90a)
# through the native checks its kernel change touches, in the device time left (the whole quick
# check takes 310-350 s): golden cases and GPU time, the split frame's three tiers over 1,000
# frames, the kernels inside Vulkan over 300 frames, tessel check, the latency comparison at 4K.
#   device: tar xJf .carrypack/carry.txz && bash docs/bench/2026-12-06-s53/call3/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
s() { echo "=== $* ($(date -u +%H:%M:%S))"; }
{
s network_gpu; timeout 120 $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
s split_gpu; timeout 120 $B/split_gpu --test-threads=1 --nocapture
s in_vulkan_gpu; timeout 90 $B/in_vulkan_gpu --test-threads=1 --nocapture
s tessel check; timeout 90 $B/tessel check
s bench; timeout 90 $B/tessel bench --network vulkan,hip --size 3840x2160 --ratio 2 --frames 200
} > "$OUT/log.txt" 2>&1
grep -E "^===|test result|worst|native network 3840|the network alone|back to back|^(vulkan|hip|none) +[0-9]|FAILED|panicked" "$OUT/log.txt"
