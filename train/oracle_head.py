#!/usr/bin/env python3
"""How much could a perfect head give? For `tessel scene` sequences (frames.json with references),
scores the tuned TAAU, the network, and two oracles: per-pixel, per-frame head values fitted to the
ground truth by gradient descent through the reconstruction and its history (docs/NETWORK.md §5-6).

    python3 train/oracle_head.py SEQ/frames.json [...] [--package SHIPPED_MODEL] [--iters 150]

Oracle "controls": blend, gather width and rectification per pixel and frame, no residual (the
ceiling of a TAAU steered perfectly). Oracle "all": the residual colour correction too (it can paint
within the local colour range, so this bound is loose). Both start from the network's own head.
Mean PSNR of tonemapped colour over frames --start.. (as `tessel compare` scores)."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import SHIPPED_MODEL, stages  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.sequence import load_sequence  # noqa: E402

# Raw head channels the oracles fit (docs/NETWORK.md §5); the others stay as noted.
VARIANTS = {"controls": (0, 1, 2), "all": (0, 1, 2, 3, 4, 5)}


def frames(seq):
    """Per frame: prepared planes, jitter [1,2], reset [1] bool, tonemapped truth [1,3,H,W]."""
    out = []
    for t in range(seq["color"].shape[0]):
        e = seq["exposure"][t]
        p = stages.prepare(seq["color"][t], seq["motion"][t], seq["depth"][t], seq["out_size"], exposure=e,
                           motion_units=seq["motion_units"], depth_inverted=seq["depth_inverted"])
        gt = stages.tonemap(seq["reference"][t][:, :3].clamp(min=0) * e)
        out.append((p, seq["jitter"][t], torch.tensor([seq["reset"][t]]), gt))
    return out


def run(fr, size, net=None, fixed=None, heads=None):
    """Tonemapped outputs per frame; with heads (raw [1,8,H,W] per frame) in place of the network's."""
    W, H = size
    hist = stages.new_history(1, W, H, "cpu")
    outs, raw = [], []
    for t, (p, jit, reset, _) in enumerate(fr):
        out, hist, ex = stages.step(net, p, hist, jit, reset, t % 8, fixed=fixed, head_px=heads[t] if heads else None)
        if "head" in ex:
            raw.append(stages.head_pixels(ex["head"], W, H).detach())
        outs.append(out)
    return outs, raw


def psnr(outs, fr, start):
    v = [-10 * torch.log10(((o - gt) ** 2).mean()) for o, (*_, gt) in zip(outs[start:], fr[start:])]
    return torch.stack(v).mean()


def fit_oracle(fr, size, init, channels, iters, lr, start):
    """Adam on the chosen raw channels of every frame's head; the others keep init's values, except
    residual channels outside `channels`, which are 0 (no residual)."""
    base = [h.clone() for h in init]
    if 3 not in channels:
        for h in base:
            h[:, 3:6] = 0.0
    mask = torch.zeros(1, 8, 1, 1)
    mask[:, list(channels)] = 1.0
    delta = [torch.zeros_like(h, requires_grad=True) for h in base]
    opt = torch.optim.Adam(delta, lr=lr)
    best = -1e9
    for _ in range(iters):
        heads = [b + d * mask for b, d in zip(base, delta)]
        score = psnr(run(fr, size, heads=heads)[0], fr, start)
        best = max(best, score.item())
        opt.zero_grad()
        (-score).backward()
        opt.step()
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sequences", nargs="+")
    ap.add_argument("--package", default=SHIPPED_MODEL)
    ap.add_argument("--iters", type=int, default=150)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--start", type=int, default=8)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    net, mj = load_net(a.package)
    net.eval()
    base = tuple(mj["baseline"][k] for k in ("blend", "sigma", "clamp"))
    print("| sequence | ratio | TAAU (tuned) dB | network dB | oracle: controls dB | oracle: all dB |")
    print("|---|---|---|---|---|---|")
    for path in a.sequences:
        seq = load_sequence(path)
        if seq["reference"] is None:
            sys.exit(f"{path}: frames without a reference; the oracle needs ground truth")
        fr, size = frames(seq), seq["out_size"]
        ratio = size[0] / seq["color"].shape[-1]
        taau = float(psnr(run(fr, size, fixed=base)[0], fr, a.start))
        outs, raw = run(fr, size, net=net)
        netp = float(psnr(outs, fr, a.start))
        with torch.enable_grad():
            orc = {k: fit_oracle(fr, size, raw, ch, a.iters, a.lr, a.start) for k, ch in VARIANTS.items()}
        name = os.path.basename(os.path.dirname(os.path.abspath(path)))
        print(f"| {name} | {ratio:.2f} | {taau:.3f} | {netp:.3f} | {orc['controls']:.3f} | {orc['all']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
