#!/usr/bin/env bash
# Fifty-eighth session, call 1. The build carried is this session's tree with every other fused
# launch taking its windows in reverse order (kernels/include/tessel_block.h's TS_REVERSE, the
# flag hip-net's plan sets: plan::order_choice), on by default.
# 1. var: that build (`landed`) against the same binaries with the order switched off
#    (`index`: TESSEL_HIP_ORDER=0, every launch in index order, the build before this change in
#    all but one test of the flag), four alternated rounds of scripts/device_variants.sh: the
#    network as graphs, per launch, and the whole frame inside Vulkan (about 140 s).
# 2. check: `scripts/device_check.sh quick` on it (about 360 s).
#   here:   bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s58/call1/run.sh [var|check|both]
set -uo pipefail
what=${1:-both}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
# Both variants run the carried binaries; only the environment differs.
mkdir -p .carry/variants
for n in landed index; do
  ln -sf ../bin/network_gpu .carry/variants/$n
  ln -sf ../bin/tessel .carry/variants/$n.tessel
done
printf 'landed: (default flags)\nindex: env:TESSEL_HIP_ORDER=0\n' > .carry/variants/VARIANTS
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" != check ]; then
  VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-200} bash scripts/device_variants.sh run ${ROUNDS:-4} > "$OUT/var.log" 2>&1
  echo "variants rc $?"; tail -4 "$OUT/var.log"
  (cd "$OUT" && tar czf var.tgz var && rm -rf var)
fi
[ "$what" = var ] && exit 0
OUT=$OUT/check PACK=1 timeout ${CHECK_TIMEOUT:-370} bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
grep -E "all passed|FAIL|ms as graphs|alternating|index order" "$OUT/check/summary.txt" | head -20
