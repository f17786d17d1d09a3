#!/usr/bin/env bash
# Fifty-first session, call 5: the landed build with the staged vectors on by default
# (TS_VEC_SHARED=1) through the checks the kernel change touches that calls 3 and 4 did not run:
# the split frame's three tiers over 1,000 frames, the kernels inside Vulkan over 300 frames
# against the shaders, the golden cases (standalone and split).
#   device run: tar xJf .carrypack/carry.txz && bash docs/bench/2026-12-06-s51/call5/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
timeout 60 $B/network_gpu --test-threads=1 --nocapture native_network_matches > "$OUT/golden.log" 2>&1; echo "golden rc=$?"; grep -E 'worst head|test result' "$OUT/golden.log"
timeout 90 $B/split_gpu --test-threads=1 --nocapture > "$OUT/split.log" 2>&1; echo "split rc=$?"; grep -E '1,000 frames|worst|test result' "$OUT/split.log" | head -12
timeout 90 $B/in_vulkan_gpu --test-threads=1 --nocapture > "$OUT/in_vulkan.log" 2>&1; echo "in_vulkan rc=$?"; grep -E '300 frames|native in Vulkan|worst|test result' "$OUT/in_vulkan.log" | head -12
