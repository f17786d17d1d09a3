#!/usr/bin/env bash
# NOT RUN: the fiftieth session's device time ran out (refused starts) before it. Prepared for a
# later session: build the carry with scripts/device_build.sh (packed as .carrypack/carry.txz), and
# the `early` variant with `git apply early.patch` then
# `bash scripts/device_variants.sh build base= early='-DTS_WPREFETCH=2'` (packed as variants.txz).
# Fiftieth session, call 4: the landed tree (bf22807) (the weight prefetch on by default) through the native
# checks that its kernel change touches, with the device time left (a full quick check does not
# fit): the golden cases and the network's time with the prefetch and without it (the kill
# switch), the split frame's three tiers over 1,000 frames each, the kernels inside the Vulkan
# command buffer against the shaders, `tessel check` (every backend), and the latency comparison.
set -uo pipefail
source scripts/device_env.sh
tar xJf .carrypack/carry.txz
OUT=${OUT:-out/device}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { "$@" || echo "FAILED (exit $?): $*"; }
echo "== network_gpu (default: prefetch on)"
run timeout 60 $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes 2>&1 | grep -E "prefetch|worst head|as graphs|test result"
echo "== network_gpu, TESSEL_HIP_PREFETCH=0"
TESSEL_HIP_PREFETCH=0 run timeout 60 $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes 2>&1 | grep -E "prefetch|worst head|as graphs|test result"
echo "== split_gpu"
run timeout 120 $B/split_gpu --test-threads=1 --nocapture 2>&1 | grep -E "1,000 frames|worst|test result" | head -12
echo "== in_vulkan_gpu"
run timeout 90 $B/in_vulkan_gpu --test-threads=1 --nocapture 2>&1 | grep -E "300 frames|worst|ms|test result" | head -12
echo "== tessel check"
run timeout 90 $B/tessel check 2>&1 | tail -5
echo "== tessel bench --network vulkan,hip at 4K"
run timeout 90 $B/tessel bench --network vulkan,hip --size 3840x2160 --ratio 2 --frames 200 2>&1 | grep -E "^tessel: network|^vulkan |^hip |network alone|back to back" | cut -c1-400
# Then, with what is left: the prefetch issued by each launch's first workgroups instead of its
# last (-DTS_WPREFETCH=2, `early`) against the landed build (`base`), alternated.
tar xJf .carrypack/variants.txz
OUT=$OUT/var timeout 100 bash scripts/device_variants.sh run 2 > $OUT/var.log 2>&1
tail -4 $OUT/var.log
(cd $OUT && tar czf var.tgz var && rm -rf var)
