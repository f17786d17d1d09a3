#!/usr/bin/env bash
# Fifty-first session, call 4: the fused blocks' f32 vectors staged in shared memory
# (-DTS_VEC_SHARED=1 as in call 3, `vec`; 2: all but the embedding and pull variants, `vec2`; 3: as 2,
# the vectors' pointers chosen at run time for the kill switch, `vec3`) against the landed kernels (`base`),
# `FRAME=1 scripts/device_variants.sh run` (golden cases, the network as graphs, the frame with
# the kernels inside Vulkan), then `tessel check` with each variant's binary.
#   device run: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s51/call4/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
OUT=$OUT/var timeout 300 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -6 "$OUT/var.log"
for n in vec3; do echo "== $n: tessel check"; timeout 60 .carry/variants/$n.tessel check 2>&1 | tail -4; done | tee "$OUT/check.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
