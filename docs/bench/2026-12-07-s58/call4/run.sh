#!/usr/bin/env bash
# Fifty-eighth session, call 4: a block's stream rows loaded before its copies (TS_LOAD_FIRST, on
# by default in this tree) against the same tree built with -DTS_LOAD_FIRST=0 (`nofirst`, whose
# PTX is 9071511's byte for byte: call 1's build), four alternated rounds of
# scripts/device_variants.sh (call 3 saw 0.498 against 0.505 ms as graphs, the same per-launch sums
# and frame); then `scripts/device_check.sh quick` on this tree's build.
#   here:   bash scripts/device_build.sh
#           XZ_OPT='-9 -T2' FRAME=1 bash scripts/device_variants.sh build landed= nofirst='-DTS_LOAD_FIRST=0'
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s58/call4/run.sh [var|check|both]
set -uo pipefail
what=${1:-both}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz && tar xJf .carrypack/variants.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" != check ]; then
  VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-180} bash scripts/device_variants.sh run ${ROUNDS:-4} > "$OUT/var.log" 2>&1
  echo "variants rc $?"; tail -3 "$OUT/var.log"
  (cd "$OUT" && tar czf var.tgz var && rm -rf var)
fi
[ "$what" = var ] && exit 0
OUT=$OUT/check PACK=1 timeout ${CHECK_TIMEOUT:-370} bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
grep -E "all passed|FAIL|worst|3840x2160 \(tessel-v12\): 8|network alone" "$OUT/check/summary.txt" | head -24
