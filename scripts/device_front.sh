#!/usr/bin/env bash
# The per-pixel stages' settings against each other on the GPU machine: by default the input
# stage's streamed 3x3 against its kill switch (TESSEL_VK_INPUT_STREAM=0); VARIANTS="name=ENV,ENV
# name=..." names others (e.g. "wg8x8= wg16x8=TESSEL_VK_INPUT_WG=16x8"). Each runs `tessel bench
# --network vulkan` in alternated rounds on the same machine, then `tessel check` in each variant's
# environment.
#   here:   bash scripts/device_build.sh
#   device: tar xJf .carrypack/carry.txz && OUT=$OUT bash scripts/device_front.sh [ROUNDS]
# (carry: .carrypack and .gl). Prints one table of medians (ms): frame, input stage,
# reconstruction, for 3840x2160 and 2560x1440 at ratio 2; the JSON and log of every run go into
# $OUT/front.tgz (the device tool brings back only a few files a call).
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
OUT=${OUT:-out/device-front}
mkdir -p "$OUT"
# The GPU machine has no Vulkan loader of its own (scripts/device_env.sh sets B as well).
source scripts/device_env.sh
read -r -a variants <<< "${VARIANTS:-on= off=TESSEL_VK_INPUT_STREAM=0}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== pipeline statistics (TESSEL_PIPELINE_STATS=1)"
for v in "${variants[@]}"; do
  env $(echo "${v#*=}" | tr , " ") TESSEL_PIPELINE_STATS=1 $B/tessel bench --network vulkan --size 640x360 --ratio 2 --frames 3 2>&1 \
    | grep -E "^pipeline (input|reconstruct)" | sed -E "s/\[[0-9, ]*\]//; s/^/${v%%=*} /" | cut -c1-300
done
for r in $(seq 1 "$rounds"); do
  for size in 3840x2160 2560x1440; do
    for v in "${variants[@]}"; do
      name=${v%%=*}
      env $(echo "${v#*=}" | tr , ' ') $B/tessel bench --network vulkan --size $size --ratio 2 --frames 200 --json "$OUT/bench_${name}_${size}_r$r.json" > "$OUT/bench_${name}_${size}_r$r.log" 2>&1 \
        || { echo "FAILED: bench $name $size round $r"; tail -5 "$OUT/bench_${name}_${size}_r$r.log"; }
    done
  done
done
python3 - "$OUT" "$rounds" "${variants[@]%%=*}" <<'EOF'
import json, sys
out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("| variant | size | frame ms, rounds | input ms, rounds | reconstruct ms, rounds |")
print("|---|---|---|---|---|")
for size in ("3840x2160", "2560x1440"):
    for name in names:
        cols = {"frame_ms": [], "input_ms": [], "reconstruct_ms": []}
        for r in range(1, rounds + 1):
            try:
                b = json.load(open(f"{out}/bench_{name}_{size}_r{r}.json"))["backends"][0]
            except (OSError, KeyError, IndexError, ValueError):
                continue
            for k in cols:
                cols[k].append(f"{b[k]['median']:.3f}")
        print(f"| {name} | {size} | " + " | ".join(", ".join(v) or "-" for v in cols.values()) + " |")
EOF
for v in "${variants[@]}"; do
  echo "=== tessel check, ${v%%=*} (${v#*=})"
  env $(echo "${v#*=}" | tr , ' ') $B/tessel check 2>&1 | tail -6
done
(cd "$OUT" && tar czf front.tgz bench_* && rm -f bench_*)
