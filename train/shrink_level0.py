#!/usr/bin/env python3
"""A 16-channel level 0 made from a package's wider one, as a start for train.py --arch-from
(docs/MODEL.md, "A narrower level 0"), instead of a level 0 that starts fresh:

- the level-0 stream x is kept on its 15 leading directions (U, found on calibration sequences of
  the training generator, never the held-out scenes), written as zero-mean 16-vectors z = Mᵀx with
  M = U Bᵀ (B an orthonormal basis of the zero-mean 16-vectors). LayerNorm ignores a token's mean
  and M keeps lengths, so LN(Mz) = √2·γ⊙M·LN₁₆(z) + β exactly: every product after a level-0
  LayerNorm takes √2·W·diag(γ)·M and the bias b + Wβ, every product into the stream Mᵀ;
- each level-0 block keeps the attention head and the half of its MLP's hidden units whose
  outputs carry the most energy on the calibration sequences (a 16-channel block has one head),
  and their output products are refitted by least squares to write what the whole attention and
  MLP wrote into the projected stream there;
- merge1 reads the stream through M (its lost mean component's average goes to its bias), expand1
  writes through Mᵀ; levels 1 and 2, the pixel embedding and the per-pixel head path are copied.

    python3 train/shrink_level0.py models/tessel-v12 OUT [--seqs 4 --size 128 --device cpu]

Prints how close the narrow head is to the package's on calibration frames it did not fit on.
"""
import argparse
import dataclasses
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train as trainer  # noqa: E402  (train.py: its data cache and sequence runner)
from tessel_train.export import export_package, load_net  # noqa: E402
from tessel_train.net import HEAD_DIM, TesselNet, take_matching  # noqa: E402

WIDTH = 16


class Taps:
    """Forward hooks on the level-0 modules: stream samples, each block's per-head attention output
    energy and per-unit MLP energy, and the skip's mean."""

    def __init__(self, net, keep=4096):
        self.keep, self.stream, self.heads, self.units, self.skip_mean = keep, [], {}, {}, []
        self.inputs = {}  # (block, "proj" or "fc2") -> sampled rows of that product's input
        self.hooks = [net.embed.register_forward_hook(lambda m, i, o: self.sample(o))]
        for name in ("enc0", "dec0"):
            for j, blk in enumerate(getattr(net, name)):
                key = f"{name}.{j}"
                self.hooks.append(blk.register_forward_pre_hook(lambda m, i: self.sample(i[0])))
                self.hooks.append(blk.register_forward_hook(lambda m, i, o, key=key: self.sample(o, skip=key.startswith("enc"))))
                self.hooks.append(blk.proj.register_forward_pre_hook(lambda m, i, key=key: self.head_energy(key, m, i[0])))
                self.hooks.append(blk.fc2.register_forward_pre_hook(lambda m, i, key=key: self.unit_energy(key, m, i[0])))

    def sample(self, x, skip=False):
        x = x.detach().float().reshape(-1, x.shape[-1])
        idx = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(len(self.stream)))[: self.keep]
        self.stream.append(x[idx])
        if skip:
            self.skip_mean.append(x.mean(dim=1).mean())

    def rows(self, key, x):
        x = x.detach().float().reshape(-1, x.shape[-1])
        idx = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(7))[: self.keep]
        self.inputs.setdefault(key, []).append(x[idx])
        return x

    def head_energy(self, key, proj, o):
        o = self.rows((key, "proj"), o)
        w = proj.weight.detach().float()
        e = torch.stack([((o[:, h * HEAD_DIM:(h + 1) * HEAD_DIM] @ w[:, h * HEAD_DIM:(h + 1) * HEAD_DIM].T) ** 2).sum(1).mean()
                         for h in range(o.shape[1] // HEAD_DIM)])
        self.heads[key] = self.heads.get(key, 0) + e

    def unit_energy(self, key, fc2, a):
        a = self.rows((key, "fc2"), a)
        e = (a ** 2).mean(0) * (fc2.weight.detach().float() ** 2).sum(0)
        self.units[key] = self.units.get(key, 0) + e

    def remove(self):
        for h in self.hooks:
            h.remove()


def projection(stream, width):
    """M [C, width]: the stream's leading width - 1 directions (zero-mean; LayerNorm's centring
    removes the rest) as zero-mean width-vectors, and the share of the centred stream's energy kept."""
    x = torch.cat(stream).double()
    x = x - x.mean(dim=1, keepdim=True)
    val, vec = torch.linalg.eigh(x.T @ x / x.shape[0])
    u = vec[:, -(width - 1):]  # ascending order: the largest last
    kept = (val[-(width - 1):].sum() / val.sum()).item()
    centre = torch.eye(width, dtype=torch.float64) - 1.0 / width
    b = torch.linalg.qr(centre)[0][:, : width - 1]  # an orthonormal basis of the zero-mean width-vectors
    return (u @ b.T).float(), kept


def refit(x_kept, x_all, w, m, ridge=1e-3):
    """The output product of a block's kept part (rows x_kept of its inputs) that comes closest, by
    least squares on the calibration rows, to what the whole part wrote into the projected stream
    (x_all @ wᵀ @ M): pruning's loss partly repaired."""
    t = x_all @ w.T @ m
    a = x_kept.T @ x_kept
    a = a + ridge * a.diagonal().mean() * torch.eye(a.shape[0])
    return torch.linalg.solve(a, x_kept.T @ t).T


def after_norm(w, b, norm, m):
    """A product (w, b) after a LayerNorm of the wide stream, as one after the narrow LayerNorm (γ 1, β 0)."""
    g, beta = norm.weight.detach().float(), norm.bias.detach().float()
    return math.sqrt(m.shape[0] / m.shape[1]) * (w * g) @ m, b + w @ beta


@torch.no_grad()
def shrink(src, taps, m):
    cfg = dataclasses.replace(src.cfg, channels=[WIDTH] + list(src.cfg.channels[1:]))
    net = TesselNet(cfg)
    take_matching(net, src)  # levels 1 and 2, the pixel embedding and head path: copied
    theirs = {k: v.detach().float() for k, v in src.state_dict().items()}
    sd = {k: v.clone() for k, v in net.state_dict().items()}
    mt, c = m.T, src.cfg.channels[0]
    sd["embed.weight"], sd["embed.bias"] = mt @ theirs["embed.weight"], mt @ theirs["embed.bias"]
    for name in ("enc0", "dec0"):
        for j, blk in enumerate(getattr(src, name)):
            key, p = f"{name}.{j}", f"{name}.{j}."
            h = int(taps.heads[key].argmax())
            rows = torch.cat([torch.arange(h * HEAD_DIM, (h + 1) * HEAD_DIM) + s * c for s in range(3)])
            units = taps.units[key].argsort(descending=True)[: cfg.mlp_ratio * WIDTH].sort().values
            sd[p + "qkv.weight"], sd[p + "qkv.bias"] = after_norm(theirs[p + "qkv.weight"][rows], theirs[p + "qkv.bias"][rows], blk.norm1, m)
            sd[p + "rpb"] = theirs[p + "rpb"][h:h + 1].clone()
            o = torch.cat(taps.inputs[(key, "proj")])
            sd[p + "proj.weight"] = refit(o[:, h * HEAD_DIM:(h + 1) * HEAD_DIM], o, theirs[p + "proj.weight"], m)
            sd[p + "proj.bias"] = mt @ theirs[p + "proj.bias"]
            sd[p + "fc1.weight"], sd[p + "fc1.bias"] = after_norm(theirs[p + "fc1.weight"][units], theirs[p + "fc1.bias"][units], blk.norm2, m)
            hid = torch.cat(taps.inputs[(key, "fc2")])
            sd[p + "fc2.weight"], sd[p + "fc2.bias"] = refit(hid[:, units], hid, theirs[p + "fc2.weight"], m), mt @ theirs[p + "fc2.bias"]
            for n in ("norm1", "norm2"):
                sd[p + n + ".weight"], sd[p + n + ".bias"] = torch.ones(WIDTH), torch.zeros(WIDTH)
    w = theirs["merge1.weight"]
    sd["merge1.weight"] = torch.cat([w[:, s * c:(s + 1) * c] @ m for s in range(4)], 1)
    sd["merge1.bias"] = theirs["merge1.bias"] + w.sum(1) * torch.stack(taps.skip_mean).mean()
    w, b = theirs["expand1.weight"], theirs["expand1.bias"]
    sd["expand1.weight"] = torch.cat([mt @ w[s * c:(s + 1) * c] for s in range(4)], 0)
    sd["expand1.bias"] = torch.cat([mt @ b[s * c:(s + 1) * c] for s in range(4)], 0)
    sd["head.weight"], sd["head.bias"] = after_norm(theirs["head.weight"], theirs["head.bias"], src.head_norm, m)
    sd["head_norm.weight"], sd["head_norm.bias"] = torch.ones(WIDTH), torch.zeros(WIDTH)
    net.load_state_dict(sd)
    return net


def head_gap(src, net, batches, size, fit_seqs):
    """Mean distill_error between net and src over the calibration batches' sequences after the
    first fit_seqs of each (not fitted on), on src's own history; and the two nets' PSNRs there."""
    errs, ps, pn = [], [], []
    for b in batches.values():
        b = {k: v[:, fit_seqs:] for k, v in b.items()}
        with torch.no_grad():
            o1, g1, _, dist = trainer.run_sequence(src, b, size, teacher=net)
            o2, _, _ = trainer.run_sequence(net, b, size)
        errs += [d.item() for d in dist]
        ps.append(trainer.psnr_frames(o1, g1, 4))
        pn.append(trainer.psnr_frames(o2, g1, 4))
    return sum(errs) / len(errs), sum(ps) / len(ps), sum(pn) / len(pn)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("package")
    ap.add_argument("out")
    ap.add_argument("--seqs", type=int, default=4, help="calibration sequences a ratio (half fitted on, half checked)")
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--data-cache", default="out/data-cache")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    dev = torch.device(a.device)
    src, mj = load_net(a.package)
    src = src.to(dev).eval()
    if src.cfg.channels[0] <= WIDTH or not src.cfg.in_contract:
        sys.exit(f"{a.package}: level 0 has {src.cfg.channels[0]} channels; this makes a {WIDTH}-channel one from a wider contract network")
    batches = trainer.stored_cache(a.data_cache, dev, 2 * a.seqs, a.frames, a.size, 424242, 16, 0.15)[0]
    taps = Taps(src)
    with torch.no_grad():
        for b in batches.values():
            trainer.run_sequence(src, {k: v[:, :a.seqs] for k, v in b.items()}, a.size)
    taps.remove()
    m, kept = projection(taps.stream, WIDTH)
    net = shrink(src, taps, m).to(dev).eval()
    err, p_src, p_net = head_gap(src, net, batches, a.size, a.seqs)
    print(f"stream energy kept on {WIDTH - 1} directions: {100 * kept:.2f} %; heads kept "
          + ", ".join(f"{k}: {int(v.argmax())}" for k, v in taps.heads.items()))
    print(f"unseen calibration sequences: head controls' squared difference {err:.5f}; PSNR {p_src:.3f} dB ({a.package}) "
          f"against {p_net:.3f} dB (16 channels), frames 4..")
    export_package(net.float().cpu(), a.out, os.path.basename(os.path.normpath(a.out)),
                   f"{a.package}'s network with a {WIDTH}-channel level 0 made by train/shrink_level0.py (untrained since)",
                   trainer.package_baseline(mj)[0],
                   dict(trainer="train/shrink_level0.py", source=a.package, stream_energy_kept=kept, calibration_seqs=a.seqs,
                        calibration_psnr=dict(source=p_src, narrow=p_net)), trained=False)
    print(f"package: {a.out}")


if __name__ == "__main__":
    main()
