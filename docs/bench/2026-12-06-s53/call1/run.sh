#!/usr/bin/env bash
# Fifty-third session, call 1: the fifty-second session's prepared experiments (its next/) and the
# level-0 ends' occupancy against the landed kernels, two alternating rounds, the whole Vulkan
# frame at 4K beside each (FRAME=1); each launch's waves in the per-launch table (first GPU run).
#   here:   git apply docs/bench/2026-12-06-s52/next/bulk-store.patch (one hunk by hand after
#           c37bb90's stream_stage_stride) docs/bench/2026-12-06-s52/next/wide-occ.patch, plus
#           TS_ENDS_OCC (ends-occ.patch here);
#           FRAME=1 bash scripts/device_variants.sh build base= bs3='-DTS_BULK_STORE=3' \
#               occ4='-DTS_WIDE_OCC=4' ends6='-DTS_ENDS_OCC=6' ends7='-DTS_ENDS_OCC=7'
#   device: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s53/call1/run.sh
# occ4 spills 8-48 bytes and ends7's head 72 in offline ptxas: the spill limit is raised so that
# their timings come back.
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
export TESSEL_SPILL_LIMIT=128
VARIANT_TIMEOUT=120 OUT=$OUT/var timeout 540 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -8 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
