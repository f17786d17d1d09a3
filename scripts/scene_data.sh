#!/usr/bin/env bash
# Sequences of `tessel scene` (the generator of the held-out scenes, docs/MODEL.md) for train.py's
# --scene-data and --scene-val: every kind at 1.5x, 2x and 3x for COUNT seeds from FIRST, FRAMES
# frames (the scene cuts at FRAMES / 2) at SIZE x SIZE, one folder each, many at once.
#   bash scripts/scene_data.sh DIR FIRST COUNT FRAMES SIZE
# The held-out seeds (1001, 1002), the shipped-model test's (777) and the demo's (2026) are refused,
# and so are the classical TAAU's tuning seeds (100-103), which stay its own.
set -euo pipefail
dir=${1:?DIR} first=${2:?FIRST} count=${3:?COUNT} frames=${4:?FRAMES} size=${5:?SIZE}
TESSEL=${TESSEL:-target/release/tessel}
KINDS=${KINDS:-"street fabric traffic night mixed light translucent screen thin"}
[ -x "$TESSEL" ] || { echo "scene_data.sh: $TESSEL: no tessel binary (cargo build --release, or set TESSEL)" >&2; exit 2; }
for s in $(seq "$first" $((first + count - 1))); do
  case $s in 1001|1002|777|2026|100|101|102|103) echo "scene_data.sh: seed $s is held out or the TAAU's; pick another range" >&2; exit 2;; esac
done
mkdir -p "$dir"
t0=$(date +%s)
for s in $(seq "$first" $((first + count - 1))); do
  for k in $KINDS; do for r in 1.5 2 3; do echo "$k $r $s"; done; done
done | RAYON_NUM_THREADS=1 xargs -P "${JOBS:-$(nproc)}" -n 3 sh -c \
  'out="$1/$5_$6x_$7"; [ -f "$out/frames.json" ] || "$2" scene --kind "$5" --ratio "$6" --seed "$7" --frames "$3" --size "$4x$4" --out "$out" > /dev/null' \
  _ "$dir" "$TESSEL" "$frames" "$size"
n=$(find "$dir" -name frames.json | wc -l)
echo "scene_data.sh: $n sequences in $dir ($(( $(date +%s) - t0 )) s)"
