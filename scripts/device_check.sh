#!/usr/bin/env bash
# Every GPU check and benchmark of tessel in one call on the GPU machine (an NVIDIA H200 here),
# with x86-64 binaries built on the development machine by scripts/device_build.sh:
#   device run: bash scripts/device_check.sh [quick|soak|hip|native|presets]      (carry: .carrypack and .gl; unpack .carrypack/carry.txz first, see device_build.sh)
#   (SOAKS="native shaders hip" picks the soak mode's runs)
# quick skips the 10,000-frame soaks; soak runs only them (the three took about 2.5 + 3.5 + 3.5 minutes:
# with the device tool's 10-minute calls, run quick and soak as two calls); hip runs only the
# native network's checks and timings; native only the native network inside the Vulkan command
# buffer (VK_NVX_binary_import); presets only the other shipped packages (PRESETS, below): the
# native network's golden cases (theirs among them), then each preset through `tessel check` and
# `tessel bench --network vulkan,hip` beside the default model's bench on the same machine.
# Logs and JSON land in $OUT (or out/device). PACK=1: at the end they go into one archive,
# $OUT/device_check.tgz, beside $OUT/summary.txt (the log's verdicts and figures): the device
# tool brings back only a few files per call.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/check.log") 2>&1
# The GPU machine has no Vulkan loader of its own (scripts/device_env.sh sets B as well).
source scripts/device_env.sh
fail=0
pack() {
  [ "${PACK:-0}" = 1 ] || return 0
  # A call cut by `timeout` (TERM to the whole group, tee among them) must still leave the
  # archive: the pack ignores further signals and writes nothing to the tee'd output (the
  # fifty-sixth session's cut check came back as loose files, and the tool returns only a few).
  trap '' PIPE TERM HUP INT
  sleep 1  # let tee write the last lines
  exec >/dev/null 2>&1
  grep -E "^===|passed|FAILED|worst|summary|^vulkan |^hip |^none |resident|native in|device memory|RSS|non-finite|launches; median|copy rate|golden vectors|hazards: ok|scenes on|culled evaluation|skipped: no PyTorch" "$OUT/check.log" | cut -c1-330 > "$OUT/summary.txt"
  # tar exits 1 when a file changed while it was read (tee may still be writing check.log): the
  # archive is complete enough, and the files must go, or the device tool returns them instead.
  (cd "$OUT" && { tar czf device_check.tgz --exclude device_check.tgz --exclude summary.txt . || [ $? = 1 ]; } && find . -type f ! -name device_check.tgz ! -name summary.txt -delete)
}
trap pack EXIT
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
# soak BACKEND SIZE [TAG]: 10,000 frames through one engine, the device memory sampled every 2 s.
soak() {
  step "soak: 10,000 frames at $2 through --network $1 ${3:-} (device memory sampled every 2 s)"
  local f="$OUT/soak_$1${3:+_$3}_device_mib.txt"
  (while true; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 2; done) > "$f" &
  local sampler=$!
  run $B/tessel soak --network "$1" --frames 10000 --size "$2" --ratio 2
  kill $sampler
  echo "device memory used (MiB) during the $1 soak: first $(head -1 "$f"), max $(sort -n "$f" | tail -1), last $(tail -1 "$f")"
}
run() { "$@" || { echo "FAILED (exit $?): $*"; fail=1; }; }
# The shipped packages other than the default (docs/MODEL.md): every backend present against the
# CPU reference with each (its golden cases run with the default steps too), and both networks' times.
PRESETS=${PRESETS:-models/tessel-v12-fast}
presets() {
  for m in $PRESETS; do
    local name; name=$(basename "$m")
    step "preset $m: tessel check (every backend present), then tessel bench --network vulkan,hip"
    run $B/tessel check --model "$m" --json "$OUT/check_$name.json"
    for size in 2560x1440 3840x2160; do
      run $B/tessel bench --network vulkan,hip --model "$m" --size $size --ratio 2 --frames 200 --json "$OUT/bench_${name}_$size.json"
    done
  done
}

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
$B/tessel info | grep -i vulkan

if [ "$mode" = soak ]; then
  # SOAKS picks some of them (default all three): e.g. SOAKS=native to fit beside a quick run.
  soaks=${SOAKS:-native shaders hip}
  for s in $soaks; do
    case $s in
      native) soak vulkan 3840x2160 native ;;
      shaders) TESSEL_VK_NATIVE=0 soak vulkan 3840x2160 shaders ;;
      hip) soak hip 3840x2160 ;;
      *) echo "unknown soak '$s' (native, shaders, hip)"; fail=1 ;;
    esac
  done
  echo; echo "device_check (soak): $([ $fail = 0 ] && echo all passed || echo SOME FAILED)"
  exit $fail
fi

if [ "$mode" = native ]; then
  step "the native network inside the Vulkan command buffer (VK_NVX_binary_import)"
  run $B/in_vulkan_gpu --test-threads=1 --nocapture
  run $B/tessel check --network vulkan --json "$OUT/check_native.json"
  run $B/tessel bench --network vulkan,hip --size 3840x2160 --ratio 2 --frames 200 --json "$OUT/bench_3840x2160.json"
  TESSEL_PROFILE=1 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_native_3840x2160.json"
  echo; echo "device_check (native): $([ $fail = 0 ] && echo all passed || echo SOME FAILED)"
  exit $fail
fi

if [ "$mode" = presets ]; then
  step "native network against the CPU reference on every golden case (the presets' too)"
  run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
  step "the native network inside the Vulkan command buffer on every golden case (the presets' too)"
  run $B/in_vulkan_gpu --test-threads=1 --nocapture
  step "the default model, tessel bench --network vulkan,hip at 3840x2160 (the presets' yardstick on this machine)"
  run $B/tessel bench --network vulkan,hip --size 3840x2160 --ratio 2 --frames 200 --json "$OUT/bench_3840x2160.json"
  presets
  step "the PyTorch twin against every golden case (the presets' too)"
  if python3 -c "import torch" 2>/dev/null; then run python3 train/check_golden.py; else echo "skipped: no PyTorch (train/check_golden.py)"; fi
  echo; echo "device_check (presets): $([ $fail = 0 ] && echo all passed || echo SOME FAILED)"
  exit $fail
fi

if [ "$mode" != hip ]; then
step "Vulkan engine against the CPU reference on the golden cases (test binary), both paths"
run $B/against_cpu --nocapture
TESSEL_VK_COOPMAT=0 run $B/against_cpu --nocapture
fi

# (The other shapes' test, native_network_shapes_gpu_time, runs once, here: with the switches below
# it would only time the same kernels again.)
step "native network (hip-net: CUDA driver here, PTX from kernels/) against the CPU reference, and its GPU time, and every --arch shape's"
run $B/gpu --test-threads=1 --nocapture
run $B/network_gpu --test-threads=1 --nocapture
step "native network, portable kernels (TESSEL_HIP_MATRIX=0)"
TESSEL_HIP_MATRIX=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, the AMD matrix-core linear and attention kernels emulated in PTX (TESSEL_HIP_WMMA=1: its load check, then the CPU reference)"
TESSEL_HIP_WMMA=1 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, every level's stream in f32 (TESSEL_HIP_STREAM16=0, the kill switch)"
TESSEL_HIP_STREAM16=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, level 0's stream alone in f16 (TESSEL_HIP_STREAM16_LEVELS=1, as before the twenty-eighth session)"
TESSEL_HIP_STREAM16_LEVELS=1 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, expansions pushed by the level above (TESSEL_HIP_PULL=0, the kill switch)"
TESSEL_HIP_PULL=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, token and head rows without cache hints (TESSEL_HIP_CACHE_HINTS=0, the kill switch)"
TESSEL_HIP_CACHE_HINTS=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, every launch's windows in index order (TESSEL_HIP_ORDER=0, the kill switch)"
TESSEL_HIP_ORDER=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, no weight prefetch a launch ahead (TESSEL_HIP_PREFETCH=0, the kill switch)"
TESSEL_HIP_PREFETCH=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, the weights copied by every thread's cp.async pieces (TESSEL_HIP_BULK=0, the kill switch)"
TESSEL_HIP_BULK=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, the stream written as each lane's pairs (TESSEL_HIP_STREAM_ROWS=0, the kill switch)"
TESSEL_HIP_STREAM_ROWS=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
step "native network, the expansions' skips added where they lie (TESSEL_HIP_EXPAND_STAGE=0, the kill switch; the fast preset's golden cases stage theirs otherwise)"
TESSEL_HIP_EXPAND_STAGE=0 run $B/network_gpu --test-threads=1 --nocapture --skip native_network_shapes
if [ "$mode" = hip ]; then
  run $B/split_gpu --test-threads=1 --nocapture
  run $B/tessel bench --network vulkan,hip --size 3840x2160 --ratio 2 --frames 200 --json "$OUT/bench_3840x2160.json"
  echo; echo "device_check (hip): $([ $fail = 0 ] && echo all passed || echo SOME FAILED)"
  exit $fail
fi
step "split frame: Vulkan front, native network (imported buffers, imported timeline semaphore), Vulkan back"
run $B/split_gpu --test-threads=1 --nocapture

step "the native network inside the Vulkan command buffer (VK_NVX_binary_import): shaders' frame, CPU reference, 4K time"
run $B/in_vulkan_gpu --test-threads=1 --nocapture
step "tessel check (every backend present: vulkan with native kernels in the command buffer, hip)"
run $B/tessel check --json "$OUT/check_native.json"
step "tessel check, the shaders' network on the cooperative-matrix path (TESSEL_VK_NATIVE=0)"
TESSEL_VK_NATIVE=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat.json"
step "tessel check, the shaders' network with the scalar attention (TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_COOP=0, the kill switch)"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_COOP=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_scalar_attention.json"
step "tessel check, the shaders' network with every result staged in shared memory (TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_DIRECT=0, linear_coop.comp everywhere: the kill switch)"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_DIRECT=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_staged.json"
step "tessel check, results kept in the accumulators in every layer that can (TESSEL_VK_COOP_DIRECT=2), each MLP in one dispatch and in two (TESSEL_VK_COOP_MLP=0)"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_DIRECT=2 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_direct_all.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_DIRECT=2 TESSEL_VK_COOP_MLP=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_direct_all_mlp0.json"
step "tessel check, the attention's q, k, v from the qkv layer (TESSEL_VK_ATTENTION_QKV=0, the kill switch) and computed in the attention at every level (2)"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_QKV=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_qkv_layer.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_QKV=2 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_qkv_all.json"
step "tessel check, the attention projections apart from the MLPs (TESSEL_VK_COOP_MLP_PROJ=0, the kill switch), and folded into the MLPs with their weights from the buffer (TESSEL_VK_COOP_MLP_W=0)"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_MLP_PROJ=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_mlp_proj0.json"
step "tessel check, the MLPs' weights from the buffer (TESSEL_VK_COOP_MLP_W=0) and the attention a workgroup a head (TESSEL_VK_ATTENTION_WINDOW=0), the kill switches; a window's heads in one workgroup at every level (2)"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_MLP_W=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_mlp_w0.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_WINDOW=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_window0.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_WINDOW=2 TESSEL_VK_ATTENTION_QKV=2 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_window_all.json"
step "tessel check, the cooperative-matrix attention's scores in f32 (TESSEL_VK_ATTENTION_SCORES=32, the kill switch), with q, k, v in the attention by role and from the qkv layer"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_SCORES=32 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_scores32.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_SCORES=32 TESSEL_VK_ATTENTION_QKV=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_scores32_qkv_layer.json"
step "tessel check, the linear layers' weights from the buffer (TESSEL_VK_COOP_LINEAR_W=0, the kill switch) and in shared memory wherever they fit (2)"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_LINEAR_W=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_linear_w0.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_LINEAR_W=2 TESSEL_VK_COOP_DIRECT=2 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_linear_w_all.json"
step "tessel check, the attention's softmax, the MLPs' activations and the linear layers' staged rows in shared memory (TESSEL_VK_ATTENTION_REGS=0, TESSEL_VK_MLP_REGS=0, TESSEL_VK_LINEAR_REGS=0: the kill switches of the register paths), each alone and all three, with the layout probe's maps printed (TESSEL_VK_LAYOUT_DUMP=1)"
TESSEL_VK_NATIVE=0 TESSEL_VK_LAYOUT_DUMP=1 TESSEL_VK_ATTENTION_REGS=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_attention_regs0.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_MLP_REGS=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_mlp_regs0.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_LINEAR_REGS=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_linear_regs0.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_regs0.json"
step "tessel check, the residual streams in f32 (TESSEL_VK_STREAM16=0, the kill switch), on the cooperative-matrix path and with the fused blocks (TESSEL_VK_FUSED=1, which keeps them in f32)"
TESSEL_VK_NATIVE=0 TESSEL_VK_STREAM16=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_stream32.json"
TESSEL_VK_NATIVE=0 TESSEL_VK_FUSED=1 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_fused.json"
step "tessel check, the head apart from the last block's MLP (TESSEL_VK_MLP_HEAD=0, the kill switch)"
TESSEL_VK_NATIVE=0 TESSEL_VK_MLP_HEAD=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_mlp_head0.json"
step "tessel check, the expansion into level 0 staged (TESSEL_VK_EXPAND_DIRECT=0, the kill switch)"
TESSEL_VK_NATIVE=0 TESSEL_VK_EXPAND_DIRECT=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_expand_direct0.json"
step "tessel check, the attention's weights copied a head at a time (TESSEL_VK_ATTENTION_AHEAD=0, the kill switch)"
TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_AHEAD=0 run $B/tessel check --network vulkan --json "$OUT/check_coopmat_ahead0.json"
step "tessel check, scalar path (TESSEL_VK_NATIVE=0 TESSEL_VK_COOPMAT=0)"
TESSEL_VK_NATIVE=0 TESSEL_VK_COOPMAT=0 run $B/tessel check --network vulkan --json "$OUT/check_scalar.json"

for s in "2560x1440 2" "3840x2160 2"; do
  read -r size ratio <<<"$s"
  step "tessel bench --network vulkan,hip at $size (ratio $ratio): both on the same frames (vulkan: native kernels in the command buffer)"
  run $B/tessel bench --network vulkan,hip --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_$size.json"
  step "tessel bench --network vulkan at $size, the shaders' network (TESSEL_VK_NATIVE=0, cooperative matrix)"
  TESSEL_VK_NATIVE=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders.json"
  step "tessel bench --network vulkan at $size, the shaders' network with its residual streams in f32 (TESSEL_VK_STREAM16=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_STREAM16=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_stream32.json"
  step "tessel bench --network vulkan at $size, the shaders' network with the head apart from the last block's MLP (TESSEL_VK_MLP_HEAD=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_MLP_HEAD=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_mlp_head0.json"
  step "tessel bench --network vulkan at $size, the shaders' network with the attention's weights copied a head at a time (TESSEL_VK_ATTENTION_AHEAD=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_AHEAD=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_ahead0.json"
  step "tessel bench --network vulkan at $size, the shaders' network with the scalar attention (TESSEL_VK_ATTENTION_COOP=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_COOP=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_scalar_attention.json"
  step "tessel bench --network vulkan at $size, the shaders' network with every result staged in shared memory (TESSEL_VK_COOP_DIRECT=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_COOP_DIRECT=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_staged.json"
  step "tessel bench --network vulkan at $size, the shaders' network with q, k, v from the qkv layer (TESSEL_VK_ATTENTION_QKV=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_QKV=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_qkv_layer.json"
  step "tessel bench --network vulkan at $size, the shaders' network with the softmax, the MLPs' activations and the linear layers' staged rows in shared memory (TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0)"
  TESSEL_VK_NATIVE=0 TESSEL_VK_ATTENTION_REGS=0 TESSEL_VK_MLP_REGS=0 TESSEL_VK_LINEAR_REGS=0 run $B/tessel bench --network vulkan --size "$size" --ratio "$ratio" --frames 200 --json "$OUT/bench_${size}_shaders_regs0.json"
done
presets
export TESSEL_VK_NATIVE=0  # the rest measures the shaders' network
step "the shaders' network with less shared memory per workgroup (TESSEL_VK_COOP_COLS: narrower staged weight chunks; docs/ENGINE.md)"
for cols in 32 16; do
  echo "TESSEL_VK_COOP_COLS=$cols"
  TESSEL_VK_COOP_COLS=$cols run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 50 --json "$OUT/bench_3840x2160_cols$cols.json"
done
step "tessel bench at 3840x2160, scalar path"
TESSEL_VK_COOPMAT=0 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 100 --json "$OUT/bench_3840x2160_scalar.json"
step "the fused block (TESSEL_VK_FUSED=1): agreement, then speed at 3840x2160"
TESSEL_VK_FUSED=1 run $B/fused --nocapture
TESSEL_VK_FUSED=1 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 100 --json "$OUT/bench_3840x2160_fused.json"
step "per-dispatch GPU times at 3840x2160 (TESSEL_PROFILE=1): the default, every result staged (TESSEL_VK_COOP_DIRECT=0), in the accumulators in every layer that can (2), q, k, v from the qkv layer (TESSEL_VK_ATTENTION_QKV=0), the MLPs' weights from the buffer with a workgroup a head (TESSEL_VK_COOP_MLP_W=0 TESSEL_VK_ATTENTION_WINDOW=0), the linear layers' weights from the buffer (TESSEL_VK_COOP_LINEAR_W=0), the attention's scores in f32 (TESSEL_VK_ATTENTION_SCORES=32)"
TESSEL_PROFILE=1 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160.json"
TESSEL_PROFILE=1 TESSEL_VK_COOP_DIRECT=0 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160_staged.json"
TESSEL_PROFILE=1 TESSEL_VK_COOP_DIRECT=2 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160_direct_all.json"
TESSEL_PROFILE=1 TESSEL_VK_ATTENTION_QKV=0 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160_qkv_layer.json"
TESSEL_PROFILE=1 TESSEL_VK_COOP_MLP_W=0 TESSEL_VK_ATTENTION_WINDOW=0 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160_mlp_w0_window0.json"
TESSEL_PROFILE=1 TESSEL_VK_COOP_LINEAR_W=0 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160_linear_w0.json"
TESSEL_PROFILE=1 TESSEL_VK_ATTENTION_SCORES=32 run $B/tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 30 --json "$OUT/profile_3840x2160_scores32.json"

step "the PyTorch twin: golden vectors, the training scenes' hazards and their generator's speed, train.py's \`tessel scene\` data (on the GPU's PyTorch)"
if python3 -c "import torch" 2>/dev/null; then
  run python3 train/check_golden.py
  run python3 train/check_hazards.py --out "$OUT/hazards"
  run python3 train/bench_scenes.py --size 512 --seqs 8 --frames 2
  run python3 train/check_scene_data.py --tessel $B/tessel
else
  echo "skipped: no PyTorch (train/check_golden.py, train/check_hazards.py, train/bench_scenes.py, train/check_scene_data.py)"
fi

if [ "$mode" != quick ]; then
  soak vulkan 3840x2160 shaders
  TESSEL_VK_NATIVE=1 soak vulkan 3840x2160 native
  soak hip 3840x2160
fi
echo
echo "device_check: $([ $fail = 0 ] && echo all passed || echo SOME FAILED)"
exit $fail
