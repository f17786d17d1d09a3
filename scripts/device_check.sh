#!/usr/bin/env bash
# Every GPU check and benchmark of tessel, in one call on the GPU machine (NVIDIA H200 here),
# with binaries built on the development machine by scripts/device_build.sh:
#   device run: bash scripts/device_check.sh [quick]    (carry: .carry, .gl)
# Writes everything to $OUT (or out/device) : check.log and one JSON per benchmark.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/device}
mkdir -p "$OUT"
log="$OUT/check.log"
exec > >(tee -a "$log") 2>&1
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done
ldconfig 2>/dev/null || true
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export XDG_CACHE_HOME=/tmp/tessel-cache
mode=${1:-full}
B=.carry/bin
export TESSEL_GOLDEN_DIR=$PWD/model/tests/golden
fail=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
run() { "$@" || { echo "FAILED (exit $?): $*"; fail=1; }; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
git log -1 --format='commit %h %s' 2>/dev/null || true
sizes=("2560x1440 2" "3840x2160 2")

step "golden cases and agreement, cooperative-matrix path (default)"
run $B/against_cpu --nocapture
step "golden cases and agreement, scalar path (TESSEL_VK_COOPMAT=0)"
TESSEL_VK_COOPMAT=0 run $B/against_cpu --nocapture

if $B/tessel check --help >/dev/null 2>&1; then
  step "tessel check (every backend present against the CPU reference)"
  run $B/tessel check --json "$OUT/check.json"
  step "tessel check, scalar path"
  TESSEL_VK_COOPMAT=0 run $B/tessel check --json "$OUT/check_scalar.json"
fi

for s in "${sizes[@]}"; do
  read -r size ratio <<<"$s"
  step "engine_bench $size ratio $ratio, cooperative matrix"
  run $B/engine_bench models/tessel-v6 "$size" "$ratio" 200
  step "engine_bench $size ratio $ratio, scalar"
  TESSEL_VK_COOPMAT=0 run $B/engine_bench models/tessel-v6 "$size" "$ratio" 200
done
step "per-dispatch profile at 3840x2160 (TESSEL_PROFILE=1), cooperative matrix and scalar"
TESSEL_PROFILE=1 run $B/engine_bench models/tessel-v6 3840x2160 2 30
TESSEL_PROFILE=1 TESSEL_VK_COOPMAT=0 run $B/engine_bench models/tessel-v6 3840x2160 2 30

if [ "$mode" != quick ] && $B/tessel bench --help >/dev/null 2>&1; then
  for s in "${sizes[@]}"; do
    read -r size ratio <<<"$s"
    step "tessel bench --network vulkan at $size ratio $ratio"
    run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}.json"
  done
fi
if [ "$mode" != quick ] && $B/tessel soak --help >/dev/null 2>&1; then
  step "soak: 10,000 frames at 3840x2160 through one engine"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader
  run $B/tessel soak --network vulkan --frames 10000 --size 3840x2160 --ratio 2
  nvidia-smi --query-gpu=memory.used --format=csv,noheader
fi
echo
echo "device_check: $([ $fail = 0 ] && echo all passed || echo SOME FAILED)"
exit $fail
