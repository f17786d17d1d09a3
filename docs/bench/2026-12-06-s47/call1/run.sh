#!/usr/bin/env bash
# Forty-seventh session, call 1: every level's residual stream in f16 in the shaders' network
# (the default, TESSEL_VK_STREAM16=1) against f32 (=0), alternated in three rounds of the
# per-dispatch profile; the checks with each register path's kill switch, the staged and
# two-dispatch paths, the fused blocks (f32 streams); every backend; 200-frame benches.
# Everything it writes goes into $OUT/logs.tgz.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=$OUT/logs; mkdir -p $O
OUT=$O/v ENV_s32='TESSEL_VK_STREAM16=0' TESSEL_PIPELINE_STATS=1 \
  timeout 240 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
chk() { # name, settings...
  local n=$1; shift
  env TESSEL_VK_NATIVE=0 "$@" timeout 60 $B/tessel check --network vulkan > "$O/check_$n.txt" 2>&1; echo "check $n ($*): rc $? $(grep -E '^vulkan ' "$O/check_$n.txt")"
}
chk attention_regs0 TESSEL_VK_ATTENTION_REGS=0
chk mlp_regs0 TESSEL_VK_MLP_REGS=0
chk linear_regs0 TESSEL_VK_LINEAR_REGS=0
chk regs0 TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0
chk window0_qkv0 TESSEL_VK_ATTENTION_WINDOW=0 TESSEL_VK_ATTENTION_QKV=0
chk staged TESSEL_VK_COOP_DIRECT=0
chk mlp0 TESSEL_VK_COOP_MLP=0
chk mlpw0 TESSEL_VK_COOP_MLP_W=0
chk fused TESSEL_VK_FUSED=1
chk scalar TESSEL_VK_COOPMAT=0
chk scalar32 TESSEL_VK_COOPMAT=0 TESSEL_VK_STREAM16=0
timeout 120 $B/tessel check > "$O/check_all.txt" 2>&1; echo "check, every backend: rc $?"; grep -E '^(backend|vulkan|hip|none) ' "$O/check_all.txt"
for size in 3840x2160 2560x1440; do
  for s in 1 0; do
    TESSEL_VK_STREAM16=$s TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$O/bench_${size}_s$s.json" > "$O/bench_${size}_s$s.txt" 2>&1
    echo "bench $size stream16=$s: rc $?"; grep -E '^vulkan ' "$O/bench_${size}_s$s.txt"
  done
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
