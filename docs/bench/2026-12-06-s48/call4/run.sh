#!/usr/bin/env bash
# Forty-eighth session, call 4: the tree with the attention's weights loaded ahead
# (attention_qkv_window_regs_ahead_coop, chosen by vk-stages' tiles; base) against its kill switch
# (ahead0: TESSEL_VK_ATTENTION_AHEAD=0), three rounds of the per-dispatch profile; checks with the
# kill switches that change the attention's variant; 200-frame benches of the shaders' network.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=$OUT/logs; mkdir -p $O
OUT=$O/v ENV_ahead0='TESSEL_VK_ATTENTION_AHEAD=0' TESSEL_PIPELINE_STATS=1 \
  timeout 200 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
grep -h "pipeline attention_qkv_window_regs" $O/v/check_base.txt $O/v/check_ahead0.txt | sort -u | cut -c1-200
grep -h "^network: shaders" $O/v/check_base.txt | head -1 | tr ',' '\n' | grep -i "ahead\|window"
chk() { # name, settings...
  local n=$1; shift
  env TESSEL_VK_NATIVE=0 "$@" timeout 60 $B/tessel check --network vulkan > "$O/check_$n.txt" 2>&1; echo "check $n ($*): rc $? $(grep -E '^vulkan ' "$O/check_$n.txt")"
}
chk stream32 TESSEL_VK_STREAM16=0
chk window_all TESSEL_VK_ATTENTION_WINDOW=2 TESSEL_VK_ATTENTION_QKV=2
chk window0 TESSEL_VK_ATTENTION_WINDOW=0
chk fused TESSEL_VK_FUSED=1
chk regs0 TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0
env TESSEL_VK_NATIVE=0 timeout 60 $B/tessel check --network vulkan --model models/tessel-v12-fast > "$O/check_fast.txt" 2>&1; echo "check fast preset: rc $? $(grep -E '^vulkan ' "$O/check_fast.txt")"
timeout 120 $B/tessel check > "$O/check_all.txt" 2>&1; echo "check, every backend: rc $?"; grep -E '^(backend|vulkan|hip|none) ' "$O/check_all.txt"
for size in 3840x2160 2560x1440; do
  for m in tessel-v12 tessel-v12-fast; do
    TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --model models/$m --size $size --ratio 2 --frames 200 --json "$O/bench_${size}_$m.json" > "$O/bench_${size}_$m.txt" 2>&1
    echo "bench $size $m (shaders): rc $?"; grep -E '^vulkan ' "$O/bench_${size}_$m.txt"
  done
  TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_AHEAD=0 timeout 60 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$O/bench_${size}_ahead0.json" > "$O/bench_${size}_ahead0.txt" 2>&1
  echo "bench $size tessel-v12 (shaders, TESSEL_VK_ATTENTION_AHEAD=0): rc $?"; grep -E '^vulkan ' "$O/bench_${size}_ahead0.txt"
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
