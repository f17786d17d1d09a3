#!/usr/bin/env bash
# Fifty-eighth session, call 6 (run as `ROUNDS=2 SPLIT_ROUNDS=2 VAR_TIMEOUT=120` on the build
# of 1209a15, where `landed` was the alternating order and `ends` TESSEL_HIP_ORDER=2; `ends` is the
# default since). The fused launches' window order inside a
# frame, where the stages around the network touch its buffers:
# - landed (TESSEL_HIP_ORDER unset: every other launch from the second reversed). Call 1 found half
#   of its frame gain in the reconstruction (0.230 -> 0.228 ms): the head, reversed, ends on the
#   rows the reconstruction reads first.
# - ends (TESSEL_HIP_ORDER=2: the first and the last launch reversed, alternating inward, one pair
#   at level 2 running the same way): the embedding then starts on the token rows the input stage
#   wrote last, and the head still ends where the reconstruction starts.
# - index (TESSEL_HIP_ORDER=0).
# Each round: the network alone (graphs) and the frame inside Vulkan (scripts/device_variants.sh),
# then the split frame (`tessel bench --network hip`: its "network alone" is the issue's figure).
#   here:   bash scripts/device_build.sh        # .carry/bin, .carrypack/carry.txz
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s58/call6/run.sh   (about 250 s; 124 s as run)
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz || exit 1
mkdir -p .carry/variants
for n in landed ends index; do
  ln -sf ../bin/network_gpu .carry/variants/$n
  ln -sf ../bin/tessel .carry/variants/$n.tessel
done
printf 'landed: (default flags)\nends: env:TESSEL_HIP_ORDER=2\nindex: env:TESSEL_HIP_ORDER=0\n' > .carry/variants/VARIANTS
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-180} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
echo "variants rc $?"; tail -4 "$OUT/var.log"
for r in $(seq 1 ${SPLIT_ROUNDS:-3}); do
  for o in 1 2 0; do
    TESSEL_HIP_ORDER=$o timeout 60 .carry/bin/tessel bench --network hip --size 3840x2160 --ratio 2 --frames 200 > "$OUT/split_order${o}_$r.log" 2>&1
    echo "order $o round $r: $(grep -oE 'frame [0-9.]+/[0-9.]+|the network alone [0-9.]+/[0-9.]+|input [0-9.]+/[0-9.]+|reconstruct [0-9.]+/[0-9.]+' "$OUT/split_order${o}_$r.log" | paste -sd' ')"
  done
done
(cd "$OUT" && tar czf var.tgz var split_order*.log && rm -rf var split_order*.log)
