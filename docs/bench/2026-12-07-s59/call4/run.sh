#!/usr/bin/env bash
# Fifty-ninth session, call 4. The plain block at 80 and 96 channels asks for four workgroups an
# SM on sm_90a (kernels/include/tessel_block_bounds.h's TS_PLAIN_OCC, new, 4 by default; its end
# remakes the rows' addresses from the token indices: 32 bytes spilled offline, not 56).
# 1. var: `new` (this session's tree) against `base` (the same tree built with -DTS_PLAIN_OCC=1,
#    the former bound), three alternated rounds of scripts/device_variants.sh (golden cases,
#    the network as graphs and per launch; the frame inside Vulkan, whose sm_90 object is the
#    same in both), and the split frame's long sequences (split_gpu) of each.
# 2. split: `tessel bench --network hip` at 3840x2160, 200 frames, base and new alternated twice.
# 3. check: `scripts/device_check.sh hip` on the carried build (this session's tree): every
#    run-time switch of the native network against the CPU reference, the split frame, the bench.
#   here:   XZ_OPT='-9 -T2' EXTRA=split_gpu FRAME=1 bash scripts/device_variants.sh build base='-DTS_PLAIN_OCC=1' new=
#           bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s59/call4/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
tar xJf .carrypack/variants.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-200} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
echo "variants rc $?"; grep -E "FAILED|hung" "$OUT/var.log" | head; tail -3 "$OUT/var.log"
for n in base new; do echo "$n: $(grep -hE '^  (merge2|mid\.1)' "$OUT"/var/time_${n}_*.log | awk '{print $1, $3}' | paste -sd' ')"; done
grep -hE 'tessel_block_mma_c96:' "$OUT"/var/golden_*.log | sort -u
for r in 1 2; do
  for v in base new; do
    timeout 60 .carry/variants/$v.tessel bench --network hip --size 3840x2160 --ratio 2 --frames 200 > "$OUT/split_${v}_$r.log" 2>&1 || echo "FAILED: split $v $r"
    echo "split $v round $r: $(grep -E 'back to back' "$OUT/split_${v}_$r.log" | grep -oE 'frame [0-9./]+|the network alone [0-9./]+' | paste -sd' ')"
  done
done
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
OUT=$OUT/check PACK=1 timeout ${CHECK_TIMEOUT:-240} bash scripts/device_check.sh hip > /dev/null 2>&1
echo "device_check hip rc $?"
grep -E "all passed|FAIL|ms as graphs|worst|plain" "$OUT/check/summary.txt" | cut -c1-220 | head -30
