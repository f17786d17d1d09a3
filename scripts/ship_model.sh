#!/usr/bin/env bash
# The mechanical part of shipping a trained package (CPU, here): it becomes models/NAME, the
# shipped model of the Rust crates and of the PyTorch twin, with golden vectors written by the twin
# from it; then the checks that tie them together run. What stays by hand: the held-out tables and
# docs/MODEL.md, the figures quoted in README.md and tests/cli.rs, BENCHMARKS.md, and the GPU
# paths' agreement (`PACK=1 bash scripts/device_check.sh quick` on the device machine, after
# scripts/device_build.sh) before the commit that ships it.
#   bash scripts/ship_model.sh PACKAGE_DIR tessel-vN
set -euo pipefail
cd "$(dirname "$0")/.."
PKG=${1:?package folder (model.json + weights.safetensors)}; NAME=${2:?name, e.g. tessel-v12}
[[ $NAME =~ ^tessel-v[0-9]+$ ]] || { echo "ship_model: name '$NAME' is not tessel-vN" >&2; exit 2; }
for f in model.json weights.safetensors; do
  [ -f "$PKG/$f" ] || { echo "ship_model: $PKG/$f: missing" >&2; exit 2; }
done
DEST=models/$NAME
[ ! -e "$DEST" ] || { echo "ship_model: $DEST exists already" >&2; exit 2; }
OLD=$(sed -n 's/^pub const SHIPPED_MODEL: &str = "\(.*\)";/\1/p' model/src/lib.rs)
[ -n "$OLD" ] || { echo "ship_model: model/src/lib.rs: no SHIPPED_MODEL line" >&2; exit 2; }

# The package, renamed, its origin in the provenance (the weights and their hash stay as trained).
mkdir -p "$DEST"
cp "$PKG/weights.safetensors" "$DEST/"
python3 - "$PKG" "$DEST" "$NAME" <<'EOF' || { rm -rf "$DEST"; exit 2; }
import json, sys
src, dest, name = sys.argv[1:]
mj = json.load(open(f"{src}/model.json"))
if mj.get("format") != "tessel-model" or not mj.get("trained"):
    sys.exit(f"ship_model: {src}/model.json: not a trained tessel-model package (format {mj.get('format')!r}, trained {mj.get('trained')!r})")
mj["name"] = name
mj.setdefault("provenance", {})["shipped_from"] = src
open(f"{dest}/model.json", "w").write(json.dumps(mj, indent=2))
EOF
# The Rust crates' and the twin's shipped model.
sed -i "s/^pub const SHIPPED_MODEL: &str = \"$OLD\";/pub const SHIPPED_MODEL: \&str = \"$NAME\";/" model/src/lib.rs
sed -i "s|^SHIPPED_MODEL = \"models/$OLD\"|SHIPPED_MODEL = \"models/$NAME\"|" train/tessel_train/__init__.py
grep -q "\"$NAME\"" model/src/lib.rs && grep -q "models/$NAME\"" train/tessel_train/__init__.py ||
  { echo "ship_model: SHIPPED_MODEL not updated in model/src/lib.rs or train/tessel_train/__init__.py" >&2; exit 1; }
# Golden vectors from the twin with the new package: the cases of the shipped model (the seeded
# cases, whose small networks do not depend on it, stay as committed).
python3 - "$DEST" <<'EOF'
import sys
sys.path.insert(0, "train")
from tessel_train.export import load_net
from tessel_train.golden import write_all
net, _ = load_net(sys.argv[1])
write_all(net, "model/tests/golden", sys.argv[1], seeded=False)
EOF
echo "ship_model: $OLD -> $NAME; golden vectors rewritten; checking"
python3 train/check_golden.py
# check PATTERN CMD...: runs CMD, shows its lines matching PATTERN; on a failure its whole output,
# and the script stops there with the failure's status.
check() {
  local pattern=$1 log rc=0; shift
  log=$(mktemp)
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then cat "$log" >&2; rm -f "$log"; echo "ship_model: failed ($rc): $*" >&2; exit "$rc"; fi
  grep -E "$pattern" "$log" || true
  rm -f "$log"
}
check "^test result" cargo test --release -p tessel-model
check "^test |^test result" cargo test --release --test cli shipped_model
echo "ship_model: left by hand: held-out tables (train/eval_twin.py or scripts/eval_candidate.sh), docs/MODEL.md, README.md and tests/cli.rs figures, BENCHMARKS.md, scripts/device_check.sh on the GPU; models/$OLD stays until removed"
