#!/usr/bin/env bash
# Builds here (x86-64, release) everything scripts/device_check.sh runs on the GPU machine, and
# copies it into .carry/bin (git-ignored; the device tool carries it with `carry: [".carry", ".gl"]`).
# Also fetches the Vulkan loader debs into .gl once (the GPU machine has no loader of its own).
set -euo pipefail
cd "$(dirname "$0")/.."
# --bins as well: `--examples` alone selects only the examples, and the tessel binary copied
# below would be whatever an earlier build left (it once carried an older PTX to the device).
cargo build --release --workspace --bins --examples
cargo test --release --workspace --no-run
mkdir -p .carry/bin
cp target/release/tessel target/release/examples/engine_bench .carry/bin/
# Test binaries that need a GPU (cargo names them with a hash; take the newest of each).
for name in against_cpu engine fused network_gpu gpu split_gpu in_vulkan_gpu; do
  t=$(ls -t target/release/deps/${name}-* | grep -v '\.d$' | head -1)
  cp "$t" .carry/bin/$name
done
if [ ! -f .gl/libvulkan1_*.deb ] 2>/dev/null; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
ls -la .carry/bin
# One compressed archive of .carry: the device tool carries at most 64 MiB with the tree, and the
# binaries alone are twice that. xz, not gzip: the binaries embed the same code objects, which
# xz's long window finds again (9 MB against gzip's 27, which with the tree's 38 MB went over the
# limit in the fiftieth session; about 50 s on two cores). Carry [".carrypack", ".gl"] and unpack
# it first:
#   tar xJf .carrypack/carry.txz && bash scripts/device_check.sh quick
mkdir -p .carrypack
tar cJf .carrypack/carry.txz --exclude .carry/variants .carry  # variants: scripts/device_variants.sh
ls -la .carrypack
