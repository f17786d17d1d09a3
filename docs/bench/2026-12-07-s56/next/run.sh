#!/usr/bin/env bash
# Prepared in the fifty-sixth session, not run (its device time ended). The landed build (three
# instruction savings of the sm_90a fused blocks, each on by default) against the same tree with
# the three built off (`base`): the session timed them only together with a fourth, the staged
# expansion, which it then removed (dec1.1+expand1 76 us with it against 72 without). Every kernel
# but the nine expansion variants is the timed build's PTX byte for byte; the expansions are the
# former kernels with the origin wrap and the vectors' copies. And `wide4`: the landed build with
# the plain 96-channel block at four workgroups an SM (-DTS_WIDE_OCC=4, no other change; the
# fifty-third session measured mid.1 36 -> 28-29 us so, with 40 bytes a thread spilled (ptxas 13.0
# here: 48 bytes of stack, 48 of spill stores, at 128 registers), past the
# static checks' 16: TESSEL_SPILL_LIMIT=64 lets it time; landing it would need that limit
# argued for this one kernel).
# 1. var: the network alone and the whole frame inside Vulkan, three alternated rounds (about 170 s).
# 2. check: `scripts/device_check.sh quick` on the landed build (about 360 s; a cut call still
#    brings back its summary and archive).
#   here (about 15 minutes on two cores):
#           bash scripts/device_build.sh                    # landed: .carry/bin, .carrypack/carry.txz
#           mv .carrypack/carry.txz /tmp/
#           FRAME=1 bash scripts/device_variants.sh build \
#               base='-DTS_ROWS_POLICY=0 -DTS_ORIGIN_WRAP=0 -DTS_VEC_WARPS=0' wide4='-DTS_WIDE_OCC=4'
#           echo 'landed: (default flags)' >> .carry/variants/VARIANTS
#           tar cJf .carrypack/variants.txz .carry/variants   # 19 MB with carry.txz, the tree 43
#           mv /tmp/carry.txz .carrypack/
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s56/next/run.sh [var|check|both]
# (The fifty-seventh session rebuilt .carrypack/carry.txz from the tree that gave the shapes test
# its last shape, the shipped one without the per-pixel head path, which the check's shapes step
# times; the kernels are unchanged. .carrypack/variants.txz is this session's build again.)
set -uo pipefail
what=${1:-both}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz && tar xJf .carrypack/variants.txz || exit 1
ln -sf ../bin/network_gpu .carry/variants/landed
ln -sf ../bin/tessel .carry/variants/landed.tessel
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" != check ]; then
  TESSEL_SPILL_LIMIT=64 VARIANT_TIMEOUT=120 OUT=$OUT/var timeout 215 bash scripts/device_variants.sh run 3 > "$OUT/var.log" 2>&1
  echo "variants rc $?"; tail -5 "$OUT/var.log"
  (cd "$OUT" && tar czf var.tgz var && rm -rf var)
fi
[ "$what" = var ] && exit 0
OUT=$OUT/check PACK=1 timeout 365 bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
grep -E "all passed|FAIL|ms as graphs" "$OUT/check/summary.txt" | head -20
