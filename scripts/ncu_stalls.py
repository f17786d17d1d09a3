#!/usr/bin/env python3
"""Where the fused blocks' warps wait: reads Nsight Compute's source page (`ncu -i REP --page source
--csv --print-source cuda,sass`) and prints, per kernel, the stall reasons' shares of all samples
and the source lines holding the most samples, each with its two largest reasons.

    python3 scripts/ncu_stalls.py source_cuda_sass.csv [TOP]

The report comes from a device run such as docs/bench/2026-12-07-s58/call2/run.sh (its ncu.tgz)."""
import csv, sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else 'source_cuda_sass.csv'
top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
kernels = defaultdict(list)  # name -> [(file, line, source, samples, {reason: n})]
file = func = header = None
for row in csv.reader(open(path, newline='')):
    if not row:
        continue
    if row[0] == 'File Path':
        file = row[1].split('/')[-1]
        continue
    if row[0] == 'Function Name':
        func = row[1]
        continue
    if row[0] == 'Line No':
        header = row
        continue
    if header is None or not row[0] or row[0] == '':
        continue  # SASS rows
    rec = dict(zip(header[4:], row[4:]))
    try:
        n = int(rec['Warp Stall Sampling (All Samples)'])
    except (ValueError, KeyError):
        continue
    reasons = {k: int(v) for k, v in rec.items() if k.startswith('stall_') and '(Not Issued)' not in k and v.isdigit()}
    # A source line that is an asm statement with a comma spanning lines can shift the row's
    # later columns: a reason above the line's own sample count is such a shifted column.
    reasons = {k: v for k, v in reasons.items() if v <= n}
    kernels[func].append((file, int(row[0]), row[1].strip(), n, reasons))
for func, lines in kernels.items():
    total = sum(l[3] for l in lines)
    agg = defaultdict(int)
    for l in lines:
        for k, v in l[4].items():
            agg[k] += v
    print(f'\n== {func}: {total} samples; by reason: ' + ', '.join(f'{k[6:]} {100 * v / total:.0f} %' for k, v in sorted(agg.items(), key=lambda kv: -kv[1]) if v / total >= 0.02))
    for f, ln, src, n, r in sorted(lines, key=lambda l: -l[3])[:top]:
        rs = ', '.join(f'{k[6:]} {v}' for k, v in sorted(r.items(), key=lambda kv: -kv[1])[:2])
        print(f'  {100 * n / total:5.1f} %  {f}:{ln:<4} ({rs})  {src[:110]}')
