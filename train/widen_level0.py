#!/usr/bin/env python3
"""A level 0 of twice the width made from a package's, computing the same head, as a start for
train.py --arch-from ... --exp-over-budget (docs/MODEL.md, "A level 0 twice as wide"): the
capacity test that the added blocks of the twenty-second session left open (width, not depth, at
the level that squeezes a token's 16 pixels into C channels).

Every level-0 stream x becomes [x, x]. LayerNorm sees the same mean and deviation there, so its
output is [LN(x), LN(x)] with its scale and shift repeated; the heads are channel groups of 16, so
the new heads 2C/16.. are copies of the old ones (their position bias repeated). Every product that
writes into the stream (or into the queries, keys, values and hidden units, which widen alike)
repeats its rows; every product that reads a widened vector splits each weight w into
w (1/2 + e) and w (1/2 - e) over the two copies, e drawn from [-EPS, EPS]: the same sum, so the
same head, while the two copies get different gradients (equal halves would stay equal forever).
merge1 and expand1 do the same per child; the head reads through a split; levels 1 and 2, the pixel
embedding and the per-pixel head path are copied.

    python3 train/widen_level0.py models/tessel-v12 OUT [--eps 0.25]

Prints how far the wide network's head is from the package's on random tokens (f32, no package
rounding) and writes the package (f16 weights; the split halves round on their own).
"""
import argparse
import dataclasses
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train as trainer  # noqa: E402  (train.py: the package's baseline)
from tessel_train.export import export_package, load_net  # noqa: E402
from tessel_train.net import TesselNet  # noqa: E402

EPS = 0.25


def widen(src, eps, seed=0):
    """A TesselNet whose level 0 has twice src's channels and computes src's head (in exact arithmetic)."""
    c = src.cfg.channels[0]
    cfg = dataclasses.replace(src.cfg, channels=[2 * c] + list(src.cfg.channels[1:]))
    net = TesselNet(cfg)
    g = torch.Generator().manual_seed(seed)
    theirs = src.state_dict()
    sd = dict(theirs)

    def rows(t, groups=1):
        """Each of `groups` consecutive row blocks repeated: [a, a, b, b, ...]."""
        return torch.cat([torch.cat([blk, blk], 0) for blk in t.chunk(groups, 0)], 0)

    def cols(w, groups=1):
        """Each of `groups` column blocks split over its two copies: the same sum on [x, x]."""
        out = []
        for blk in w.chunk(groups, 1):
            e = (torch.rand(blk.shape, generator=g) * 2 - 1) * eps
            out += [blk * (0.5 + e), blk * (0.5 - e)]
        return torch.cat(out, 1)

    sd["embed.weight"], sd["embed.bias"] = rows(theirs["embed.weight"]), rows(theirs["embed.bias"])
    for name in [k[: -len(".rpb")] for k in theirs if k.endswith(".rpb") and k.startswith(("enc0.", "dec0."))]:
        p = lambda s: f"{name}.{s}"  # noqa: E731
        for n in ("norm1", "norm2"):
            sd[p(f"{n}.weight")], sd[p(f"{n}.bias")] = rows(theirs[p(f"{n}.weight")]), rows(theirs[p(f"{n}.bias")])
        sd[p("rpb")] = rows(theirs[p("rpb")])
        sd[p("qkv.weight")] = cols(rows(theirs[p("qkv.weight")], 3))
        sd[p("qkv.bias")] = rows(theirs[p("qkv.bias")], 3)
        for n in ("proj", "fc1", "fc2"):
            sd[p(f"{n}.weight")] = cols(rows(theirs[p(f"{n}.weight")]))
            sd[p(f"{n}.bias")] = rows(theirs[p(f"{n}.bias")])
    sd["merge1.weight"] = cols(theirs["merge1.weight"], 4)
    sd["expand1.weight"], sd["expand1.bias"] = rows(theirs["expand1.weight"], 4), rows(theirs["expand1.bias"], 4)
    sd["head_norm.weight"], sd["head_norm.bias"] = rows(theirs["head_norm.weight"]), rows(theirs["head_norm.bias"])
    sd["head.weight"] = cols(theirs["head.weight"])
    net.load_state_dict(sd)
    return net


def head_gap(src, net, seed=1):
    """Largest |head difference| and the source head's range over random tokens at all eight window phases."""
    g = torch.Generator().manual_seed(seed)
    worst, span = 0.0, 0.0
    with torch.no_grad():
        for phase in range(8):
            tokens = torch.rand(1, 32, 64, 16 * src.cfg.pixel_embed, generator=g) * 1.2 - 0.2
            a, b = src(tokens, phase), net(tokens, phase)
            worst, span = max(worst, (a - b).abs().max().item()), max(span, (a.max() - a.min()).item())
    return worst, span


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package")
    ap.add_argument("out")
    ap.add_argument("--eps", type=float, default=EPS, help="how unevenly a read weight splits over the two copies")
    a = ap.parse_args()
    if not 0.0 <= a.eps < 0.5:
        sys.exit("--eps lies in [0, 0.5)")
    src, mj = load_net(a.package)
    src = src.float().eval()
    if not src.cfg.in_contract:
        sys.exit(f"{a.package}: not a contract network")
    net = widen(src, a.eps).eval()
    worst, span = head_gap(src, net)
    print(f"level 0 {src.cfg.channels[0]} -> {net.cfg.channels[0]} channels; {net.cfg.flops(3840, 2160) / 1e9:.2f} GFLOP at 3840x2160 "
          f"(the source {src.cfg.flops(3840, 2160) / 1e9:.2f}); head against the source's on random tokens: largest difference "
          f"{worst:.2e} of a range of {span:.2f}")
    if worst > 1e-3 * span:
        sys.exit("the widened head differs from the source's: not written")
    export_package(net, a.out, os.path.basename(os.path.normpath(a.out)),
                   f"{a.package}'s network with level 0 widened to {net.cfg.channels[0]} channels by train/widen_level0.py (untrained since)",
                   trainer.package_baseline(mj)[0], dict(trainer="train/widen_level0.py", source=a.package, eps=a.eps), trained=False)
    print(f"package: {a.out}")


if __name__ == "__main__":
    main()
