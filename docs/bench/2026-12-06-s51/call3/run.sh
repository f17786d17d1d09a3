#!/usr/bin/env bash
# Fifty-first session, call 3: the fused blocks' f32 vectors staged in shared memory
# (-DTS_VEC_SHARED=1, `vec`; call 2's profile put 5-13 % of every launch's stall samples on the
# bias tiles' global loads) against the landed kernels (`base`), three alternated rounds of
# `FRAME=1 scripts/device_variants.sh run` (golden cases, the network as graphs, the frame with
# the kernels inside Vulkan), then `tessel check` with each variant's binary.
#   device run: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s51/call3/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
OUT=$OUT/var timeout 300 bash scripts/device_variants.sh run 3 > "$OUT/var.log" 2>&1
tail -4 "$OUT/var.log"
for n in base vec; do echo "== $n: tessel check"; timeout 60 .carry/variants/$n.tessel check 2>&1 | tail -4; done | tee "$OUT/check.log"
grep -h -E '^  [a-z]' "$OUT"/var/time_*_1.log | head -40
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
