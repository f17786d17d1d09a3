#!/usr/bin/env bash
# Fifty-first session, call 1: the landed tree (8978a6f: the weight prefetch on by default) plus
# the start-up filter of the linear pipelines (docs/bench/2026-12-06-s50/dispatched-linears.patch,
# which wants this GPU `tessel check`) and the device copy-rate probe of network_gpu, through
# `PACK=1 scripts/device_check.sh quick`; then the prefetch issued by each launch's first
# workgroups (-DTS_WPREFETCH=2, `early`, s50 call4/early.patch) against the landed kernels
# (`base`), two alternated rounds.
#   device run: tar xJf .carrypack/carry.txz && bash docs/bench/2026-12-06-s51/call1/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
OUT=$OUT/check PACK=1 timeout 480 bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc=$?"
cat "$OUT/check/summary.txt" | grep -E 'FAILED|copy rate|as graphs|worst head|^vulkan |^hip |^none ' | head -20
tar xJf .carrypack/variants.txz
OUT=$OUT/var timeout 90 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -4 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
