#!/usr/bin/env python3
"""How much could the classical TAAU's output add to a model's, mixed in? A bound for issue 13.

    python3 train/mix_bound.py SCENES [--model DIR] [--work DIR] [--json FILE]

SCENES holds `tessel scene` folders named KIND-RATIO (e.g. out/scenes/1001/640x360). Each is
replayed through the network (CPU reference) and the classical TAAU (`--network none`), outputs
kept under --work and reused; every frame's PSNR here is checked against `tessel replay`'s own.
Over frames 8.., on tonemapped colour as `tessel compare` scores it, per kind and ratio:
- a uniform mix out = (1 - a) net + a taau for a few a (what a fixed blend would give), with its
  temporal error (RMS of the frame-to-frame change's error; pairs across a reset left out);
- an oracle that knows the truth and picks the best a in [0, 1] for every B x B block of output
  pixels (B = 1 is a per-pixel choice; B = 4 is one token's pixels). The two outputs are mixed
  after the fact, each with its own history, so this bounds what a learned per-pixel mix of the
  two finished frames could add, not what a network that sees the TAAU's frame could do.
Needs numpy only.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL  # noqa: E402
from tessel_train.heldout import check_tessel, psnr, read_output, replay, scene_cases, tonemapped  # noqa: E402

ROOT = os.path.dirname(HERE)
START = 8
ALPHAS = (0.0, 0.15, 0.25, 0.35, 0.5, 1.0)
BLOCKS = (1, 4, 8, 16)


def read_tm(path, W, H, e):
    """An output or reference plane as tonemapped RGB [H, W, 3], as `tessel compare` scores it."""
    return tonemapped(read_output(path, W, H, "mix_bound"), e)


def block_oracle(net, taau, gt, b):
    """net mixed toward taau by the least-squares a in [0, 1] of each b x b block (edges keep net)."""
    H, W = gt.shape[:2]
    h, w = H // b * b, W // b * b
    d = (taau - net)[:h, :w].reshape(h // b, b, w // b, b, 3)
    r = (gt - net)[:h, :w].reshape(h // b, b, w // b, b, 3)
    a = np.clip((d * r).sum((1, 3, 4)) / ((d * d).sum((1, 3, 4)) + 1e-12), 0.0, 1.0)
    out = net.copy()
    out[:h, :w] += (a[:, None, :, None, None] * d).reshape(h, w, 3)
    return out


def case(tessel, scene, model, work):
    frames = os.path.join(scene, "frames.json")
    fj = json.load(open(frames))
    W, H = fj["output"]
    e = float(fj.get("settings", {}).get("exposure", 1.0) or 1.0)
    reps = {k: replay(tessel, frames, n, model, os.path.join(work, k), "mix_bound") for k, n in (("net", "cpu"), ("taau", "none"))}
    ps = {a: [] for a in ALPHAS}
    tmp = {a: [] for a in ALPHAS}
    blk = {b: [] for b in BLOCKS}
    prev = None
    for i in range(START, len(fj["frames"])):
        f = fj["frames"][i]
        gt = read_tm(os.path.join(scene, f["reference"]), W, H, e)
        out = {k: read_tm(os.path.join(work, k, f"o{i:04d}.bin"), W, H, e) for k in reps}
        for k, o in out.items():
            mine, theirs = psnr(o, gt), reps[k]["frames"][i]["psnr"]
            if abs(mine - theirs) > 0.01:
                sys.exit(f"mix_bound: {work}/{k} frame {i}: {mine:.3f} dB here, {theirs:.3f} in its report.json")
        mixed = {a: (1 - a) * out["net"] + a * out["taau"] for a in ALPHAS}
        for a, m in mixed.items():
            ps[a].append(psnr(m, gt))
            if prev is not None and not f.get("reset", False):
                tmp[a].append(float(np.sqrt((((m - prev[1][a]) - (gt - prev[0])) ** 2).mean())))
        for b in BLOCKS:
            blk[b].append(psnr(block_oracle(out["net"], out["taau"], gt, b), gt))
        prev = (gt, mixed)
    mean = lambda v: float(np.mean(v))  # noqa: E731
    return dict(psnr={str(a): mean(v) for a, v in ps.items()}, temporal={str(a): mean(v) for a, v in tmp.items()},
                oracle={str(b): mean(v) for b, v in blk.items()})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes")
    ap.add_argument("--model", default=None)
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "mix-bound"))
    ap.add_argument("--tessel", default=os.path.join(ROOT, "target", "release", "tessel"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    model = a.model or os.path.join(ROOT, SHIPPED_MODEL)
    check_tessel(a.tessel, "mix_bound")
    cases = scene_cases(a.scenes, "mix_bound")
    per = {}
    for k, c in enumerate(cases):
        print(f"[{k + 1}/{len(cases)}] {c}", file=sys.stderr, flush=True)
        per[c] = case(a.tessel, os.path.join(a.scenes, c), model, os.path.join(a.work, c))
    ratios = sorted({c.rsplit("-", 1)[1] for c in cases}, key=float)
    print(f"Over the classical TAAU, frames {START}.., model {os.path.relpath(model, ROOT)}; mean of kinds (least kind), dB.\n")
    print("| ratio | " + " | ".join(f"mix a = {x}" for x in ALPHAS[:-1]) + " | " +
          " | ".join(f"oracle {b}x{b}" for b in BLOCKS) + " |")
    print("|---|" + "---|" * (len(ALPHAS) - 1 + len(BLOCKS)))
    for r in ratios:
        cs = [c for c in per if c.endswith(f"-{r}")]
        lead = lambda key, x: [per[c][key][x] - per[c]["psnr"]["1.0"] for c in cs]  # noqa: E731
        cells = [f"{np.mean(lead('psnr', str(x))):+.2f} ({min(lead('psnr', str(x))):+.2f})" for x in ALPHAS[:-1]]
        cells += [f"{np.mean(lead('oracle', str(b))):+.2f}" for b in BLOCKS]
        print(f"| {r}x | " + " | ".join(cells) + " |")
    print("\nKinds whose temporal error is above the TAAU's, by mix:")
    for r in ratios:
        cs = [c for c in per if c.endswith(f"-{r}")]
        cells = [f"a = {x}: " + (", ".join(c.rsplit('-', 1)[0] for c in cs if per[c]["temporal"][str(x)] >= per[c]["temporal"]["1.0"]) or "none")
                 for x in ALPHAS[:-1]]
        print(f"- {r}x: " + "; ".join(cells))
    if a.json:
        json.dump(dict(model=model, scenes=a.scenes, cases=per), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
