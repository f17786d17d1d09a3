#!/usr/bin/env bash
# Fifty-eighth session, call 5: TS_LOAD_FIRST for every block that reads its level's stream but the
# head (call 4: mid.1 36 -> 33 us with it, the head 130 -> 131-132), against the same tree built with
# -DTS_LOAD_FIRST=0 (`nofirst`: 9071511's PTX), three alternated rounds. Every kernel of this build
# is byte for byte one of call 1's or call 4's, both of which passed device_check.sh quick.
#   here:   XZ_OPT='-9 -T2' FRAME=1 bash scripts/device_variants.sh build landed= nofirst='-DTS_LOAD_FIRST=0'
#           carry [".carrypack", ".gl"]   (.carrypack/variants.txz only is needed)
#   device: OUT=$OUT bash docs/bench/2026-12-07-s58/call5/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/variants.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-140} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
echo "variants rc $?"; tail -3 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
