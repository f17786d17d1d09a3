#!/usr/bin/env bash
# Sixtieth session, call 1. Two kernel changes, each a build-time switch, against the landed tree:
# - stage: the expansion's skip (the level below's f16 rows of the window's children) copied by
#   cp.async into the attention's weight bytes while the MLP runs, and read there by the
#   expansion (kernels/include/tessel_block_ends.h's TS_EXPAND_STAGE, 1 by default on sm_90a);
#   base is the same tree with -DTS_EXPAND_STAGE=0 (the landed kernels).
# - poly2, poly4: stage plus the softmax's exponentials of the first 2 or 4 of its 8 key tiles on
#   the FMA pipe (TS_EXP_POLY, kernels/include/tessel_block_attention.h).
# 1. var: three alternated rounds of scripts/device_variants.sh (golden cases, the network as
#    graphs and per launch, the frame inside Vulkan), and the split frame's long sequences.
# 2. split: `tessel bench --network hip` at 3840x2160, 200 frames, each variant, twice alternated.
#   here:   XZ_OPT='-9 -T2' EXTRA=split_gpu FRAME=1 bash scripts/device_variants.sh build base='-DTS_EXPAND_STAGE=0' stage= poly2='-DTS_EXP_POLY=2' poly4='-DTS_EXP_POLY=4'
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s60/call1/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/variants.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-330} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
echo "variants rc $?"; grep -E "FAILED|hung" "$OUT/var.log" | head; tail -5 "$OUT/var.log"
names=$(sed 's/:.*//' .carry/variants/VARIANTS)
for n in $names; do echo "$n: $(grep -hE '^  (dec1.1|expand2\+dec1.0\+expand1|embed)' "$OUT"/var/time_${n}_*.log | awk '{print $1, $3}' | paste -sd' ')"; done
grep -hE 'expand_mma_c48:|embed_mma_c32:' "$OUT"/var/golden_*.log | sort -u
for r in 1 2; do
  for v in $names; do
    timeout 60 .carry/variants/$v.tessel bench --network hip --size 3840x2160 --ratio 2 --frames 200 > "$OUT/split_${v}_$r.log" 2>&1 || echo "FAILED: split $v $r"
    echo "split $v round $r: $(grep -E 'back to back' "$OUT/split_${v}_$r.log" | grep -oE 'frame [0-9./]+|the network alone [0-9./]+' | paste -sd' ')"
  done
done
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
