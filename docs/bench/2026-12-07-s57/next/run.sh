#!/usr/bin/env bash
# Fifty-seventh session (run as call 1 with ONLY="landed wave6 both6"; BENCHMARKS.md). The switches
# below are no longer in the tree: apply docs/bench/2026-12-07-s57/wave-ahead.patch to build them.
# The landed build (the fifty-sixth session's three instruction savings;
# never timed as a whole) against three variants of it, in alternated rounds:
#   wave6, wave10: the network's two ends ask L2 for the token rows of the window 6 or 10
#     workgroups an SM later in launch order (-DTS_WAVE_AHEAD=N, kernels/include/tessel_block_ends.h),
#     about one or two waves ahead at the ends' five or six workgroups an SM;
#   both6, both10: the same, and the merges and expansions ask for the level below's lines of the
#     window 4 or 8 workgroups an SM later (-DTS_WAVE_LOWER=N; they hold four an SM);
#   wide4: the plain 96-channel block at four workgroups an SM (-DTS_WIDE_OCC=4; 48 bytes of
#     stack at 128 registers, past the static checks' 16: TESSEL_SPILL_LIMIT=64 lets it time).
# 1. var: the network alone and the whole frame inside Vulkan, three rounds (about 450 s).
# 2. check: `scripts/device_check.sh quick` on the landed build (about 360 s).
#   here:   bash scripts/device_build.sh                    # landed: .carry/bin, .carrypack/carry.txz
#           FRAME=1 bash scripts/device_variants.sh build wave6='-DTS_WAVE_AHEAD=6' \
#               wave10='-DTS_WAVE_AHEAD=10' both6='-DTS_WAVE_AHEAD=6 -DTS_WAVE_LOWER=4' \
#               both10='-DTS_WAVE_AHEAD=10 -DTS_WAVE_LOWER=8' wide4='-DTS_WIDE_OCC=4'
#           echo 'landed: (default flags)' >> .carry/variants/VARIANTS
#           XZ_OPT='-9 -T1' tar cJf .carrypack/variants.txz .carry/variants   # 4 MB: xz -9 shares the binaries' bytes
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s57/next/run.sh [var|check|both]
set -uo pipefail
what=${1:-both}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz && tar xJf .carrypack/variants.txz || exit 1
ln -sf ../bin/network_gpu .carry/variants/landed
ln -sf ../bin/tessel .carry/variants/landed.tessel
# ONLY="landed wave6 ...": time only those variants (a shorter call).
if [ -n "${ONLY:-}" ]; then
  for n in $ONLY; do grep "^$n:" .carry/variants/VARIANTS; done > /tmp/VARIANTS && mv /tmp/VARIANTS .carry/variants/VARIANTS
fi
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" != check ]; then
  TESSEL_SPILL_LIMIT=64 VARIANT_TIMEOUT=120 OUT=$OUT/var timeout ${VAR_TIMEOUT:-480} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
  echo "variants rc $?"; tail -6 "$OUT/var.log"
  (cd "$OUT" && tar czf var.tgz var && rm -rf var)
fi
[ "$what" = var ] && exit 0
OUT=$OUT/check PACK=1 timeout ${CHECK_TIMEOUT:-365} bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
grep -E "all passed|FAIL|ms as graphs" "$OUT/check/summary.txt" | head -20
