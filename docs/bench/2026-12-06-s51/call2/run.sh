#!/usr/bin/env bash
# Fifty-first session, call 2: where the fused blocks' warps wait, per source line. Nsight Compute
# (--set full, source counters with warp-stall sampling) on the eight launches of tessel-v12's
# native network at 3840x2160, a network_gpu built here with TESSEL_KERNEL_CFLAGS=-gline-tables-only
# (line tables in the PTX; the source at the same /work/main path on both machines).
#   device run: bash docs/bench/2026-12-06-s51/call2/run.sh   (carry: .carrypack, .gl)
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
xz -dk .carrypack/ncu/network_gpu_lines.xz && chmod +x .carrypack/ncu/network_gpu_lines
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU ($($NCU --version | tail -1)); tree at $PWD"
TESSEL_TIME_MODELS=tessel-v12 TESSEL_TIME_SIZES=3840x2160 timeout 300 $NCU --clock-control none --set full --import-source yes \
  -k regex:tessel_block -c 8 -o "$OUT/rep" .carrypack/ncu/network_gpu_lines --test-threads=1 --nocapture native_network_gpu_time > "$OUT/profile.log" 2>&1
echo "profile rc=$?"; tail -5 "$OUT/profile.log"
$NCU -i "$OUT/rep.ncu-rep" --page details > "$OUT/details.txt" 2>&1; echo "details rc=$?"
$NCU -i "$OUT/rep.ncu-rep" --page source --csv --print-source cuda,sass > "$OUT/source_cuda_sass.csv" 2>&1; echo "source cuda,sass rc=$?"
$NCU -i "$OUT/rep.ncu-rep" --page source --csv --print-source sass > "$OUT/source_sass.csv" 2>&1; echo "source sass rc=$?"
$NCU -i "$OUT/rep.ncu-rep" --page source --csv --print-source cuda > "$OUT/source_cuda.csv" 2>&1; echo "source cuda rc=$?"
ls -la "$OUT"; head -c 600 "$OUT/source_cuda.csv"; echo; head -c 600 "$OUT/source_sass.csv"
(cd "$OUT" && tar czf ncu.tgz details.txt profile.log source_*.csv && rm -f details.txt source_*.csv && xz -T8 rep.ncu-rep)
ls -la "$OUT"
