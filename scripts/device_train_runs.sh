#!/usr/bin/env bash
# On the GPU machine (device tool): several training runs side by side for the same wall-clock
# time, an A/B/C... in one call. Runs are spread over the GPUs present (run i on GPU i mod count),
# so on one GPU they share it: three runs there moved 1.1 to 1.2x the frames a second of one run
# alone (eighteenth session), so sharing saves a call and a data cache, not GPU time. Each run's
# ms/step in its log says how fast it went.
#   bash scripts/device_train_runs.sh MINUTES "COMMON ARGS" "ARGS A" "ARGS B" [...]
#   e.g. bash scripts/device_train_runs.sh 6 "--init models/tessel-v10 --size 256 --batch 32 --cache 96 --deadline 450" \
#          "--chunk 4" "--chunk 16 --ema 0.996"
# The training and validation sequences are generated once (train.py --data-only with the common
# arguments) into one data cache that every run reads, so runs differ only by their own arguments
# (a run's own --size, --cache, --frames or --hazards would generate other sequences). Each run
# has its own training folder, package and golden folder (out/runs/a, b, ...), so no two write
# the same file. Everything comes back as $OUT/a.tgz, b.tgz, ... (the package, golden vectors,
# logs) and their checkpoints ckpt_a.pt, ... where the device tool's 8 files allow, else inside
# each archive (a later call can --resume from them: RESUME=DIR copies DIR/ckpt_a.pt ... to the
# runs' folders first, and each run's arguments then include --resume).
# EVAL=SEED also scores every run's package (and the common --init package) on the held-out
# scenes of that seed at 640x360 through the PyTorch twin (train/eval_twin.py; EVAL_ALSO="LABEL=PACKAGE
# ..." scores more packages beside them; a run with
# --exp-dilate-choice is scored with that head): $OUT/eval.md and eval.json (EVAL_KINDS: fewer kinds). The scenes are
# generated while the runs train, by `tessel scene` from scripts/device_build.sh's binaries (carry
# .carrypack and unpack it first); give the runs' --deadline about 100 s less for it.
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
KINDS=${EVAL_KINDS:-street fabric traffic night mixed light translucent screen thin}
SCENES=out/runs/scenes/${EVAL:-none}/640x360
export SCENES EVAL
if [ -n "${EVAL:-}" ]; then
  [ -x .carry/bin/tessel ] || { echo "device_train_runs: EVAL needs .carry/bin/tessel (scripts/device_build.sh; unpack .carrypack/carry.txz)" >&2; exit 2; }
  mkdir -p "$SCENES"
  # One scene a core, in the background while the data and the runs use the GPU.
  for k in $KINDS; do for r in 1.5 2 3; do echo "$k $r"; done; done |
    xargs -P "$(nproc)" -n 2 sh -c '[ -f "$SCENES/$0-$1/frames.json" ] || .carry/bin/tessel scene --kind "$0" --seed "$EVAL" --ratio "$1" --size 640x360 --frames 32 --out "$SCENES/$0-$1" >/dev/null' \
    > "$OUT/scenes.log" 2>&1 &
  scenes=$!
fi
# shellcheck disable=SC2086  # the arguments are word lists by design
python3 train/train.py --data-only --data-cache "$CACHE" --out out/runs/data $COMMON 2>&1 | tee -a "$OUT/gpu.txt"
names=(a b c d); pids=()
for i in $(seq 0 $(($# - 1))); do
  r=${names[$i]}; d=out/runs/$r; args=${*:$((i + 1)):1}; mkdir -p "$d"
  if [ -n "${RESUME:-}" ]; then
    [ -f "$RESUME/ckpt_$r.pt" ] || { echo "device_train_runs: RESUME=$RESUME has no ckpt_$r.pt" >&2; exit 2; }
    mkdir -p "$d/train"; cp "$RESUME/ckpt_$r.pt" "$d/train/ckpt.pt"; args="$args --resume"
  fi
  echo "run $r on GPU $((i % GPUS)): $COMMON $args" | tee -a "$OUT/gpu.txt"
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES=$((i % GPUS)) python3 train/train.py --minutes "$MIN" --out "$d/train" --data-cache "$CACHE" \
    --golden "$d/golden" --package "$d/tessel-dev" $COMMON $args > "$d/train.log" 2>&1 &
  pids+=($!)
done
runs=("${names[@]:0:$#}")
alive() { for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
# Progress on the call's output: the last line of each log once a minute (looking every 5 s, so
# the call goes on as soon as the last run ends).
t=0
while alive; do
  sleep 5; t=$((t + 5))
  [ $((t % 60)) = 0 ] && for r in "${runs[@]}"; do echo "$r: $(tail -n 1 out/runs/$r/train.log 2>/dev/null | cut -c1-200)"; done
done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=$?; done
for r in "${runs[@]}"; do echo "=== run $r"; tail -n 8 out/runs/$r/train.log; done
# One small archive per run and the checkpoints beside them (the data cache stays), before the
# held-out scoring, so that a call which runs out of time still returns the runs. The device tool
# returns 8 files: an archive a run, gpu.txt, and with EVAL eval.md and eval.json; checkpoints where
# they fit.
files=$((2 * $# + 1)); [ -n "${EVAL:-}" ] && files=$((files + 2))
for r in "${runs[@]}"; do
  # (a run of --exp-layout writes no golden vectors)
  # The checkpoint comes back as a file of its own where the 8 files allow, else inside the archive.
  ck=(); [ "$files" -gt 8 ] && [ -f out/runs/$r/train/ckpt.pt ] && ck=(out/runs/$r/train/ckpt.pt)
  tar czf "$OUT/$r.tgz" out/runs/$r/train.log $(ls -d out/runs/$r/golden out/runs/$r/tessel-dev 2>/dev/null) \
    $(ls -d out/runs/$r/train/*.csv out/runs/$r/train/*.json 2>/dev/null) "${ck[@]}"
  if [ "$files" -le 8 ] && [ -f out/runs/$r/train/ckpt.pt ]; then cp out/runs/$r/train/ckpt.pt "$OUT/ckpt_$r.pt"; fi
done
if [ -n "${EVAL:-}" ]; then
  wait "$scenes" || { echo "device_train_runs: generating the held-out scenes failed ($OUT/scenes.log)" >&2; rc=1; }
  pk=()
  init=$(echo "$COMMON" | grep -o -- '--init [^ ]*' | cut -d' ' -f2 || true)
  [ -n "$init" ] && pk+=("init=$init")
  # EVAL_ALSO: more LABEL=PACKAGE pairs scored beside the runs (a reference the runs did not start from).
  # shellcheck disable=SC2206
  pk+=(${EVAL_ALSO:-})
  for i in $(seq 0 $((${#runs[@]} - 1))); do
    r=${runs[$i]}; args=${*:$((i + 1)):1}; exp=""
    case " $COMMON $args " in *" --exp-dilate-choice "*) exp=":dilate_choice" ;; esac
    [ -f out/runs/$r/tessel-dev/model.json ] && pk+=("$r=out/runs/$r/tessel-dev$exp")
  done
  echo "=== held-out seed $EVAL through the twin: ${pk[*]}"
  python3 train/eval_twin.py "$SCENES" "${pk[@]}" --json "$OUT/eval.json" > "$OUT/eval.md" 2>> "$OUT/gpu.txt" || rc=1
  grep -F "**mean**" "$OUT/eval.md" || tail -n 5 "$OUT/gpu.txt"
  rm -f "$OUT/scenes.log"
fi
exit $rc
