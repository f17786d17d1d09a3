#!/usr/bin/env bash
# Forty-seventh session, call 5: the plan's fix for the fused blocks (TESSEL_VK_FUSED=1 had
# dropped the head: the last block's MLP was to take it along, but a fused block has no MLP
# dispatch); the checks call 4 failed, and the default.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in "fused TESSEL_VK_FUSED=1" "default" "mlp_head0 TESSEL_VK_MLP_HEAD=0"; do
  read -r n env <<< "$s"
  env TESSEL_VK_NATIVE=0 $env timeout 60 $B/tessel check --network vulkan > "$OUT/check_$n.txt" 2>&1; echo "check $n ($env): rc $? $(grep -E '^vulkan ' "$OUT/check_$n.txt")"
done
timeout 120 $B/fused --nocapture > "$OUT/fused.txt" 2>&1; echo "fused test binary: rc $?"; grep -E "^test |test result" "$OUT/fused.txt"
