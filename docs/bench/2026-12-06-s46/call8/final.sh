#!/usr/bin/env bash
# Forty-sixth session, call 8: the binary of every change (the projection's weights in shared memory too): the rounds against
# the register paths off (all three kill switches) and the MLP weights from the buffer;
# the checks and the 200-frame benches. Everything it writes goes into $OUT/logs.tgz.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=$OUT/logs; mkdir -p $O
OUT=$O/v ENV_mlpw0='TESSEL_VK_COOP_MLP_W=0' ENV_regs0='TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0' TESSEL_PIPELINE_STATS=1 \
  timeout 300 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
grep -h "regs_coop\|regs_w_coop\|regs_wh_coop" $O/v/check_base.txt | sort -u | cut -c1-200
chk() { # name, settings...
  local n=$1; shift
  env TESSEL_VK_NATIVE=0 "$@" timeout 60 $B/tessel check --network vulkan > "$O/check_$n.txt" 2>&1; echo "check $n ($*): rc $? $(grep -E '^vulkan ' "$O/check_$n.txt")"
}
chk attention_regs0 TESSEL_VK_ATTENTION_REGS=0
chk mlp_regs0 TESSEL_VK_MLP_REGS=0
chk window0 TESSEL_VK_ATTENTION_WINDOW=0
chk linear_regs0 TESSEL_VK_LINEAR_REGS=0
chk window0_qkv0 TESSEL_VK_ATTENTION_WINDOW=0 TESSEL_VK_ATTENTION_QKV=0
timeout 120 $B/tessel check > "$O/check_all.txt" 2>&1; echo "check, every backend: rc $?"; grep -E '^(backend|vulkan|hip|none) ' "$O/check_all.txt"
for size in 3840x2160 2560x1440; do
  TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$O/bench_${size}_shaders.json" > "$O/bench_${size}_shaders.txt" 2>&1
  echo "bench $size: rc $?"; grep -E '^vulkan ' "$O/bench_${size}_shaders.txt"
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
