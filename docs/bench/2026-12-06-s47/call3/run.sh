#!/usr/bin/env bash
# Forty-seventh session, call 3: the last block's MLP and the head in one dispatch
# (mlp_proj_head_regs_w_coop, the default) against the head apart (mh0: TESSEL_VK_MLP_HEAD=0),
# three rounds of the per-dispatch profile; checks; 200-frame benches of both.
set -uo pipefail
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=$OUT/logs; mkdir -p $O
OUT=$O/v ENV_mh0='TESSEL_VK_MLP_HEAD=0' TESSEL_PIPELINE_STATS=1 \
  timeout 200 bash scripts/shader_variants.sh run 3 2>&1 | grep -v "^pipeline\|^tessel: shader"
grep -h "mlp_proj_head\|mlp_proj_regs_w_coop \[32" $O/v/check_base.txt | sort -u | cut -c1-200
chk() { # name, settings...
  local n=$1; shift
  env TESSEL_VK_NATIVE=0 "$@" timeout 60 $B/tessel check --network vulkan > "$O/check_$n.txt" 2>&1; echo "check $n ($*): rc $? $(grep -E '^vulkan ' "$O/check_$n.txt")"
}
chk stream32 TESSEL_VK_STREAM16=0
chk mlpw0 TESSEL_VK_COOP_MLP_W=0
chk staged TESSEL_VK_COOP_DIRECT=0
timeout 120 $B/tessel check > "$O/check_all.txt" 2>&1; echo "check, every backend: rc $?"; grep -E '^(backend|vulkan|hip|none) ' "$O/check_all.txt"
for size in 3840x2160 2560x1440; do
  for s in 1 0; do
    TESSEL_VK_MLP_HEAD=$s TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$O/bench_${size}_h$s.json" > "$O/bench_${size}_h$s.txt" 2>&1
    echo "bench $size mlp_head=$s: rc $?"; grep -E '^vulkan ' "$O/bench_${size}_h$s.txt"
  done
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
