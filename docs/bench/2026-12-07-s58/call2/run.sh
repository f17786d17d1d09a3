#!/usr/bin/env bash
# Fifty-eighth session, call 2: where the fused blocks' warps wait now, per source line, as the
# fifty-first session's call 2 did for its build (docs/bench/2026-12-06-s51/call2/run.sh, the same
# method): Nsight Compute (--set full, source counters with warp-stall sampling, its default
# cache flush between passes) on the eight launches of tessel-v12's native network at 3840x2160,
# from a network_gpu built with TESSEL_KERNEL_CFLAGS=-gline-tables-only (line tables in the PTX;
# the source at the same /work/main path on both machines).
#   here:   TESSEL_KERNEL_CFLAGS=-gline-tables-only cargo test --release -p tessel-hip --test network_gpu --no-run
#           xz -9 -c target/release/deps/network_gpu-<hash> > .carrypack/ncu/network_gpu_lines.xz
#   device: OUT=$OUT bash docs/bench/2026-12-07-s58/call2/run.sh   (carry: .carrypack, .gl)
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
xz -dk .carrypack/ncu/network_gpu_lines.xz && chmod +x .carrypack/ncu/network_gpu_lines
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU ($($NCU --version | tail -1))"
TESSEL_TIME_MODELS=tessel-v12 TESSEL_TIME_SIZES=3840x2160 timeout ${NCU_TIMEOUT:-300} $NCU --clock-control none --set full --import-source yes \
  -k regex:tessel_block -c 8 -o "$OUT/rep" .carrypack/ncu/network_gpu_lines --test-threads=1 --nocapture native_network_gpu_time > "$OUT/profile.log" 2>&1
echo "profile rc=$?"; tail -3 "$OUT/profile.log"
$NCU -i "$OUT/rep.ncu-rep" --page details > "$OUT/details.txt" 2>&1; echo "details rc=$?"
$NCU -i "$OUT/rep.ncu-rep" --page source --csv --print-source cuda,sass > "$OUT/source_cuda_sass.csv" 2>&1; echo "source cuda,sass rc=$?"
$NCU -i "$OUT/rep.ncu-rep" --page source --csv --print-source sass > "$OUT/source_sass.csv" 2>&1; echo "source sass rc=$?"
grep -E "^  tessel_block|Duration|DRAM Throughput|Issue Slots Busy" "$OUT/details.txt" | head -40
(cd "$OUT" && tar czf ncu.tgz details.txt profile.log source_*.csv && rm -f details.txt source_*.csv && xz -T8 rep.ncu-rep)
ls -la "$OUT"
# here: tar xzf ncu.tgz source_cuda_sass.csv && python3 scripts/ncu_stalls.py source_cuda_sass.csv 12 > stalls.txt
