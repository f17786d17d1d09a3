#!/usr/bin/env bash
# Forty-sixth session, call 4: the binary with the linear layers' staged rows in registers and a
# window a workgroup at every level; its checks, the variants, and the 200-frame benches.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$OUT/v ENV_lregs0='TESSEL_VK_LINEAR_REGS=0' ENV_direct2='TESSEL_VK_COOP_DIRECT=2' ENV_m2regs='TESSEL_VK_COOP_DIRECT=2' \
  timeout 300 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
chk() { # name, settings...
  local n=$1; shift
  env TESSEL_VK_NATIVE=0 "$@" timeout 60 $B/tessel check --network vulkan > "$OUT/check_$n.txt" 2>&1; echo "check $n ($*): rc $? $(grep -E '^vulkan ' "$OUT/check_$n.txt")"
}
chk window0 TESSEL_VK_ATTENTION_WINDOW=0
chk attention_regs0 TESSEL_VK_ATTENTION_REGS=0
chk regs0 TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0
chk window0_qkv0 TESSEL_VK_ATTENTION_WINDOW=0 TESSEL_VK_ATTENTION_QKV=0
timeout 120 $B/tessel check > "$OUT/check_all.txt" 2>&1; echo "check, every backend: rc $?"; grep -E '^(backend|vulkan|hip|none) ' "$OUT/check_all.txt"
for size in 3840x2160 2560x1440; do
  TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$OUT/bench_${size}_shaders.json" > "$OUT/bench_${size}_shaders.txt" 2>&1
  echo "bench $size: rc $?"; grep -E '^vulkan ' "$OUT/bench_${size}_shaders.txt"
done
