#!/usr/bin/env bash
# Fifty-ninth session, call 1: the 10,000-frame soaks of issue 12 on the landed build (the
# carried binaries are a1c63ce's, whose kernels are 940fe32's byte for byte; only a doc comment
# differs after it): `SOAKS="hip native" scripts/device_check.sh soak`, the split frame through
# --network hip and the native kernels inside the Vulkan command buffer, 10,000 frames each at
# 3840x2160 (host RSS checked by `tessel soak`, device memory sampled every 2 s).
#   here:   bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s59/call1/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
SOAKS=${SOAKS:-hip native} OUT=$OUT/soak PACK=1 timeout ${SOAK_TIMEOUT:-540} bash scripts/device_check.sh soak > /dev/null 2>&1
echo "device_check soak rc $?"
grep -E "^===|passed|FAILED|RSS|device memory|non-finite|resident" "$OUT/soak/summary.txt" | cut -c1-300 | head -30
