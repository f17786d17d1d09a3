#!/usr/bin/env bash
# Forty-seventh session, call 7: the tiles of call 6's survey (every MLP in registers at 128 rows,
# the expansions' chunks and rows) and the expansion into level 0 scattering its accumulators
# (linear_direct_coop.comp; base) against it staged (ed0: TESSEL_VK_EXPAND_DIRECT=0), three rounds;
# checks with the kill switches; 200-frame benches of the shaders' network, the fast preset too.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=$OUT/logs; mkdir -p $O
OUT=$O/v ENV_ed0='TESSEL_VK_EXPAND_DIRECT=0' TESSEL_PIPELINE_STATS=1 \
  timeout 200 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
grep -h "pipeline linear_direct_w_coop \[48, 128\|pipeline mlp_proj_head\|pipeline mlp_proj_regs" $O/v/check_base.txt | sort -u | cut -c1-200
chk() { # name, settings...
  local n=$1; shift
  env TESSEL_VK_NATIVE=0 "$@" timeout 60 $B/tessel check --network vulkan > "$O/check_$n.txt" 2>&1; echo "check $n ($*): rc $? $(grep -E '^vulkan ' "$O/check_$n.txt")"
}
chk direct2 TESSEL_VK_COOP_DIRECT=2
chk fused TESSEL_VK_FUSED=1
chk regs0 TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0
chk mlp_head0 TESSEL_VK_MLP_HEAD=0
chk rows64 TESSEL_VK_COOP_ROWS=64
env TESSEL_VK_NATIVE=0 timeout 60 $B/tessel check --network vulkan --model models/tessel-v12-fast > "$O/check_fast.txt" 2>&1; echo "check fast preset: rc $? $(grep -E '^vulkan ' "$O/check_fast.txt")"
timeout 120 $B/tessel check > "$O/check_all.txt" 2>&1; echo "check, every backend: rc $?"; grep -E '^(backend|vulkan|hip|none) ' "$O/check_all.txt"
for size in 3840x2160 2560x1440; do
  for m in tessel-v12 tessel-v12-fast; do
    TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --model models/$m --size $size --ratio 2 --frames 200 --json "$O/bench_${size}_$m.json" > "$O/bench_${size}_$m.txt" 2>&1
    echo "bench $size $m (shaders): rc $?"; grep -E '^vulkan ' "$O/bench_${size}_$m.txt"
  done
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
