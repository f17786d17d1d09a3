#!/usr/bin/env bash
# Fifty-second session, call 1: the fifty-first session's prepared experiments (next/) against the
# landed kernels, two alternating rounds, the whole Vulkan frame at 4K beside each (FRAME=1).
#   here:   git apply docs/bench/2026-12-06-s51/next/stream-rows.patch docs/bench/2026-12-06-s51/next/bulk.patch
#           FRAME=1 bash scripts/device_variants.sh build base= bulk='-DTS_BULK=1' rows='-DTS_STREAM_ROWS=3' \
#               rin='-DTS_STREAM_ROWS=1' hh2='-DTS_HEAD_HALVES=2'
#   device: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s52/call1/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=120 OUT=$OUT/var timeout 560 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -8 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
