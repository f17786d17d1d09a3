#!/usr/bin/env bash
# NOT RUN: prepared in the fifty-second session for a later one (its device time was spent).
# The stall profile's store drain at the end of each launch (6-9 % of the samples, fifty-first
# session) against bulk stores of the tensor memory accelerator (bulk-store.patch, -DTS_BULK_STORE):
#   git apply docs/bench/2026-12-06-s52/next/bulk-store.patch docs/bench/2026-12-06-s52/next/wide-occ.patch
#   FRAME=1 bash scripts/device_variants.sh build base= bs1='-DTS_BULK_STORE=1' bs2='-DTS_BULK_STORE=2' \
#       bs3='-DTS_BULK_STORE=3' occ4='-DTS_WIDE_OCC=4'
#   (then `git checkout kernels/`)
# - bs1: the level's stream rows (staged by TS_STREAM_ROWS=2) leave shared memory by one bulk
#   store a row from lanes 0-15, which then wait only for the copies to read the stage;
# - bs2: the head's rows the same way (128 bytes a row and half, evict-first unless
#   TESSEL_HIP_CACHE_HINTS=0), before half 1's token rows load into the same stage;
# - bs3: both. ptxas takes all three for sm_90a without spills; none has run on a GPU.
# - occ4 (wide-occ.patch): the sm_90a blocks at 80 and 96 channels ask for four workgroups per SM
#   (at most 128 registers) instead of one. At 3840x2160 level 2 has 510 windows (30 x 17): at
#   their 153-167 registers three workgroups fit an SM, 396 on the H100's 132 SMs, and a second
#   wave of 114 follows; at four, one wave. Offline ptxas spills 8-48 bytes at 128 registers
#   (merge_mma_c96 8 bytes of stack, mma_c96 40): TESSEL_SPILL_LIMIT below lets the golden test
#   pass them, and the timing says whether the single wave pays for the spills.
# Each variant's golden cases run first (device_variants.sh); `tessel check`, the split tiers and
# the in-Vulkan sequence (EXTRA="split_gpu in_vulkan_gpu") for any that wins.
#   device run: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s52/next/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
export TESSEL_SPILL_LIMIT=64
VARIANT_TIMEOUT=90 OUT=$OUT/var timeout 400 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -6 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
