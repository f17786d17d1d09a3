#!/usr/bin/env bash
# Ran in the fifty-sixth session (docs/bench/2026-12-07-s56/call1-3; BENCHMARKS.md): three of the
# four savings landed, so instruction-savings.patch no longer applies to the tree.
# Prepared in the fifty-fifth session, not run (every start of a device machine was refused). One call
# of about 530 s, or two: refused starts may leave too little device time for more.
# 1. The fifty-fourth session's four instruction savings (next/instruction-savings.patch), all on
#    (`all`: scripts/device_build.sh's binaries of the tree with them, .carry/bin), against the same
#    source with all four off (`base`), and `c96`: all with the plain 96-channel block asking four
#    workgroups an SM (-DTS_WIDE_OCC=4) on top of next/c96-fit.patch (its scores made twice, the
#    store addresses and the window origin computed again after the MLP; ptxas 13.0 gives its
#    tessel_block_mma_c96 24 bytes of stack and 32 of spill stores, so the JIT's spill limit is
#    raised for this step). Two alternated rounds, the whole Vulkan frame at 4K for base and all.
# 2. `scripts/device_check.sh quick` on `all`, the build that would land.
#   here (about 15 minutes on two cores; the patches in docs/bench/2026-12-07-s55/next/ were made
#   against b34a376 and apply to 2f08d1e):
#           git apply next/instruction-savings.patch && bash scripts/device_build.sh
#           mv .carrypack/carry.txz /tmp/   # all: .carry/bin
#           FRAME=1 bash scripts/device_variants.sh build \
#               base='-DTS_ROWS_POLICY=0 -DTS_EXPAND_ROWS=0 -DTS_ORIGIN_WRAP=0 -DTS_VEC_WARPS=0'
#           git apply next/c96-fit.patch
#           TESSEL_KERNEL_CFLAGS=-DTS_WIDE_OCC=4 cargo test --release -p tessel-hip --test network_gpu --no-run
#           cp "$(ls -t target/release/deps/network_gpu-* | grep -v '\.d$' | head -1)" .carry/variants/c96
#           then .carry/variants/VARIANTS names base, all and c96 (all: the .carry/bin binaries,
#           linked below), tar cJf .carrypack/variants-lite.txz .carry/variants/{base,base.tessel,c96,VARIANTS}
#           and mv /tmp/carry.txz .carrypack/: 17 MB with the tree's 42 (the tool carries 64 MiB).
#           carry [".carrypack", ".gl"]
#   device: OUT=$OUT bash docs/bench/2026-12-07-s55/next/run.sh [var|check|both]
#           (var: step 1 and `tessel check` of all, about 220 s; check: step 2, about 330 s;
#           min: base against all only, the network alone, about 100 s)
set -uo pipefail
what=${1:-both}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz && tar xJf .carrypack/variants-lite.txz || exit 1
ln -sf ../bin/network_gpu .carry/variants/all
ln -sf ../bin/tessel .carry/variants/all.tessel
if [ "$what" = min ]; then
  rm -f .carry/variants/all.tessel .carry/variants/base.tessel
  grep -E '^(base|all):' .carry/variants/VARIANTS > /tmp/V && mv /tmp/V .carry/variants/VARIANTS
fi
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$what" != check ]; then
TESSEL_SPILL_LIMIT=64 VARIANT_TIMEOUT=120 OUT=$OUT/var timeout 200 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -6 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
timeout 60 .carry/bin/tessel check > "$OUT/check_all.log" 2>&1; echo "tessel check rc $?"; tail -12 "$OUT/check_all.log"
fi
[ "$what" = var ] || [ "$what" = min ] && exit 0
OUT=$OUT/check PACK=1 timeout 330 bash scripts/device_check.sh quick > /dev/null 2>&1
echo "device_check rc $?"
[ -f "$OUT/check/summary.txt" ] && grep -E -i "pass|fail|skip|ms as graphs|frame" "$OUT/check/summary.txt" | head -40 || tail -20 "$OUT/check/check.log"
