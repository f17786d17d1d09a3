#!/usr/bin/env python3
"""Checks the head layouts that move the current frame's gather (train.py --exp-layout luma_shift,
luma_aniso, luma_edge, luma_edge_stretch; tessel_train/net.py LAYOUTS, stages.gather_weights) on the
shipped package:
- started by experimental.adapt_layout, each gives the same frames as the package's own network
  with its residual rows averaged into luma (the contract's gather) to float precision: their
  gather channels start at 0, the contract's round Gaussian;
- with a shift, each tap's weight is the Gaussian at the moved centre; with a stretch u along x,
  the weights follow exp(-(d^2 + u (dx^2 - dy^2)) / 2 sigma^2) against the round Gaussian's; on a
  luma ramp along x, luma_edge's stretch and shift act along x by the ramp's edge strength.

    python3 train/check_layout.py
"""
import dataclasses
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL, stages  # noqa: E402
from tessel_train.experimental import adapt_layout  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.net import GATHER_ANISO, GATHER_EDGE_EPS, GATHER_SHIFT, TesselNet  # noqa: E402

ROOT = os.path.dirname(HERE)


def frames(nets, n=3, seed=7):
    """n frames of a random scene through stages.step for each network; -> their outputs."""
    g = torch.Generator().manual_seed(seed)
    W, H, rw, rh = 40, 24, 20, 12
    hists = [stages.new_history(1, W, H, "cpu") for _ in nets]
    outs = [[] for _ in nets]
    for t in range(n):
        color = torch.rand(1, 4, rh, rw, generator=g) * 2
        motion = (torch.rand(1, 2, rh, rw, generator=g) - 0.5) * 2
        depth = torch.rand(1, 1, rh, rw, generator=g)
        p = stages.prepare(color, motion, depth, (W, H))
        jitter, reset = torch.rand(1, 2, generator=g) - 0.5, torch.tensor([t == 0])
        for i, net in enumerate(nets):
            with torch.no_grad():
                o, hists[i], _ = stages.step(net, p, hists[i], jitter, reset, t)
            outs[i].append(o)
    return [torch.stack(o) for o in outs]


def luma_contract(src):
    """The package with each pixel slot's residual rows replaced by their mean (adapt_layout's luma
    residual, written in the contract's three channels)."""
    net = TesselNet(src.cfg)
    sd = {k: v.clone() for k, v in src.state_dict().items()}
    for wk, bk in (("head.weight", "head.bias"), ("pixel_head.weight", "pixel_head.bias")):
        if wk not in sd:
            continue
        w, b = sd[wk], sd[bk]
        for s in range(0, w.shape[0], 8):
            w[s + 3:s + 6], b[s + 3:s + 6] = w[s + 3:s + 6].mean(0), b[s + 3:s + 6].mean()
    net.load_state_dict(sd)
    return net


def check_start(src):
    nets = []
    names = ("luma_shift", "luma_aniso", "luma_edge", "luma_edge_stretch")
    for layout in names:
        net = TesselNet(dataclasses.replace(src.cfg, layout=layout))
        adapt_layout(net, src)
        nets.append(net)
    ref, *outs = frames([luma_contract(src)] + nets)
    for name, o in zip(names, outs):
        err = (o - ref).abs().max().item()
        assert err < 1e-5, f"{name} starts {err} from the package with a luma residual"
    assert ref.std() > 0.05, "the check's frames are flat"
    print(f"{', '.join(names)} start as the package with a luma residual (3 frames, within 1e-5)")


def check_weights():
    g = torch.Generator().manual_seed(3)
    B, H, W = 1, 5, 6
    # The taps on the render grid around a random sub-pixel offset (as stages.pixel_context has them).
    grid = torch.tensor([[k % 3 - 1, k // 3 - 1] for k in range(9)], dtype=torch.float32).view(1, 9, 2, 1, 1)
    dq = (torch.rand(B, 1, 2, H, W, generator=g) - 0.5) - grid
    ctx = dict(dq=dq, d2=dq[:, :, 0] ** 2 + dq[:, :, 1] ** 2)
    sigma = 0.3 + torch.rand(B, H, W, generator=g)
    gauss = lambda d2: torch.exp(-d2 / (2 * sigma.unsqueeze(1) ** 2))
    norm = lambda w: w / w.sum(1, keepdim=True)
    h = torch.zeros(B, 8, H, W)
    h[:, 4], h[:, 5] = 0.7, -0.4
    ctl = dict(stages.decode(h, "luma_shift"), sigma=sigma)
    s = GATHER_SHIFT * torch.tanh(torch.tensor([0.7, -0.4]))
    want = gauss((dq[:, :, 0] + s[0]) ** 2 + (dq[:, :, 1] + s[1]) ** 2)
    err = (norm(stages.gather_weights(ctx, ctl)) - norm(want)).abs().max().item()
    assert err < 1e-5, f"luma_shift: the gather's weights are {err} from the Gaussian at the moved centre"
    h[:, 4], h[:, 5] = 0.9, 0.0
    ctl = dict(stages.decode(h, "luma_aniso"), sigma=sigma)
    u = GATHER_ANISO * torch.tanh(torch.tensor(0.9)) / 2 ** 0.5
    want = gauss(ctx["d2"] + u * (dq[:, :, 0] ** 2 - dq[:, :, 1] ** 2))
    got = norm(stages.gather_weights(ctx, ctl))
    err = (got - norm(want)).abs().max().item()
    assert err < 1e-5, f"luma_aniso: the gather's weights are {err} from the stretched Gaussian"
    assert (got - norm(gauss(ctx["d2"]))).abs().max() > 1e-3, "luma_aniso: a stretch left the weights round"
    # A luma ramp along x (0.5 a render px; the luma weights sum to 1, so grey colours carry it).
    ctx["c"] = (-0.5 * dq[:, :, 0]).unsqueeze(2).expand(-1, -1, 3, -1, -1)
    nx = 0.5 / (0.25 + GATHER_EDGE_EPS ** 2) ** 0.5
    h[:, 4], h[:, 5] = 0.8, 0.6
    e, sh = GATHER_ANISO * torch.tanh(torch.tensor(0.8)), GATHER_SHIFT * torch.tanh(torch.tensor(0.6))
    for layout, shift in (("luma_edge", sh), ("luma_edge_stretch", 0.0)):
        ctl = dict(stages.decode(h, layout), sigma=sigma)
        dx, dy = dq[:, :, 0] + shift * nx, dq[:, :, 1]
        want = gauss(dx ** 2 + dy ** 2 + e * nx ** 2 * (dx ** 2 - dy ** 2))
        err = (norm(stages.gather_weights(ctx, ctl)) - norm(want)).abs().max().item()
        assert err < 1e-5, f"{layout}: the gather's weights on a ramp are {err} from the Gaussian stretched along its edge"
    print("the shifted and stretched gathers' weights match their Gaussians (within 1e-5)")


def main():
    torch.manual_seed(0)
    src, _ = load_net(os.path.join(ROOT, SHIPPED_MODEL))
    check_start(src)
    check_weights()
    print("check_layout: all passed")


if __name__ == "__main__":
    main()
