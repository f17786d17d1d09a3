#!/usr/bin/env python3
"""Checks train.py --arch's shapes (tessel_train/net.py shaped_config): the default shape is the
shipped network's and within the budget; a shape the kernels cannot compute or the budget does not
allow is refused with a message naming why; a shape that passes builds a network with the FLOPs
and parameters its config says, and runs at every window phase.

    python3 train/check_arch.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.net import FLOP_BUDGET_4K, PHASES, TesselNet, shaped_config  # noqa: E402

ROOT = os.path.dirname(HERE)


def refused(shape, words):
    try:
        shaped_config(shape, pixel_head=True)
    except ValueError as e:
        assert words in str(e), f"{shape}: refused, but the message {str(e)!r} does not say {words!r}"
        return
    raise AssertionError(f"{shape} was not refused")


def main():
    shipped, _ = load_net(os.path.join(ROOT, SHIPPED_MODEL))
    flags = dict(pixel_head=shipped.cfg.pixel_head, history_a=shipped.cfg.history_a)
    default = shaped_config({}, **flags)
    assert default.to_json() == shipped.cfg.to_json(), f"the default shape {default.to_json()} is not the shipped {shipped.cfg.to_json()}"
    assert default.flops(3840, 2160) <= FLOP_BUDGET_4K
    refused({"channels": [24, 48, 96]}, "multiple of 16")
    refused({"channels": [32, 48, 144]}, "multiple of 16 from 16 to 128")
    refused({"channels": [32]}, "two levels or more")
    refused({"encoder_depths": [0, 2]}, "every one a whole number from 1")
    refused({"decoder_depths": [1]}, "need 2 entries")
    refused({"channels": [32, 64, 128]}, "over the budget of 80")
    refused({"mlp_ratio": 8}, "mlp_ratio 8")
    refused({"heads": 3}, "unknown shape fields")
    shape = {"channels": [16, 48, 96], "encoder_depths": [1, 3], "bottleneck_depth": 3, "decoder_depths": [1, 3]}
    cfg = shaped_config(shape, **flags)
    net = TesselNet(cfg).eval()
    blocks = len(cfg.blocks())
    assert blocks == 1 + 3 + 3 + 3 + 1, cfg.blocks()
    tokens = torch.randn(1, 32, 64, 16 * cfg.pixel_embed, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        heads = [net(tokens, p) for p in range(PHASES)]
    assert all(h.shape == (1, 32, 64, 128) and torch.isfinite(h).all() for h in heads)
    params = sum(p.numel() for p in net.parameters())
    print(f"--arch: the default is {SHIPPED_MODEL}'s shape ({default.flops(3840, 2160) / 1e9:.2f} GFLOP); "
          f"{shape}: {cfg.flops(3840, 2160) / 1e9:.2f} GFLOP, {params} parameters, {blocks} blocks; 8 bad shapes refused")


if __name__ == "__main__":
    main()
