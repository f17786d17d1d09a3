#!/usr/bin/env bash
# Fifty-second session, call 2: the landing form of call 1's two winners (the weights by bulk
# copies, TS_BULK; the stream written as staged 16-byte rows, TS_STREAM_ROWS=2; both on by
# default with run-time kill switches, TESSEL_HIP_BULK=0 and TESSEL_HIP_STREAM_ROWS=0) against the
# landed kernels (`base`: the same tree built with -DTS_BULK=0 -DTS_STREAM_ROWS=0), alternated
# rounds with the whole Vulkan frame at 4K; then the checks the change touches on the candidate
# build (carry.txz): the golden cases with each kill switch, the split frame's three tiers over
# 1,000 frames, the kernels inside Vulkan over 300 frames, `tessel check`. (Device time was short
# after refused starts: the full quick check did not fit.)
#   here:   bash scripts/device_build.sh
#           FRAME=1 bash scripts/device_variants.sh build base='-DTS_BULK=0 -DTS_STREAM_ROWS=0' cand=
#   device: bash docs/bench/2026-12-06-s52/call2/run.sh
set -uo pipefail
OUT=${OUT:-out/device}
mkdir -p "$OUT"
tar xJf .carrypack/carry.txz
tar xJf .carrypack/variants.txz
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
VARIANT_TIMEOUT=90 OUT=$OUT/var timeout 130 bash scripts/device_variants.sh run ${ROUNDS:-2} > "$OUT/var.log" 2>&1
tail -3 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
for sw in "" TESSEL_HIP_BULK=0 TESSEL_HIP_STREAM_ROWS=0; do
  env $sw timeout 60 $B/network_gpu --test-threads=1 --nocapture native_network_matches > "$OUT/golden${sw:+_${sw%%=*}}.log" 2>&1
  echo "golden ${sw:-default} rc=$? $(grep -h -oE 'worst head[^,;]*' "$OUT/golden${sw:+_${sw%%=*}}.log" | head -1)"
done
grep -h -E "copies|bulk|rows stored" "$OUT"/golden*.log | sort -u | head -4
timeout 90 $B/split_gpu --test-threads=1 --nocapture > "$OUT/split.log" 2>&1; echo "split rc=$?"; grep -E '1,000 frames' "$OUT/split.log" | head -4
timeout 90 $B/in_vulkan_gpu --test-threads=1 --nocapture > "$OUT/in_vulkan.log" 2>&1; echo "in_vulkan rc=$?"; grep -E '300 frames' "$OUT/in_vulkan.log" | head -3
timeout 60 $B/tessel check > "$OUT/check.log" 2>&1; echo "check rc=$?"; tail -5 "$OUT/check.log"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log | grep -v var.log) && (cd "$OUT" && ls *.log | grep -v var.log | xargs rm -f)
