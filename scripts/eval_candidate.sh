#!/usr/bin/env bash
# A candidate model on the held-out scenes against earlier outputs on the same scenes: replays
# only the candidate (CPU reference) and scores it with `tessel compare` beside the shipped
# model's, the classical TAAU's and the fixed head's outputs from earlier runs of
# scripts/eval_heldout.sh (or of this script). Prints a markdown table with the differences.
#   bash scripts/eval_candidate.sh MODEL_DIR OUT_DIR SEED
# SCENES (default out/scenes): the cached scenes, SCENES/SEED/640x360/KIND-RATIO/frames.json.
# SHIPPED, TAAU, FIXED: folders holding KIND-RATIO/net, KIND-RATIO/taau and KIND-RATIO/fixed.
set -euo pipefail
MODEL=${1:?MODEL_DIR} OUT=${2:?OUT_DIR} SEED=${3:?SEED}
SCENES=${SCENES:-out/scenes}
: "${SHIPPED:?SHIPPED=DIR with KIND-RATIO/net}" "${TAAU:?TAAU=DIR with KIND-RATIO/taau}" "${FIXED:?FIXED=DIR with KIND-RATIO/fixed}"
T=${TESSEL:-./target/release/tessel}
[ -x "$T" ] || { echo "eval_candidate.sh: $T: no tessel binary (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT"
for ratio in 1.5 2 3; do
  for kind in ${KINDS:-street fabric traffic night mixed light translucent screen thin}; do
    c="$kind-$ratio" s="$SCENES/$SEED/640x360/$kind-$ratio/frames.json"
    for need in "$s" "$SHIPPED/$c/net" "$TAAU/$c/taau" "$FIXED/$c/fixed"; do
      [ -e "$need" ] || { echo "eval_candidate.sh: $need missing" >&2; exit 1; }
    done
    [ -f "$OUT/$c/compare.json" ] && continue
    "$T" replay "$s" --network cpu --model "$MODEL" --out "$OUT/$c/net" >/dev/null 2>&1
    "$T" compare "$OUT/$c/net" "$s" --also "$SHIPPED/$c/net" --also "$TAAU/$c/taau" --also "$FIXED/$c/fixed" --json "$OUT/$c/compare.json" >/dev/null
    echo "done $c" >&2
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "compare.json"))):
    kind, ratio = os.path.basename(os.path.dirname(f)).rsplit("-", 1)
    m = json.load(open(f))["methods"]  # bicubic, candidate, shipped, TAAU, fixed
    rows.setdefault(ratio, []).append((kind, [x["mean_psnr"] for x in m[1:]], [x["mean_temporal"] for x in m[1:4]]))
print("| ratio | kind | new dB | shipped dB | TAAU dB | fixed dB | new - shipped | new - TAAU | temporal new | temporal shipped | temporal TAAU |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for ratio in sorted(rows, key=float):
    acc = [0.0] * 7
    for kind, p, t in rows[ratio]:
        v = p + t
        acc = [a + x for a, x in zip(acc, v)]
        print(f"| {ratio}x | {kind} | {p[0]:.2f} | {p[1]:.2f} | {p[2]:.2f} | {p[3]:.2f} | {p[0]-p[1]:+.3f} | {p[0]-p[2]:+.2f} | {t[0]:.4f} | {t[1]:.4f} | {t[2]:.4f} |")
    a = [x / len(rows[ratio]) for x in acc]
    print(f"| **{ratio}x** | **mean** | {a[0]:.2f} | {a[1]:.2f} | {a[2]:.2f} | {a[3]:.2f} | **{a[0]-a[1]:+.3f}** | **{a[0]-a[2]:+.2f}** | {a[4]:.4f} | {a[5]:.4f} | {a[6]:.4f} |")
PY
