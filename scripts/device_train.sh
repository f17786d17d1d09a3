#!/usr/bin/env bash
# On the GPU machine (device tool): train, export the package and golden vectors, benchmark the
# trained network in PyTorch. Everything worth keeping goes to $OUT (results.tgz + logs).
#   bash scripts/device_train.sh MINUTES [extra train.py args...]
set -euo pipefail
MIN=${1:-7}; shift || true
OUT=${OUT:-out/device}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$OUT/gpu.txt"
python3 train/train.py --minutes "$MIN" --out out/train "$@" 2>&1 | tee "$OUT/train.log"
tar czf "$OUT/results.tgz" models/tessel-v1 model/tests/golden out/train/log.csv out/train/summary.json
