#!/usr/bin/env bash
# Prepared in the fifty-sixth session, not run (its device time ended). The landed build (three
# instruction savings of the sm_90a fused blocks, each on by default) against the same tree with
# all three built off (`base`): the session timed the savings only together with a fourth, the
# staged expansion, which it then removed (dec1.1+expand1 76 us with it against 72 without).
# Every kernel but the nine expansion variants is the timed build's PTX byte for byte; the
# expansions are the former kernels with the origin wrap and the vectors' copies. The network
# alone and the whole frame inside Vulkan, four alternated rounds (about 150 s).
#   here:   FRAME=1 bash scripts/device_variants.sh build \
#               base='-DTS_ROWS_POLICY=0 -DTS_ORIGIN_WRAP=0 -DTS_VEC_WARPS=0' landed=
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s56/next/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/variants.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=120 OUT=$OUT/var timeout 400 bash scripts/device_variants.sh run 4 > "$OUT/var.log" 2>&1
echo "variants rc $?"; tail -5 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
