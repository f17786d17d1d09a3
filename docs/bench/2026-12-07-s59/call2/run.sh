#!/usr/bin/env bash
# Fifty-ninth session, call 2. The build carried is this session's tree with the fused launches
# that copy one core blob (widths up to 48: the embedding, the head and level 1's four) launched
# in thread block clusters, each workgroup bulk-copying its share of the blob into every
# workgroup of its cluster (multicast; kernels/include/tessel_block.h's TS_CLUSTER, hip-net's
# plan::cluster_choice, TESSEL_HIP_CLUSTER).
# 1. var: the carried binaries under four environments, three alternated rounds of
#    scripts/device_variants.sh (golden cases' head against the CPU reference, the network as
#    graphs and per launch): c2 (the default, clusters of 2), off (TESSEL_HIP_CLUSTER=0: every
#    workgroup copies the whole blob, as before), c4, c8.
# 2. split: `tessel bench --network hip` at 3840x2160, 200 frames, c2 and off alternated twice:
#    the split frame's network alone and the frame.
#   here:   bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s59/call2/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
bash scripts/device_variants.sh link c2= off=env:TESSEL_HIP_CLUSTER=0 c4=env:TESSEL_HIP_CLUSTER=4 c8=env:TESSEL_HIP_CLUSTER=8 > /dev/null
rm -f .carry/variants/*.tessel  # the frame inside Vulkan runs the sm_90 object, which has no clusters
VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-330} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
echo "variants rc $?"; grep -E "FAILED|hung" "$OUT/var.log" | head; tail -5 "$OUT/var.log"
for r in 1 2; do
  for v in c2 off; do
    e=; [ $v = off ] && e="TESSEL_HIP_CLUSTER=0"
    env $e timeout 60 $B/tessel bench --network hip --size 3840x2160 --ratio 2 --frames 200 > "$OUT/split_${v}_$r.log" 2>&1 || echo "FAILED: split $v $r"
    echo "split $v round $r: $(grep -E 'network alone|back to back' "$OUT/split_${v}_$r.log" | tr -s ' ' | cut -c1-260 | paste -sd' ')"
  done
done
grep -h -iE 'cluster' "$OUT"/split_c2_1.log "$OUT"/var/golden_c2.log | head -3
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
