#!/usr/bin/env bash
# On the GPU machine (device tool): train, export the package and golden vectors. Everything worth
# keeping goes to $OUT (results.tgz, the checkpoint, logs).
#   bash scripts/device_train.sh MINUTES [extra train.py args...]
#   e.g. first call:  bash scripts/device_train.sh 15 --deadline 580 --package models/tessel-dev
#        next call:   (carry out/train/ckpt.pt) the same plus --resume
set -euo pipefail
MIN=${1:-7}; shift || true
OUT=${OUT:-out/device}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$OUT/gpu.txt"
# Training output goes to $TRAIN_OUT (not --out: the archive below must find it).
TRAIN_OUT=${TRAIN_OUT:-out/train}
python3 train/train.py --minutes "$MIN" --out "$TRAIN_OUT" "$@" 2>&1 | tee "$OUT/train.log"
tar czf "$OUT/results.tgz" models model/tests/golden "$TRAIN_OUT"/log.csv "$TRAIN_OUT"/val.csv "$TRAIN_OUT"/summary.json
# The checkpoint comes back too: a later call resumes from it (carry out/train/ckpt.pt, add --resume),
# since this machine's disk does not outlive the lease.
cp "$TRAIN_OUT"/ckpt.pt "$OUT/ckpt.pt"
