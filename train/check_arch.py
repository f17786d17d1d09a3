#!/usr/bin/env python3
"""Checks train.py --arch's shapes (tessel_train/net.py shaped_config): the default shape is the
shipped network's and within the budget; a shape the kernels cannot compute or the budget does not
allow is refused with a message naming why; a shape that passes builds a network with the FLOPs
and parameters its config says, and runs at every window phase; --arch-from's take_matching copies exactly the tensors of the same
name and shape, but those --arch-fresh names; --distill's error is zero against the network itself
and reaches only the student's weights; shrink_level0's projection keeps lengths of zero-mean
vectors and its products after a LayerNorm compute the wide ones on the projected stream;
--exp-over-budget lets only the budget pass; widen_level0's network computes its source's head at
every window phase and its two copies of a channel differ in their read weights.

    python3 train/check_arch.py
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train import stages  # noqa: E402
from tessel_train.net import FLOP_BUDGET_4K, PHASES, TesselNet, init_like_reference, shaped_config, take_matching  # noqa: E402

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
    assert shaped_config({"channels": [64, 48, 96]}, over_budget=True, **flags).flops(3840, 2160) > FLOP_BUDGET_4K
    try:
        shaped_config({"channels": [24, 48, 96]}, over_budget=True, **flags)
        raise AssertionError("over_budget let a width the kernels cannot compute pass")
    except ValueError as e:
        assert "multiple of 16" in str(e), e
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
    taken = check_take_matching(shipped, flags)
    distill = check_distill(shipped, flags)
    shrink = check_shrink()
    wide = check_widen(shipped)
    print(f"--arch: the default is {SHIPPED_MODEL}'s shape ({default.flops(3840, 2160) / 1e9:.2f} GFLOP); "
          f"{shape}: {cfg.flops(3840, 2160) / 1e9:.2f} GFLOP, {params} parameters, {blocks} blocks; 8 bad shapes refused; "
          f"--arch-from {taken}; --distill {distill}; shrink_level0 {shrink}; widen_level0 {wide}")


def check_take_matching(shipped, flags):
    """Level 0 at 16 channels from the shipped package: its level 1 and 2 blocks, merge2, expand2,
    the pixel embedding and head path and the head's bias are the package's; level 0's blocks, the
    embedding, merge1's weight, expand1 and the head's weight and norm keep their fresh values. The
    shipped shape with those same tensors named by --arch-fresh leaves the same ones fresh."""
    theirs = shipped.state_dict()
    narrow = TesselNet(shaped_config({"channels": [16, 48, 96]}, **flags))
    init_like_reference(narrow, seed=3)
    before = {k: v.clone() for k, v in narrow.state_dict().items()}
    fresh = set(take_matching(narrow, shipped))
    want = {k for k in before if k.split(".")[0] in ("embed", "enc0", "dec0", "expand1", "head_norm") or k in ("merge1.weight", "head.weight")}
    assert fresh == want, f"fresh {sorted(fresh ^ want)} differ from the expected"
    for k, v in narrow.state_dict().items():
        src = before[k] if k in fresh else theirs[k]
        assert torch.equal(v, src), f"{k}: not the {'fresh' if k in fresh else 'package'} value"
    same = TesselNet(shaped_config({}, **flags))
    keep = ("embed", "enc0.0", "dec0.0", "merge1.weight", "expand1", "head_norm", "head.weight")
    fresh_same = set(take_matching(same, shipped, keep))
    assert fresh_same == want, f"--arch-fresh: fresh {sorted(fresh_same ^ want)} differ from the narrow network's"
    return f"takes {len(before) - len(fresh)} of {len(before)} tensors into level 0 at 16 channels, --arch-fresh the same {len(fresh)} fresh at 32"


def check_distill(shipped, flags):
    """stages.distill_error: zero for the shipped network against itself; above zero for a
    16-channel level 0 taken from it, whose gradient reaches its own weights and not the teacher's."""
    teacher, _ = load_net(os.path.join(ROOT, SHIPPED_MODEL))
    teacher.eval().requires_grad_(False)
    feats = torch.rand(1, 16, 40, 72, generator=torch.Generator().manual_seed(9))
    same = {"feats": feats, "head": shipped(stages.tokens(shipped, feats), 3)}
    zero = stages.distill_error(teacher, same, 3).item()
    assert zero == 0.0, f"the shipped network against itself: {zero}"
    narrow = TesselNet(shaped_config({"channels": [16, 48, 96]}, **flags))
    init_like_reference(narrow, seed=4)
    take_matching(narrow, shipped)
    err = stages.distill_error(teacher, {"feats": feats, "head": narrow(stages.tokens(narrow, feats), 3)}, 3)
    err.backward()
    assert err.item() > 1e-4, err.item()
    assert narrow.embed.weight.grad is not None and narrow.embed.weight.grad.abs().sum() > 0
    assert all(p.grad is None for p in teacher.parameters())
    return f"0 against itself, {err.item():.4f} for the narrow start"


def check_shrink():
    """train/shrink_level0.py's algebra on random data: M's columns are zero-mean and orthonormal on
    the zero-mean 16-vectors (MᵀM the centring), and a product after a 32-channel LayerNorm of Mz
    equals the rewritten product after the 16-channel LayerNorm of z (γ 1, β 0)."""
    from shrink_level0 import after_norm, projection
    g = torch.Generator().manual_seed(11)
    m, kept = projection([torch.randn(2000, 32, generator=g) @ torch.randn(32, 32, generator=g)], 16)
    assert (m.T @ m - (torch.eye(16) - 1 / 16)).abs().max() < 1e-5 and m.sum(0).abs().max() < 1e-5
    norm = torch.nn.LayerNorm(32, eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(torch.rand(32, generator=g) + 0.5)
        norm.bias.copy_(torch.randn(32, generator=g))
    w, b = torch.randn(24, 32, generator=g), torch.randn(24, generator=g)
    z = torch.randn(64, 16, generator=g)
    z = z - z.mean(1, keepdim=True)
    w16, b16 = after_norm(w, b, norm, m)
    with torch.no_grad():
        wide = torch.nn.functional.linear(norm(z @ m.T), w, b)
        narrow = torch.nn.functional.linear(torch.nn.functional.layer_norm(z, (16,), eps=1e-5), w16, b16)
    err = (wide - narrow).abs().max().item()
    assert err < 1e-3, err
    return f"exact to {err:.1e} ({100 * kept:.0f} % of a random stream kept)"


def check_widen(shipped):
    """train/widen_level0.py: level 0 at twice the width computes the shipped head at all eight
    window phases (f32), and the split of its read weights is uneven (else the copies could not part)."""
    from widen_level0 import widen
    net = widen(shipped, 0.25).eval()
    assert net.cfg.channels == [2 * shipped.cfg.channels[0]] + list(shipped.cfg.channels[1:])
    tokens = torch.rand(1, 32, 64, 16 * shipped.cfg.pixel_embed, generator=torch.Generator().manual_seed(12))
    worst = 0.0
    with torch.no_grad():
        for phase in range(PHASES):
            a, b = shipped(tokens, phase), net(tokens, phase)
            worst = max(worst, ((a - b).abs().max() / (a.max() - a.min())).item())
    assert worst < 1e-5, worst
    w, c = net.enc0[0].fc1.weight, shipped.cfg.channels[0]
    assert not torch.allclose(w[:, :c], w[:, c:]), "the copies' read weights are equal"
    assert torch.allclose(w[:, :c] + w[:, c:], torch.cat([shipped.enc0[0].fc1.weight] * 2), atol=1e-6)
    return f"the same head to {worst:.1e} of its range"


if __name__ == "__main__":
    main()
