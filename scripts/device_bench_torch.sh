#!/usr/bin/env bash
# On the GPU machine: the shipped network alone in PyTorch (fp16, CUDA graphs, torch.compile).
set -euo pipefail
OUT=${OUT:-out/device}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu_bench.txt"
python3 train/bench_torch.py --compile --out "$OUT/bench_torch.json" 2>&1 | tee "$OUT/bench_torch.log"
