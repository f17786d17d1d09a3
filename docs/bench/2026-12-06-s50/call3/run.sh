#!/usr/bin/env bash
# Fiftieth session, call 3: the weights prefetched into L2 by each launch's last workgroups for
# the launches after it (kernels built with -DTS_WPREFETCH=1: `pf`) against the default build
# (`base`), in alternated rounds: the native network alone (network_gpu), the frame with the
# kernels inside Vulkan (the game path: FRAME=1's `tessel bench --network vulkan`), then the split
# frame's network (`tessel bench --network hip`, where call 1 found the persisting L2 window
# worth nothing), and `tessel check` with pf's binary (every backend against the CPU reference).
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar xJf .carrypack/variants.txz
OUT=$OUT/var timeout 250 bash scripts/device_variants.sh run 2 > $OUT/var.log 2>&1
tail -6 $OUT/var.log
for r in 1 2; do
  for n in base pf; do
    echo "== split frame round $r $n"
    timeout 60 .carry/variants/$n.tessel bench --network hip --size 3840x2160 --ratio 2 --frames 200 2>&1 | grep -E "network alone" | head -2
  done
done
echo "== tessel check, pf"
timeout 90 .carry/variants/pf.tessel check 2>&1 | tail -5
(cd $OUT && tar czf var.tgz var && rm -rf var)
