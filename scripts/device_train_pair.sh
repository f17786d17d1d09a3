#!/usr/bin/env bash
# On a two-GPU machine (device tool, kind nvidia-h200-x2): two training runs side by side, one per
# GPU, for the same wall-clock time: an A/B in one call at the device time of one run.
#   bash scripts/device_train_pair.sh MINUTES "ARGS A" "ARGS B"
#   e.g. bash scripts/device_train_pair.sh 9 "--init models/tessel-v10 --deadline 550 --package out/pair/a/tessel-dev" \
#                                            "--init models/tessel-v10 --deadline 550 --accumulate --package out/pair/b/tessel-dev"
# Each run gets its own GPU, training folder, data cache and golden folder (out/pair/a, out/pair/b),
# so the two never write the same file. Everything comes back as $OUT/a.tgz and b.tgz (the package,
# golden vectors, logs) and ckpt_a.pt, ckpt_b.pt: the device tool returns only a few small files.
# A second call on the still-warm machine can continue both with "... --resume --replan": the
# data caches are still there.
set -euo pipefail
cd "$(dirname "$0")/.."
MIN=${1:?minutes}; A=${2:?arguments of run a}; B=${3:?arguments of run b}
OUT=${OUT:-out/device}; mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" | tee -a "$OUT/gpu.txt"
[ "$(nvidia-smi -L | wc -l)" -ge 2 ] || { echo "device_train_pair: needs two GPUs (kind nvidia-h200-x2)" >&2; exit 2; }
run() {  # run NAME GPU ARGS
  local d=out/pair/$1; mkdir -p "$d"
  # shellcheck disable=SC2086  # the arguments are a word list by design
  CUDA_VISIBLE_DEVICES=$2 python3 train/train.py --minutes "$MIN" --out "$d/train" --data-cache "$d/data-cache" \
    --golden "$d/golden" $3 > "$d/train.log" 2>&1
}
run a 0 "$A" & pa=$!
run b 1 "$B" & pb=$!
# Progress on the call's output: the last line of each log once a minute.
while kill -0 $pa 2>/dev/null || kill -0 $pb 2>/dev/null; do
  sleep 60; for r in a b; do echo "$r: $(tail -n 1 out/pair/$r/train.log 2>/dev/null | cut -c1-200)"; done
done
rc=0; wait $pa || rc=$?; wait $pb || rc=$((rc ? rc : $?))
for r in a b; do echo "=== run $r"; tail -n 8 out/pair/$r/train.log; done
# One small archive per run and the checkpoints beside them (the data caches, 6 GB each, stay).
for r in a b; do
  tar czf "$OUT/$r.tgz" out/pair/$r/train.log out/pair/$r/golden $(ls -d out/pair/$r/train/*.csv out/pair/$r/train/*.json 2>/dev/null) \
    $(find out/pair/$r -name model.json -path '*/tessel-*' -printf '%h\n' | grep -v golden)
  cp out/pair/$r/train/ckpt.pt "$OUT/ckpt_$r.pt"
done
exit $rc
