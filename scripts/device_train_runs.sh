#!/usr/bin/env bash
# On the GPU machine (device tool): several training runs side by side for the same wall-clock
# time, an A/B/C... in one call. Runs are spread over the GPUs present (run i on GPU i mod count),
# so on one GPU they share it: a training step is launch-bound (the GPU idles between the stages'
# small kernels), so runs sharing a GPU each keep much of their speed. Each run's ms/step in its log
# says how much.
#   bash scripts/device_train_runs.sh MINUTES "COMMON ARGS" "ARGS A" "ARGS B" [...]
#   e.g. bash scripts/device_train_runs.sh 6 "--init models/tessel-v10 --size 256 --batch 32 --cache 96 --deadline 450" \
#          "--chunk 4" "--chunk 16 --ema 0.996"
# The training and validation sequences are generated once (train.py --data-only with the common
# arguments) into one data cache that every run reads, so runs differ only by their own arguments
# (a run's own --size, --cache, --frames or --hazards would generate other sequences). Each run
# has its own training folder, package and golden folder (out/runs/a, b, ...), so no two write
# the same file. Everything comes back as $OUT/a.tgz, b.tgz, ... (the package, golden vectors,
# logs) and, for up to three runs, ckpt_a.pt, ... (a later call can --resume from them): the device tool
# returns at most 8 files.
set -euo pipefail
cd "$(dirname "$0")/.."
MIN=${1:?minutes}; COMMON=${2?common arguments}; shift 2
[ $# -ge 1 ] && [ $# -le 4 ] || { echo "device_train_runs: give 1 to 4 runs' arguments (got $#)" >&2; exit 2; }
OUT=${OUT:-out/device}; mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
GPUS=$(nvidia-smi -L | wc -l)
[ "$GPUS" -ge 1 ] || { echo "device_train_runs: no GPU (nvidia-smi -L lists none)" >&2; exit 2; }
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" | tee -a "$OUT/gpu.txt"
CACHE=out/runs/data-cache
# shellcheck disable=SC2086  # the arguments are word lists by design
python3 train/train.py --data-only --data-cache "$CACHE" --out out/runs/data $COMMON 2>&1 | tee -a "$OUT/gpu.txt"
names=(a b c d); pids=()
for i in $(seq 0 $(($# - 1))); do
  r=${names[$i]}; d=out/runs/$r; args=${*:$((i + 1)):1}; mkdir -p "$d"
  echo "run $r on GPU $((i % GPUS)): $COMMON $args" | tee -a "$OUT/gpu.txt"
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES=$((i % GPUS)) python3 train/train.py --minutes "$MIN" --out "$d/train" --data-cache "$CACHE" \
    --golden "$d/golden" --package "$d/tessel-dev" $COMMON $args > "$d/train.log" 2>&1 &
  pids+=($!)
done
runs=("${names[@]:0:$#}")
alive() { for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
# Progress on the call's output: the last line of each log once a minute.
while alive; do
  sleep 60; for r in "${runs[@]}"; do echo "$r: $(tail -n 1 out/runs/$r/train.log 2>/dev/null | cut -c1-200)"; done
done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=$?; done
for r in "${runs[@]}"; do echo "=== run $r"; tail -n 8 out/runs/$r/train.log; done
# One small archive per run and the checkpoints beside them (the data cache stays).
for r in "${runs[@]}"; do
  tar czf "$OUT/$r.tgz" out/runs/$r/train.log out/runs/$r/golden out/runs/$r/tessel-dev \
    $(ls -d out/runs/$r/train/*.csv out/runs/$r/train/*.json 2>/dev/null)
  [ $# -le 3 ] && [ -f out/runs/$r/train/ckpt.pt ] && cp out/runs/$r/train/ckpt.pt "$OUT/ckpt_$r.pt"
done
exit $rc
