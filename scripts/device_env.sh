# Sourced by the device scripts (device_check.sh, device_front.sh) on the GPU machine, from the
# repository root: the Vulkan loader, which that machine lacks, from the carried Debian packages
# (.gl, scripts/device_build.sh), NVIDIA's driver file, a pipeline cache outside the tree, the
# golden vectors, and B, the folder of the carried binaries.
for f in .gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done
ldconfig 2>/dev/null || true
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export XDG_CACHE_HOME=/tmp/tessel-cache TESSEL_GOLDEN_DIR=$PWD/model/tests/golden
B=.carry/bin
