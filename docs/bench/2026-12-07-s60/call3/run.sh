#!/usr/bin/env bash
# Sixtieth session, call 3: issue 12's 10,000-frame soaks at 3840x2160 on the landed build (the
# carried binaries of call 2: d1f9c36's tree): the split frame (`--network hip`) and the native
# kernels inside the Vulkan command buffer, host RSS and device memory sampled.
#   here:   bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s60/call3/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
SOAKS="hip native" OUT=$OUT/soak PACK=1 timeout ${SOAK_TIMEOUT:-540} bash scripts/device_check.sh soak > /dev/null 2>&1
echo "device_check soak rc $?"
grep -E "all passed|FAIL|RSS|device memory|non-finite|===" "$OUT/soak/summary.txt" | cut -c1-260 | head -30
