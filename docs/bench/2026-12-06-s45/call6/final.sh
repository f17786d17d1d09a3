# Call 6 of the forty-fifth session: the final binary's checks and times in one call (every
# command under a timeout: call 5's window check hung the machine until the call's limit).
set -u
source scripts/device_env.sh
o=$OUT
for s in "" "TESSEL_VK_ATTENTION_WINDOW=2" "TESSEL_VK_ATTENTION_WINDOW=2 TESSEL_VK_ATTENTION_QKV=2 TESSEL_VK_ATTENTION_REGS=0" "TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0" "TESSEL_VK_ATTENTION_REGS=0" "TESSEL_VK_MLP_REGS=0" "TESSEL_VK_ATTENTION_QKV=0"; do
  echo "== tessel check --network vulkan, TESSEL_VK_NATIVE=0 $s"
  env TESSEL_VK_NATIVE=0 $s timeout 60 $B/tessel check --network vulkan 2>&1 | grep -v "^pipeline" | tail -2
done
echo "== tessel check (every backend)"
timeout 90 $B/tessel check 2>&1 | grep -v "^pipeline" | tail -4
for size in 3840x2160 2560x1440; do
  echo "== tessel bench --network vulkan (shaders) $size, 200 frames"
  TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$o/bench_${size}_shaders.json" 2>&1 | grep -v "^pipeline" | tail -3
done
OUT=$o/v timeout 150 bash scripts/shader_variants.sh run 2 2>&1 | grep -v "^pipeline" | tail -45
