#!/usr/bin/env bash
# Fifty-eighth session, call 3: three waits the fresh profile (call 2) puts high, each attacked by a
# build switch (kernels/, off by default in 85f1689's tree), timed against the landed build in three
# alternated rounds of scripts/device_variants.sh (the network as graphs, per launch, the frame
# inside Vulkan):
# - ahead4, ahead8: the last expansion's skip loaded 4 or 8 output tiles ahead (TS_EXPAND_AHEAD;
#   a third of dec1.1+expand1's stall samples were that load's wait);
# - pull: the pull's skip loaded before its products (TS_PULL_EARLY);
# - first: a block's stream rows loaded before it issues its vector and weight copies
#   (TS_LOAD_FIRST; 11-13 % of the plain blocks' and the head's samples wait on those rows);
# - all: ahead4, pull and first together.
#   here:   XZ_OPT='-9 -T2' FRAME=1 bash scripts/device_variants.sh build landed= \
#             ahead4='-DTS_EXPAND_AHEAD=4' ahead8='-DTS_EXPAND_AHEAD=8' pull='-DTS_PULL_EARLY=1' \
#             first='-DTS_LOAD_FIRST=1' all='-DTS_EXPAND_AHEAD=4 -DTS_PULL_EARLY=1 -DTS_LOAD_FIRST=1'
#           carry [".carrypack", ".gl"]   (.carrypack/variants.txz only is needed)
#   device: OUT=$OUT bash docs/bench/2026-12-07-s58/call3/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/variants.txz || exit 1
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=100 OUT=$OUT/var timeout ${VAR_TIMEOUT:-420} bash scripts/device_variants.sh run ${ROUNDS:-3} > "$OUT/var.log" 2>&1
echo "variants rc $?"; tail -8 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
