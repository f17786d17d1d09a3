#!/usr/bin/env bash
# Kernel variants timed side by side on the GPU machine: the native network's test binary
# (hip-net/tests/network_gpu.rs: head agreement on the golden cases, GPU time per launch and as
# graphs) built here once per variant, then run there in alternating rounds so that clocks and
# heat treat every variant alike.
#
#   here:   bash scripts/device_variants.sh build NAME='CFLAGS' [NAME='CFLAGS' ...] [NAME=rev:COMMIT]
#             CFLAGS go to TESSEL_KERNEL_CFLAGS (kernels/build.rs), e.g. exp='-DTS_SILU_MODE=0';
#             rev:COMMIT builds that commit's tree in a git worktree (a baseline from before a change);
#             env:VAR=VALUE runs the default build with that environment (a run-time switch,
#             e.g. rows1=env:TESSEL_HIP_ROW_TILES=1).
#             The binaries go to .carry/variants/NAME and into .carrypack/variants.txz.
#             EXTRA="split_gpu in_vulkan_gpu" builds those test binaries as well (NAME.split_gpu,
#             NAME.in_vulkan_gpu): their long sequences against the shaders' network show drift
#             that one frame of the golden cases does not. FRAME=1 builds the tessel binary too
#             (NAME.tessel): each round then times the whole Vulkan frame at 4K, stage by stage,
#             the way to compare shader changes (rev:COMMIT variants).
#   device: tar xJf .carrypack/variants.txz && bash scripts/device_variants.sh run [ROUNDS]
#             (carry .carrypack and .gl as for device_check.sh); a table of the medians at the end.
#   device, run-time switches alone: tar xJf .carrypack/carry.txz (scripts/device_build.sh) &&
#             bash scripts/device_variants.sh link NAME= NAME=env:VAR=VALUE ... && ... run [ROUNDS]
#             (every variant the carried build in .carry/bin, in its own environment: nothing to
#             build per variant, and no variants.txz to carry).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?build or run}
shift

# newest TARGET_DIR TEST: the newest build of a test binary (cargo names them with a hash).
newest() { ls -t "$1"/release/deps/"$2"-* | grep -v '\.d$' | head -1; }

build_one() {
  local name=$1 spec=$2 dir=.carry/variants tgt=target flags= wt=
  local tests="--test network_gpu ${EXTRA:+$(printf -- '--test %s ' $EXTRA)}"
  mkdir -p "$dir"
  if [[ $spec == rev:* ]]; then
    wt=/tmp/tessel-variant-$name
    tgt=/tmp/tessel-variant-target
    rm -rf "$wt"
    git worktree add --force --detach "$wt" "${spec#rev:}" >/dev/null
    # The worktree has no .tools of its own: the shaders' compiler comes from this checkout.
    # shellcheck disable=SC2086
    (cd "$wt" && export GLSLANG_VALIDATOR=${GLSLANG_VALIDATOR:-$OLDPWD/.tools/glslang/cmeel.prefix/bin/glslangValidator} CARGO_TARGET_DIR=$tgt &&
      cargo test --release -p tessel-hip $tests --no-run 2>&1 | tail -2 &&
      if [ "${FRAME:-0}" = 1 ]; then cargo build --release --bin tessel 2>&1 | tail -1; fi)
  else
    # One build of every binary the variant needs (env: the default flags).
    flags=$spec
    [[ $spec == env:* ]] && flags=
    # shellcheck disable=SC2086
    TESSEL_KERNEL_CFLAGS="$flags" cargo test --release -p tessel-hip $tests --no-run 2>&1 | tail -2
    if [ "${FRAME:-0}" = 1 ]; then TESSEL_KERNEL_CFLAGS="$flags" cargo build --release --bin tessel 2>&1 | tail -1; fi
  fi
  cp "$(newest $tgt network_gpu)" "$dir/$name"
  for t in ${EXTRA:-}; do cp "$(newest $tgt "$t")" "$dir/$name.$t"; done
  if [ "${FRAME:-0}" = 1 ]; then cp "$tgt/release/tessel" "$dir/$name.tessel"; fi
  if [ -n "$wt" ]; then git worktree remove --force "$wt"; fi
  echo "$name: ${spec:-(default flags)}" >> "$dir/VARIANTS"
}

if [ "$mode" = build ]; then
  rm -rf .carry/variants
  for v in "$@"; do build_one "${v%%=*}" "${v#*=}"; done
  # Leave the default build in target/ as it was.
  cargo test --release -p tessel-hip --test network_gpu --no-run 2>&1 | tail -1
  if [ "${FRAME:-0}" = 1 ]; then cargo build --release --bin tessel 2>&1 | tail -1; fi
  mkdir -p .carrypack
  tar cJf .carrypack/variants.txz .carry/variants
  ls -la .carry/variants .carrypack/variants.txz
  exit 0
fi

if [ "$mode" = link ]; then
  rm -rf .carry/variants
  mkdir -p .carry/variants
  for v in "$@"; do
    n=${v%%=*} spec=${v#*=}
    [ -z "$spec" ] || [[ $spec == env:* ]] || { echo "link takes NAME= or NAME=env:VAR=VALUE, not '$v'"; exit 2; }
    ln -s ../bin/network_gpu .carry/variants/$n
    ln -s ../bin/tessel .carry/variants/$n.tessel
    echo "$n: ${spec:-(default flags)}" >> .carry/variants/VARIANTS
  done
  cat .carry/variants/VARIANTS
  exit 0
fi

[ "$mode" = run ] || { echo "usage: $0 build NAME=CFLAGS ... | link NAME=[env:VAR=VALUE] ... | run [ROUNDS]"; exit 2; }
set +e  # a variant that fails is reported, and the others still run
rounds=${1:-2}
OUT=${OUT:-out/variants}
mkdir -p "$OUT"
export TESSEL_GOLDEN_DIR=$PWD/model/tests/golden
cat .carry/variants/VARIANTS
names=$(sed 's/:.*//' .carry/variants/VARIANTS)
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
# A commit's build looks for the model beside the worktree it was built in.
for n in $(grep ': rev:' .carry/variants/VARIANTS | sed 's/:.*//'); do ln -sfn "$PWD" /tmp/tessel-variant-$n; done
# The environment a variant runs with (env:VAR=VALUE variants), as `env` arguments.
variant_env() { sed -n "s/^$1: env://p" .carry/variants/VARIANTS; }
# A command of variant $n, in its environment.
# shellcheck disable=SC2046
# Each command is bounded (VARIANT_TIMEOUT seconds, 150 by default): a variant that hangs (an
# experiment's barrier never completing) is reported and skipped in later rounds, and the others
# still run.
run_variant() { timeout "${VARIANT_TIMEOUT:-150}" env $(variant_env "$n") "$@"; }
hung=" "
for r in $(seq 1 "$rounds"); do
  for n in $names; do
    echo "=== $n round $r ($(date -u +%H:%M:%S))"
    if [[ $hung == *" $n "* ]]; then echo "skipped: $n hung before"; continue; fi
    if [ "$r" = 1 ]; then
      run_variant .carry/variants/$n --test-threads=1 --nocapture native_network_matches > "$OUT/golden_$n.log" 2>&1
      rc=$?
      if [ $rc = 124 ]; then echo "FAILED: $n golden hung (over ${VARIANT_TIMEOUT:-150} s)"; hung="$hung$n "; continue; fi
      [ $rc = 0 ] || echo "FAILED: $n golden"
      grep -E "registers|worst head" "$OUT/golden_$n.log" | sort -u
    fi
    run_variant .carry/variants/$n --test-threads=1 --nocapture native_network_gpu_time > "$OUT/time_${n}_$r.log" 2>&1 || echo "FAILED: $n time"
    grep -E "native network|^  [a-z]|^tessel-" "$OUT/time_${n}_$r.log" | grep -v registers
    if [ -x .carry/variants/$n.tessel ]; then
      # The whole frame on the Vulkan path (the front and back stages, and the network as
      # `auto` runs it), GPU timestamps: the resident pass of 200 frames back to back.
      run_variant .carry/variants/$n.tessel bench --network vulkan --size 3840x2160 --ratio 2 --frames 200 > "$OUT/frame_${n}_$r.log" 2>&1 || echo "FAILED: $n frame"
      grep -E "back to back" "$OUT/frame_${n}_$r.log"
    fi
    if [ "$r" = 1 ] && [ -x .carry/variants/$n.split_gpu ]; then
      run_variant .carry/variants/$n.split_gpu --test-threads=1 --nocapture split_frame_with > "$OUT/split_$n.log" 2>&1 || echo "FAILED: $n split"
      grep -E "1,000 frames" "$OUT/split_$n.log"
    fi
    if [ "$r" = 1 ] && [ -x .carry/variants/$n.in_vulkan_gpu ]; then
      run_variant .carry/variants/$n.in_vulkan_gpu --test-threads=1 --nocapture native_network_in_vulkan_matches_the_shaders > "$OUT/in_vulkan_$n.log" 2>&1 || echo "FAILED: $n in_vulkan"
      grep -E "300 frames" "$OUT/in_vulkan_$n.log"
    fi
  done
done
echo
echo "variant | round: ms as graphs at 3840x2160 (2560x1440), the default model / the fast preset | worst head dB"
for n in $names; do
  line="$n |"
  for r in $(seq 1 "$rounds"); do
    # One figure per shipped package (the default's, then the fast preset's), joined by "/".
    big=$(grep -oP "native network 3840x2160.*?, \K[0-9.]+(?= ms as graphs)" "$OUT/time_${n}_$r.log" | paste -sd/ || echo "?")
    small=$(grep -oP "native network 2560x1440.*?, \K[0-9.]+(?= ms as graphs)" "$OUT/time_${n}_$r.log" | paste -sd/ || echo "?")
    line="$line $big ($small)"
  done
  line="$line | $(grep -oP 'worst head: \K[0-9.]+' "$OUT/golden_$n.log" || echo '?')"
  [ -f "$OUT/split_$n.log" ] && line="$line | split worst $(grep -oP '1,000 frames, worst \K[0-9.]+' "$OUT/split_$n.log" | sort -n | head -1)"
  [ -f "$OUT/in_vulkan_$n.log" ] && line="$line | in Vulkan vs shaders worst $(grep -oP '300 frames.*worst \K[0-9.]+' "$OUT/in_vulkan_$n.log")"
  for r in $(seq 1 "$rounds"); do
    [ -f "$OUT/frame_${n}_$r.log" ] && line="$line | frame $(grep -oP 'back to back.*?frame \K[0-9.]+' "$OUT/frame_${n}_$r.log"), input $(grep -oP 'back to back.*?input \K[0-9.]+' "$OUT/frame_${n}_$r.log")"
  done
  echo "$line"
done
