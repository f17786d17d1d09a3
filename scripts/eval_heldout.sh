#!/usr/bin/env bash
# Held-out quality: `tessel scene` sequences (the Rust generator; no sequence of it is used in
# training) at 1.5x, 2x, 3x for every scene kind, run through the network (CPU reference), the
# classical TAAU (`--network none`) and the contract's reconstruction with the model's fixed head
# (`--network fixed`, the earlier baseline), scored by `tessel compare` over frames 8..31. Prints a
# markdown table; each case folder gets side_by_side.png (3x crops of frame 31: bicubic, tessel,
# TAAU, fixed head, ground truth).
#   bash scripts/eval_heldout.sh [OUT_DIR] [SIZE] [SEED] [MODEL_DIR]
# KINDS="light translucent screen thin" scores the hazard kinds instead (default: the five
# original kinds). SCENES=DIR keeps the generated scenes there (DIR/SEED/KIND-RATIO) and reuses
# them in later runs; BASE=DIR takes the TAAU and fixed-head outputs from an earlier run's OUT_DIR
# on the same scenes instead of replaying them (a new model then costs one replay per case).
set -euo pipefail
OUT=${1:-out/heldout}; SIZE=${2:-640x360}; SEED=${3:-1001}
# The model: the fourth argument, else the shipped one (model/src/lib.rs SHIPPED_MODEL).
MODEL=${4:-models/$(sed -n 's/^pub const SHIPPED_MODEL: &str = "\(.*\)";/\1/p' model/src/lib.rs)}
T=./target/release/tessel
[ -x "$T" ] || cargo build --release -q
mkdir -p "$OUT"
for ratio in 1.5 2 3; do
  for kind in ${KINDS:-street fabric traffic night mixed}; do
    d="$OUT/$kind-$ratio"
    s="$d/scene"; [ -n "${SCENES:-}" ] && s="$SCENES/$SEED/$SIZE/$kind-$ratio"
    [ -f "$s/frames.json" ] || $T scene --kind "$kind" --seed "$SEED" --ratio "$ratio" --size "$SIZE" --frames 32 --out "$s" >/dev/null
    $T replay "$s/frames.json" --network cpu --model "$MODEL" --out "$d/net" >/dev/null 2>&1
    if [ -n "${BASE:-}" ]; then
      taau="$BASE/$kind-$ratio/taau"; fixed="$BASE/$kind-$ratio/fixed"
      [ -d "$taau" ] && [ -d "$fixed" ] || { echo "eval_heldout: BASE=$BASE has no $kind-$ratio/taau and fixed" >&2; exit 1; }
    else
      taau="$d/taau"; fixed="$d/fixed"
      $T replay "$s/frames.json" --network none --model "$MODEL" --out "$taau" >/dev/null 2>&1
      $T replay "$s/frames.json" --network fixed --model "$MODEL" --out "$fixed" >/dev/null 2>&1
    fi
    $T compare "$d/net" "$s/frames.json" --also "$taau" --also "$fixed" --json "$d/compare.json" --picture "$d/side_by_side.png" --crops-only >/dev/null
    echo "done $kind $ratio" >&2
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, os
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "compare.json"))):
    kind, ratio = os.path.basename(os.path.dirname(f)).rsplit("-", 1)
    m = json.load(open(f))["methods"]
    rows.setdefault(ratio, []).append((kind, m[0], m[1], m[2], m[3]))
print("| ratio | kind | bicubic dB | fixed head dB | TAAU dB | tessel dB | TAAU - fixed | tessel - TAAU | temporal fixed | temporal TAAU | temporal tessel |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for ratio in sorted(rows, key=float):
    acc = [0.0] * 7
    for kind, b, n, t, fx in rows[ratio]:
        vals = (b["mean_psnr"], fx["mean_psnr"], t["mean_psnr"], n["mean_psnr"], fx["mean_temporal"], t["mean_temporal"], n["mean_temporal"])
        acc = [a + v for a, v in zip(acc, vals)]
        print(f"| {ratio}x | {kind} | {vals[0]:.2f} | {vals[1]:.2f} | {vals[2]:.2f} | {vals[3]:.2f} | {vals[2]-vals[1]:+.2f} | {vals[3]-vals[2]:+.2f} | {vals[4]:.4f} | {vals[5]:.4f} | {vals[6]:.4f} |")
    k = len(rows[ratio]); a = [v / k for v in acc]
    print(f"| **{ratio}x** | **mean** | {a[0]:.2f} | {a[1]:.2f} | {a[2]:.2f} | {a[3]:.2f} | **{a[2]-a[1]:+.2f}** | **{a[3]-a[2]:+.2f}** | {a[4]:.4f} | {a[5]:.4f} | {a[6]:.4f} |")
PY
