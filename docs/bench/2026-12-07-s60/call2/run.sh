#!/usr/bin/env bash
# Sixtieth session, call 2: the landed build (the expansions into a level of 16 channels or fewer
# stage their skip in shared memory: TS_EXPAND_STAGE, marked by hip-net's plan, TESSEL_HIP_EXPAND_STAGE=0
# the kill switch).
# 1. check: `scripts/device_check.sh quick` on the carried build (every GPU check and benchmark
#    but the soaks; its new step runs the kill switch).
# 2. var: if the call has time left, the landed build against its own kill switch in alternated
#    rounds (scripts/device_variants.sh link: base=env:TESSEL_HIP_EXPAND_STAGE=0, new=).
#   here:   bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s60/call2/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
start=$(date +%s)
tar xJf .carrypack/carry.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
OUT=$OUT/check PACK=1 timeout ${CHECK_TIMEOUT:-420} bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
grep -E "all passed|FAIL|ms as graphs|worst|skips|1,000 frames|300 frames|back to back" "$OUT/check/summary.txt" | cut -c1-260 | head -40
left=$(( ${CALL_BUDGET:-540} - ($(date +%s) - start) ))
echo "seconds left for the variants: $left"
if [ "$left" -gt 60 ]; then
  bash scripts/device_variants.sh link base=env:TESSEL_HIP_EXPAND_STAGE=0 new= > /dev/null
  VARIANT_TIMEOUT=60 OUT=$OUT/var timeout $((left - 10)) bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
  echo "variants rc $?"; grep -E "FAILED|hung" "$OUT/var.log" | head; tail -3 "$OUT/var.log"
  for n in base new; do echo "$n: $(grep -hE '^  (expand2\+dec1.0\+expand1|dec1.1\+expand1)' "$OUT"/var/time_${n}_*.log | awk '{print $1, $3}' | paste -sd' ')"; done
  (cd "$OUT" && tar czf var.tgz var && rm -rf var)
fi
