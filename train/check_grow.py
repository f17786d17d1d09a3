#!/usr/bin/env python3
"""Checks train.py --exp-grow's start (tessel_train/experimental.py grown_config, grow_from) on
the shipped package: each grown network's head equals the package's on random tokens at every
window phase (its new blocks and per-pixel MLP start as the identity; with more pixel features its
tokens equal the package's whatever the new features hold), its FLOPs grow by what its
new parts cost, train/grown_moved.py finds exactly its new tensors with their zero-started outputs at
0, and a growth that would move a trained block to a layer of the other parity (other windows) is
refused.

    python3 train/check_grow.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL, stages  # noqa: E402
from tessel_train import taau  # noqa: E402
from tessel_train.experimental import TAAU_MIX_START, grow_from, grown_config  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.net import TesselNet  # noqa: E402
import grown_moved  # noqa: E402

ROOT = os.path.dirname(HERE)


def check_taau_mix(src, net, spec):
    """Three frames of a random scene through stages.step: on the same history, the grown network's
    output is the package's moved sigmoid(TAAU_MIX_START) of the way to the classical TAAU's (which
    runs beside it and is carried in the history), and the history it writes holds that output."""
    g = torch.Generator().manual_seed(5)
    W, H, rw, rh = 40, 24, 20, 12
    hist = stages.new_history(1, W, H, "cpu")
    state = taau.new_state(1, W, H, "cpu")
    share = torch.sigmoid(torch.tensor(TAAU_MIX_START))
    for t in range(3):
        color = torch.rand(1, 4, rh, rw, generator=g) * 2
        motion = (torch.rand(1, 2, rh, rw, generator=g) - 0.5) * 2
        depth = torch.rand(1, 1, rh, rw, generator=g)
        p = stages.prepare(color, motion, depth, (W, H))
        jitter, reset = torch.rand(1, 2, generator=g) - 0.5, torch.tensor([t == 0])
        with torch.no_grad():
            a, _, _ = stages.step(src, p, {k: v for k, v in hist.items() if k != "taau"}, jitter, reset, t)
            b, hist, _ = stages.step(net, p, hist, jitter, reset, t)
        want_taau, state = taau.step(p, state, jitter, reset, (W, H))
        want = a + share * (want_taau - a)
        assert torch.equal(hist["taau"]["color"], state["color"]), f"{spec}: the history does not carry the TAAU's state"
        err = (b - want).abs().max().item()
        assert err < 2e-6, f"{spec}: frame {t}: the output is {err} from the package's mixed with the TAAU's at {share:.4f}"
        # The network's history colour is its own output (the package's history differs only by the mix).
        assert torch.equal(hist["color"], b), f"{spec}: the history is not the mixed output"
    print(f"--exp-grow {spec}: 3 frames through stages.step = the package's output mixed {share:.4f} toward the classical TAAU's")


def check_moved(src, net, new, spec):
    """train/grown_moved.py on a fresh growth: it finds exactly the tensors grow_from added, the
    zero-started outputs among them read 0, and each of those has a trained counterpart of the
    package's (whose RMS it prints beside)."""
    base = {k: v.float() for k, v in src.state_dict().items()}
    grown = {k: v.float() for k, v in net.state_dict().items()}
    found = grown_moved.added(grown, base)
    assert found == new, f"{spec}: grown_moved would list {found}, grow_from added {new}"
    zero = [k for k in new if k.endswith(("proj.weight", "fc2.weight")) or k.startswith(("pixel_mlp2.", "pixel_embed_extra."))]
    for k in zero:
        assert grown_moved.rms(grown[k]) == 0.0, f"{spec}: {k} starts at RMS {grown_moved.rms(grown[k])}, not 0"
        c = grown_moved.kin(k, base)
        assert c is not None and grown_moved.rms(base[c]) > 0.01, f"{spec}: {k} has no trained counterpart ({c})"


def main():
    src, _ = load_net(os.path.join(ROOT, SHIPPED_MODEL))
    src.eval()
    g = torch.Generator().manual_seed(3)
    tokens = torch.randn(1, 32, 64, 16 * src.cfg.pixel_embed, generator=g)
    base_flops = src.cfg.flops(3840, 2160)
    for spec, extra in [("mid=4", 2 * 32_640 * (16 * 96 * 96 + 256 * 96)),
                        ("dec0=2", 522_240 * (16 * 32 * 32 + 256 * 32)),
                        ("pixel_mlp=16", 2 * 522_240 * 16 * (16 * 16 + 16 * 8)),
                        ("features=phase+motion+spread", 2 * 522_240 * 16 * 4 * 8),
                        ("features=taau+taau_state,taau_mix", 2 * 522_240 * 16 * 5 * 8 + 2 * 522_240 * 32 * 16 + 2 * 522_240 * 16 * 8)]:
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
            if cfg.taau_mix:  # eight channels as the package's, the ninth at its start everywhere
                b = b.view(*b.shape[:-1], 16, 9)
                assert (b[..., 8] == TAAU_MIX_START).all(), f"{spec}: the mix channel does not start at {TAAU_MIX_START}"
                b = b[..., :8].reshape(a.shape)
            err = (a - b).abs().max().item()
            assert err == 0.0, f"{spec}: the grown network's head differs from the package's by {err} at phase {phase}"
        got = cfg.flops(3840, 2160) - base_flops
        assert got == extra, f"{spec}: FLOPs grew by {got}, expected {extra}"
        print(f"--exp-grow {spec}: head equal at 8 phases; +{got / 1e9:.2f} GFLOP at 3840x2160 ({len(new)} new tensors)")
        check_moved(src, net, new, spec)
        if cfg.taau_mix:
            check_taau_mix(src, net, spec)
    try:
        grow_from(TesselNet(grown_config(src.cfg, "mid=3")), src)
    except ValueError as e:
        assert "dec1.0" in str(e), e
        print(f"--exp-grow mid=3 refused: {e}")
    else:
        raise AssertionError("mid=3 moves dec1.0 to a layer of the other parity and was not refused")


if __name__ == "__main__":
    main()
