#!/usr/bin/env bash
# Part of `make test`: the shaders' network on the cooperative-matrix path, every linear shader
# (linear_coop.comp staged with TESSEL_VK_COOP_DIRECT=0; linear_direct_coop.comp by role, the
# default, and in every layer that can with TESSEL_VK_COOP_DIRECT=2, each MLP in one dispatch,
# mlp_direct_coop.comp with its weights in shared memory or from the buffer, its block's
# attention projection taken first where the MLP runs in one dispatch, and with
# TESSEL_VK_COOP_MLP=0 in two), against the
# CPU reference through `tessel check`, on Debian unstable's lavapipe (scripts/lavapipe_coop.sh:
# a development harness outside the Vulkan spec, where Debian 12's lavapipe has no cooperative
# matrices). Fails when a check fails or the path did not run; says "skipped" loudly when that
# lavapipe cannot be fetched (no network, the mirror changed).
set -uo pipefail
cd "$(dirname "$0")/.."
tessel=${TESSEL:-./target/release/tessel}
[ -x "$tessel" ] || cargo build --release --bin tessel
if ! bash scripts/lavapipe_coop.sh "$tessel" info > /tmp/tessel-lavapipe-coop-info.txt 2>&1; then
  echo "skipped: no unstable lavapipe (scripts/lavapipe_coop.sh failed: $(tail -1 /tmp/tessel-lavapipe-coop-info.txt)): the cooperative-matrix shaders were not checked on the CPU"
  exit 0
fi
if ! grep -q "cooperative matrix f16 16x16x16 (forced" /tmp/tessel-lavapipe-coop-info.txt; then
  echo "skipped: unstable lavapipe lists no f16 cooperative matrices: the cooperative-matrix shaders were not checked on the CPU"
  exit 0
fi
fail=0
# The third run keeps the MLPs' and the linear layers' weights in the buffer (TESSEL_VK_COOP_MLP_W=0,
# TESSEL_VK_COOP_LINEAR_W=0); the second copies them into shared memory where they fit lavapipe's
# 32 KiB (level 0's MLP; the embedding, every proj and the head).
for run in "0 1 1 results staged in shared memory" "1 1 1 results straight from the accumulators where it pays" "2 1 0 in every layer that can (TESSEL_VK_COOP_DIRECT=2), MLPs in one dispatch wherever they fit (TESSEL_VK_COOP_MLP=0 for two), their weights from the buffer" "2 0 1 MLPs in two dispatches"; do
  read -r direct mlp mlpw words <<< "$run"
  log=/tmp/tessel-lavapipe-coop-check-$direct$mlp$mlpw.txt
  env="TESSEL_VK_COOP_DIRECT=$direct TESSEL_VK_COOP_MLP=$mlp TESSEL_VK_COOP_MLP_W=$mlpw TESSEL_VK_COOP_LINEAR_W=$mlpw"
  echo "tessel check --network vulkan on unstable lavapipe, cooperative-matrix shaders, $env"
  env $env bash scripts/lavapipe_coop.sh "$tessel" check --network vulkan > "$log" 2>&1
  rc=$?
  grep -E "^(summary|backend|vulkan) " "$log"
  want="network: shaders (cooperative matrix f16 16x16x16"
  forced="cooperative matrix: yes (f16 16x16x16, forced by TESSEL_VK_COOPMAT_ANY_SIZE=1"
  # Where an MLP runs in one dispatch, the register path is asked for and refused (subgroups of 8
  # here: the layout probe does not run), and the start-up line says why.
  regs="their activations in shared memory (the register paths need subgroups of 32, the device's are"
  [ "$direct" != 0 ] && [ "$mlp" = 1 ] || regs="$want"
  if [ $rc != 0 ] || ! grep -qF "$want" "$log" || ! grep -qF "$words" "$log" || ! grep -qF "$forced" "$log" || ! grep -qF "$regs" "$log"; then
    echo "FAILED: $env (exit $rc; the start-up line must name \"$want\", \"$words\" and \"$regs\"; log $log):"
    grep -E "network:|error" "$log" | cut -c1-400
    fail=1
  fi
done
exit $fail
