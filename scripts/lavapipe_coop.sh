#!/usr/bin/env bash
# Runs a command against Debian unstable's lavapipe (Mesa 26 or later), whose shader compiler
# lowers cooperative matrices of any size to plain arithmetic, so that the cooperative-matrix
# shaders (linear_coop, linear_direct_coop, block_coop; attention_coop needs subgroups of 32 or
# 64 and lavapipe has 8) run on the CPU and can be checked against the CPU reference without a GPU:
#
#   bash scripts/lavapipe_coop.sh ./target/release/tessel check --network vulkan
#   TESSEL_VK_COOP_DIRECT=1 bash scripts/lavapipe_coop.sh ./target/release/tessel check --network vulkan
#
# That lavapipe lists f16 cooperative matrices at 8x8x8 alone; TESSEL_VK_COOPMAT_ANY_SIZE=1 (set
# here) makes tessel take its 16x16x16 path there anyway, which the Vulkan spec does not allow: a
# development harness, not a conformant run and never a timing (docs/ENGINE.md, "Checking the
# cooperative-matrix shaders without a GPU"). Debian 12's own lavapipe (Mesa 25.0) lists none.
#
# The first run downloads unstable's Mesa Vulkan drivers, its Vulkan loader and glibc with their
# dependencies (about 40 packages, 66 MB) from the Debian archive in the machine's apt sources
# (suite sid), checks each against the index's SHA256, and unpacks them into .tools/lavapipe-sid
# (nothing is installed into the system); the command then runs under that tree's dynamic
# loader. A command built here (against Debian 12's glibc) runs under the newer one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sid="$root/.tools/lavapipe-sid"
# The Debian archive this machine's apt already uses (its first source of a Debian suite other
# than the security archive's), asked for the suite sid; DEBIAN_MIRROR overrides it.
apt_archive() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /=/) { if ($(i + 1) !~ /-security$/) print $i; break } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && awk -v RS= '/(^|\n)Types:[^\n]*deb([ \n]|$)/ && !/Suites:[^\n]*-security/ { if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { u = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", u); print u } }' "$f"
  done
}
if [ ! -f "$sid/lvp.json" ]; then
  mirror=${DEBIAN_MIRROR:-$(apt_archive | sed -n 1p)}
  mirror=${mirror%/}
  if [ -z "$mirror" ]; then
    echo "lavapipe_coop: no Debian archive in /etc/apt/sources.list or /etc/apt/sources.list.d/ (set DEBIAN_MIRROR)" >&2
    exit 1
  fi
  echo "lavapipe_coop: fetching Debian unstable's lavapipe into $sid" >&2
  mkdir -p "$sid/debs" "$sid/root"
  curl -fsS "$mirror/dists/sid/main/binary-amd64/Packages.xz" | xz -dc > "$sid/Packages"
  python3 - "$sid/Packages" > "$sid/files.txt" <<'EOF'
import sys
# The packages mesa-vulkan-drivers, libvulkan1 and libc6 need, by Depends and Pre-Depends (first
# alternative; virtual names through Provides).
pk, cur = {}, {}
for line in open(sys.argv[1], encoding="utf-8"):
    if line == "\n":
        if "Package" in cur:
            pk.setdefault(cur["Package"], cur)
        cur = {}
    elif line[0] != " ":
        k, _, v = line.partition(":")
        cur[k] = v.strip()
provides = {}
for name, p in pk.items():
    for x in p.get("Provides", "").split(","):
        if x.strip():
            provides.setdefault(x.strip().split(" ")[0], name)
skip = {"debconf", "debconf-2.0", "libc-bin", "base-files", "dpkg", "install-info"}
need, seen = ["mesa-vulkan-drivers", "libvulkan1", "libc6"], set()
while need:
    n = need.pop()
    n = n if n in pk else provides.get(n, n)
    if n in seen or n in skip or n not in pk:
        continue
    seen.add(n)
    for field in ("Depends", "Pre-Depends"):
        for d in pk[n].get(field, "").split(","):
            d = d.split("|")[0].strip().split(" ")[0].split(":")[0]
            if d:
                need.append(d)
for n in sorted(seen):
    print(pk[n]["Filename"], pk[n]["SHA256"])
EOF
  while read -r f sum; do
    deb="$sid/debs/$(basename "$f")"
    curl -fsS -o "$deb" "$mirror/$f"
    echo "$sum  $deb" | sha256sum -c --quiet - || { echo "lavapipe_coop: $mirror/$f does not match the index's SHA256" >&2; exit 1; }
    dpkg -x "$deb" "$sid/root"
  done < "$sid/files.txt"
  lib="$sid/root/usr/lib/x86_64-linux-gnu"
  [ -f "$lib/libvulkan_lvp.so" ] || { echo "lavapipe_coop: no libvulkan_lvp.so in the unpacked packages" >&2; exit 1; }
  printf '{ "file_format_version": "1.0.1", "ICD": { "library_path": "%s", "api_version": "1.4.0" } }\n' "$lib/libvulkan_lvp.so" > "$sid/lvp.json"
  rm -rf "$sid/debs"
fi
lib="$sid/root/usr/lib/x86_64-linux-gnu"
export VK_DRIVER_FILES="$sid/lvp.json" TESSEL_VK_COOPMAT_ANY_SIZE=1
exec "$sid/root/usr/lib64/ld-linux-x86-64.so.2" --library-path "$lib" "$@"
