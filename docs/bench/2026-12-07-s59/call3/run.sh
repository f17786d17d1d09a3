#!/usr/bin/env bash
# Fifty-ninth session, call 3.
# 1. var: three builds of the kernels, three alternated rounds of scripts/device_variants.sh (the
#    golden cases' head against the CPU reference, the network as graphs and per launch):
#    base (this session's tree: the kernels of 940fe32), e6 (-DTS_EMBED_OCC=6: the embedding
#    kernels ask for six workgroups an SM, 80 registers at 32 channels instead of 85, 12 bytes
#    spilled offline), w4 (-DTS_WIDE_OCC=4: the plain 96-channel block, mid.1, asks for four,
#    128 registers and 56 bytes spilled offline; TESSEL_SPILL_LIMIT=64 lets the test time it).
# 2. check: `scripts/device_check.sh quick` on the carried build (this session's tree, whose
#    kernels are 940fe32's): the run-time switches' steps, TESSEL_HIP_ORDER=0 among them.
#   here:   XZ_OPT='-9 -T2' bash scripts/device_variants.sh build base= e6='-DTS_EMBED_OCC=6' w4='-DTS_WIDE_OCC=4'
#           bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s59/call3/run.sh [var|check|both]
set -uo pipefail
what=${1:-both}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" != check ]; then
  tar xJf .carrypack/variants.txz || exit 1
  TESSEL_SPILL_LIMIT=64 VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-200} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
  echo "variants rc $?"; grep -E "FAILED|hung" "$OUT/var.log" | head; tail -4 "$OUT/var.log"
  for n in base e6 w4; do echo "$n: $(grep -hE '^  (embed|mid\.1)' "$OUT"/var/time_${n}_*.log | awk '{print $1, $3}' | paste -sd' ')"; done
  grep -hE 'tessel_block_(embed_mma_c32|mma_c96):' "$OUT"/var/golden_*.log | sort -u
  (cd "$OUT" && tar czf var.tgz var && rm -rf var)
fi
[ "$what" = var ] && exit 0
OUT=$OUT/check PACK=1 timeout ${CHECK_TIMEOUT:-340} bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
grep -E "all passed|FAIL|ms as graphs|index order|worst" "$OUT/check/summary.txt" | cut -c1-250 | head -24
