# Call 7 of the forty-fifth session: the final binary (norm1 in registers by default in the
# attention's register variants) under tessel check, default and with every attention setting.
set -u
source scripts/device_env.sh
for s in "" "TESSEL_VK_ATTENTION_WINDOW=2" "TESSEL_VK_ATTENTION_WINDOW=0" "TESSEL_VK_ATTENTION_QKV=0" "TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0"; do
  echo "== tessel check --network vulkan, TESSEL_VK_NATIVE=0 $s"
  env TESSEL_VK_NATIVE=0 $s timeout 60 $B/tessel check --network vulkan 2>&1 | grep -v "^pipeline" | tail -2
done
echo "== tessel bench --network vulkan (shaders) 3840x2160, 200 frames"
TESSEL_VK_NATIVE=0 timeout 60 $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 200 --json "$OUT/bench_3840x2160_shaders.json" 2>&1 | grep -v "^pipeline" | tail -3
