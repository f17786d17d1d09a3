#!/usr/bin/env bash
# What the sm_90a fused-block kernels become in machine code, offline (no GPU): for each kernel its
# registers, stack and spill bytes (ptxas -v), its instructions (static count) and the most
# registers live at once (nvdisasm's life ranges); with a kernel named, the source lines that
# take the most of its instructions. The assembler is the CUDA 13.0 one, the version of the
# device machine's driver (580), whose JIT compiles the same PTX at load.
#
#   bash scripts/sass_report.sh [KERNEL_REGEX] [-- CFLAGS...]
#     KERNEL_REGEX (default: tessel_block_): the kernels to list; one kernel matched exactly
#       (e.g. tessel_block_embed_mma_c32$) also prints its top source lines and where it spills
#       (each spill store and reload with its address and source line).
#     CFLAGS go to clang as in kernels/build.rs (e.g. -- -DTS_WIDE_OCC=4).
#   Tools: PyPI's nvidia-cuda-nvcc 13.0.88 and nvidia-cuda-nvdisasm into .tools/sass (once).
# Instruction counts are static: a loop's body counts once, and both sides of a run-time choice
# (kill switches) count. Compare a kernel with itself across a change, not kernels with each other.
set -euo pipefail
cd "$(dirname "$0")/.."
re=${1:-tessel_block_}
shift || true
[ "${1:-}" = -- ] && shift
tools=$PWD/.tools/sass
if [ ! -x "$tools/nvidia/cu13/bin/ptxas" ] || [ ! -x "$tools/nvidia/cu13/bin/nvdisasm" ]; then
  echo "sass_report: installing ptxas 13.0 and nvdisasm into .tools/sass" >&2
  python3 -m pip install -q --disable-pip-version-check --no-warn-script-location --no-deps --target "$tools" \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-nvdisasm==13.5.37 >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{ for f in kernels/*.hip; do echo "#include \"$PWD/$f\""; done; } > "$work/all.hip"
clang-19 -x cuda --cuda-gpu-arch=sm_90a --cuda-device-only -nocudalib -nocudainc -Xclang -target-feature -Xclang +ptx80 \
  -S -O3 -gline-tables-only -Ikernels/include "$@" "$work/all.hip" -o "$work/k.ptx" 2> "$work/clang.log" \
  || { cat "$work/clang.log" >&2; exit 1; }
"$tools/nvidia/cu13/bin/ptxas" -v -O3 -lineinfo -arch=sm_90a "$work/k.ptx" -o "$work/k.cubin" 2> "$work/ptxas.log"
# Life ranges and line information are two listings (nvdisasm prints one or the other).
"$tools/nvidia/cu13/bin/nvdisasm" -lrm count "$work/k.cubin" > "$work/k.live" 2> /dev/null
"$tools/nvidia/cu13/bin/nvdisasm" -g "$work/k.cubin" > "$work/k.sass" 2> /dev/null
python3 - "$work" "$re" <<'PY'
import collections, re, sys
work, pattern = sys.argv[1], sys.argv[2]
props, cur = {}, None
for l in open(f"{work}/ptxas.log"):
    m = re.search(r"Compiling entry function '(\w+)'", l)
    if m:
        cur = m.group(1)
        props[cur] = [0, 0, 0]
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores", l)
    if m and cur:
        props[cur][1:] = [int(m.group(1)), int(m.group(2))]
    m = re.search(r"Used (\d+) registers", l)
    if m and cur:
        props[cur][0] = int(m.group(1))
# Per kernel: instructions and the peak of live registers (k.live), instructions per source
# line (k.sass).
kern, stats, line = None, {}, None
for l in open(f"{work}/k.live"):
    m = re.match(r"\s*\.text\.(\w+):", l)
    if m:
        kern = m.group(1)
        stats[kern] = [0, 0, collections.Counter(), []]
        continue
    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+.*?;\s*//\s*\|\s*(\d+)", l)
    if m and kern:
        stats[kern][0] += 1
        stats[kern][1] = max(stats[kern][1], int(m.group(1)))
for l in open(f"{work}/k.sass"):
    m = re.match(r"\s*\.text\.(\w+):", l)
    if m:
        kern, line = m.group(1), None
        continue
    m = re.search(r'## File "([^"]+)", line (\d+)', l)
    if m:
        line = (m.group(1), int(m.group(2)))
        continue
    if kern in stats and re.match(r"\s+/\*[0-9a-f]{4,}\*/\s", l):
        stats[kern][2][line] += 1
        # Spill stores and reloads: where the assembler ran out of registers.
        m = re.match(r"\s+/\*([0-9a-f]+)\*/\s+((?:STL|LDL)\S*)\s+([^;(]+)", l)
        if m:
            stats[kern][3].append((m.group(1), m.group(2), m.group(3).strip(), line))
names = sorted(k for k in stats if re.search(pattern, k))
print(f"{'kernel':44} {'regs':>4} {'stack':>5} {'spill':>5} {'instrs':>6} {'live':>4}")
for k in names:
    r, st, sp = props.get(k, [0, 0, 0])
    print(f"{k:44} {r:4} {st:5} {sp:5} {stats[k][0]:6} {stats[k][1]:4}")
sources = {}  # each source file read once
def source_line(path, n):
    if path not in sources:
        try:
            sources[path] = open(path).read().split("\n")
        except OSError:
            sources[path] = []
    lines = sources[path]
    return lines[n - 1].strip()[:80] if 0 < n <= len(lines) else ""
if len(names) == 1:
    print(f"\nsource lines with the most of {names[0]}'s instructions:")
    for key, c in stats[names[0]][2].most_common(25):
        if key is None:
            continue
        path, n = key
        print(f"{c:5} {path.split('/')[-1]}:{n:<5} {source_line(path, n)}")
    spills = stats[names[0]][3]
    if spills:
        print(f"\n{names[0]}'s spill stores and reloads (address, instruction, source line):")
        for addr, op, args, key in spills:
            where = f"{key[0].split('/')[-1]}:{key[1]}" if key else "?"
            print(f"  {addr:>6} {op:7} {args:16} {where}")
PY
