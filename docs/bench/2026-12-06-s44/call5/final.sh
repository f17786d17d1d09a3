set -u
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in "" "TESSEL_VK_ATTENTION_SCORES=32" "TESSEL_VK_ATTENTION_SCORES=32 TESSEL_VK_ATTENTION_QKV=0" "TESSEL_VK_ATTENTION_QKV=0" "TESSEL_VK_ATTENTION_WINDOW=0" "TESSEL_VK_ATTENTION_WINDOW=2 TESSEL_VK_ATTENTION_QKV=2" "TESSEL_VK_COOP_MLP_PROJ=0" "TESSEL_VK_COOP_DIRECT=2"; do
  echo "== tessel check --network vulkan, TESSEL_VK_NATIVE=0 $s"
  env TESSEL_VK_NATIVE=0 $s $B/tessel check --network vulkan 2>&1 | grep -E "^vulkan |error" || echo FAILED
done
echo "== tessel check (every backend)"; $B/tessel check 2>&1 | grep -E "^(vulkan|hip|none) "
for size in 3840x2160 2560x1440; do
  echo "== TESSEL_VK_NATIVE=0 tessel bench --network vulkan --size $size --ratio 2 --frames 200"
  TESSEL_VK_NATIVE=0 $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 2>&1 | grep -E "^vulkan|resident"
done
echo "== TESSEL_PROFILE=1 TESSEL_PIPELINE_STATS=1 TESSEL_VK_NATIVE=0 tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30"
TESSEL_PROFILE=1 TESSEL_PIPELINE_STATS=1 TESSEL_VK_NATIVE=0 $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 2>&1 | grep -vE "^pipeline (input|linear |exposure|prepare|reconstruct|taau)"
