#!/usr/bin/env bash
# (Superseded: docs/bench/2026-12-07-s55/next/ holds these patches for the block files as split
# since b34a376, and one call that runs them; the ones here were made against 491b798.)
# Prepared in the fifty-fourth session, not run: every start of a device machine was refused or
# taken back (the session's 1,800 s of device time went to them). Four sm_90a instruction savings
# for the fused blocks (instruction-savings.patch, against 491b798), each behind a build switch,
# on by default in the patch, each bit for bit the same products and sums as before:
#   TS_ROWS_POLICY: the token rows' cp.async copies (the embedding's rows, the head's first half)
#       take one L2 policy a call (ts_policy_once: evict-first, or unchanged when TS_ROWS_PLAIN)
#       instead of a branch and a createpolicy per copy; ptxas 13.0 then issues the eight copies
#       back to back on shared address registers.
#   TS_EXPAND_ROWS: the expansion into an f16 level below (level 1's last block into level 0's
#       skip) goes through a stage in the weight blob's bytes, free after the MLP: each warp
#       writes its 16 tokens' 4 x lower_c outputs there in f32, then adds them to the skip in
#       16-byte pieces of the children's rows (a quarter of the requests, every sector whole).
#       dec1.1+expand1 is 72 us at 4K against enc1.1's 39 (BENCHMARKS.md, fifty-third session).
#   TS_ORIGIN_WRAP: the window's shifted origin wraps by one conditional subtraction (the grid is
#       whole windows, a shift is under a window) instead of four remainders by the grid's size.
#   TS_VEC_WARPS: each block vector's cp.async copy by one warp (vector k by warp k mod 4)
#       instead of every thread passing over every vector's copy loop.
# The patch also names any of them built off on the start-up line (tessel_kernels::BUILD_SWITCHES)
# and keeps the static checks' test of those words. Offline, scripts/sass_report.sh (ptxas 13.0,
# sm_90a; static counts, so both sides of a run-time switch count): the embedding 1,753 -> 1,578
# instructions, the head 2,568 -> 2,456, registers and stack unchanged; expand_mma_c48 2,129 ->
# 2,338 (the staged path beside the kept pairs), 126 -> 125 registers; the other level-1 and
# level-2 blocks +29 to +115 (each warp's vector loops, unrolled).
#   here:   git apply docs/bench/2026-12-06-s54/next/instruction-savings.patch
#           OFF='-DTS_ROWS_POLICY=0 -DTS_EXPAND_ROWS=0 -DTS_ORIGIN_WRAP=0 -DTS_VEC_WARPS=0'
#           FRAME=1 bash scripts/device_variants.sh build base="$OFF" \
#               pol='-DTS_EXPAND_ROWS=0 -DTS_ORIGIN_WRAP=0 -DTS_VEC_WARPS=0' \
#               exr='-DTS_ROWS_POLICY=0 -DTS_ORIGIN_WRAP=0 -DTS_VEC_WARPS=0' \
#               orig='-DTS_ROWS_POLICY=0 -DTS_EXPAND_ROWS=0 -DTS_VEC_WARPS=0' \
#               vec='-DTS_ROWS_POLICY=0 -DTS_EXPAND_ROWS=0 -DTS_ORIGIN_WRAP=0' all=
#           Six variants with their frame binaries are 26 MB of xz, over the 64 MiB the device
#           tool carries with the tree: repack without the single switches' .tessel files
#           (tar cJf .carrypack/variants.txz --exclude='pol.tessel' ... .carry/variants), and
#           copy .carry/bin/split_gpu and in_vulkan_gpu (scripts/device_build.sh of the patched
#           tree) to .carry/variants/all.split_gpu and all.in_vulkan_gpu for the long sequences.
#   device: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s54/next/run.sh
# c96-fit.patch (against 491b798, not to land as it is) holds the attempt at the plain 96-channel
# block in 128 registers (docs/NATIVE.md, fifty-fourth session): scores made twice, the store
# addresses and the window origin computed again after the MLP: 56 -> 24 bytes of stack at
# -DTS_WIDE_OCC=4, still past the static checks' 16.
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=120 OUT=$OUT/var timeout 500 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -10 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
# The patched defaults (all) through `tessel check`: every backend present against the CPU
# reference (vulkan with the native kernels in its command buffer, hip).
timeout 60 .carry/variants/all.tessel check > "$OUT/check_all.log" 2>&1; echo "check rc $?"
tail -12 "$OUT/check_all.log"
