#!/usr/bin/env python3
"""Checks train.py --exp-grow's start (tessel_train/experimental.py grown_config, grow_from) on
the shipped package: each grown network's head equals the package's on random tokens at every
window phase (its new blocks and per-pixel MLP start as the identity; with more pixel features its
tokens equal the package's whatever the new features hold), its FLOPs grow by what its
new parts cost, and a growth that would move a trained block to a layer of the other parity (other
windows) is refused.

    python3 train/check_grow.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL, stages  # noqa: E402
from tessel_train.experimental import grow_from, grown_config  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.net import TesselNet  # noqa: E402

ROOT = os.path.dirname(HERE)


def main():
    src, _ = load_net(os.path.join(ROOT, SHIPPED_MODEL))
    src.eval()
    g = torch.Generator().manual_seed(3)
    tokens = torch.randn(1, 32, 64, 16 * src.cfg.pixel_embed, generator=g)
    base_flops = src.cfg.flops(3840, 2160)
    for spec, extra in [("mid=4", 2 * 32_640 * (16 * 96 * 96 + 256 * 96)),
                        ("dec0=2", 522_240 * (16 * 32 * 32 + 256 * 32)),
                        ("pixel_mlp=16", 2 * 522_240 * 16 * (16 * 16 + 16 * 8)),
                        ("features=phase+motion+spread", 2 * 522_240 * 16 * 4 * 8)]:
        cfg = grown_config(src.cfg, spec)
        net = TesselNet(cfg)
        new = grow_from(net, src)
        net.eval()
        assert new, f"{spec}: nothing new"
        if cfg.extra_features:  # the same network on tokens embedded from more features
            f = torch.randn(1, src.cfg.pixel_features, 24, 40, generator=g)
            more = torch.randn(1, cfg.pixel_features - src.cfg.pixel_features, 24, 40, generator=g)
            with torch.no_grad():
                err = (stages.tokens(src, f) - stages.tokens(net, torch.cat([f, more], 1))).abs().max().item()
            assert err == 0.0, f"{spec}: the tokens differ from the package's by {err}"
        for phase in range(8):
            with torch.no_grad():
                a, b = src(tokens, phase), net(tokens, phase)
            err = (a - b).abs().max().item()
            assert err == 0.0, f"{spec}: the grown network's head differs from the package's by {err} at phase {phase}"
        got = cfg.flops(3840, 2160) - base_flops
        assert got == extra, f"{spec}: FLOPs grew by {got}, expected {extra}"
        print(f"--exp-grow {spec}: head equal at 8 phases; +{got / 1e9:.2f} GFLOP at 3840x2160 ({len(new)} new tensors)")
    try:
        grow_from(TesselNet(grown_config(src.cfg, "mid=3")), src)
    except ValueError as e:
        assert "dec1.0" in str(e), e
        print(f"--exp-grow mid=3 refused: {e}")
    else:
        raise AssertionError("mid=3 moves dec1.0 to a layer of the other parity and was not refused")


if __name__ == "__main__":
    main()
