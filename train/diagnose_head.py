#!/usr/bin/env python3
"""Which parts of the head carry the network's gain? Runs a model package on validation-style
sequences of the training generator (seeds never trained on) and scores variants of its head:

    python3 train/diagnose_head.py --package models/tessel-vN [--seqs 8] [--size 96] [--device cpu]
        [--ratios 2] [--jitter-start N] [--brief]

Variants: the tuned baseline; the network; the network with one control replaced by the
baseline's value or by the network's own median (spatially uniform); the network without
residual or feature memory. Prints mean PSNR over frames 8.. and each control's spatial spread."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import SHIPPED_MODEL, stages  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.net import raw_controls  # noqa: E402
from tessel_train.scenes import HAZARD_KINDS  # noqa: E402
from train import RATIOS, batch_from, make_cache, psnr_frames, run_sequence  # noqa: E402

# head channel -> name (docs/NETWORK.md §5)
CHANNELS = {0: "blend", 1: "sigma", 2: "clamp", 3: "residual r", 4: "residual g", 5: "residual b", 6: "memory 0", 7: "memory 1"}


class Edit(stages.Ops):
    """finish() with some head channels overwritten by constants (raw, pre-activation values)."""

    def __init__(self, fixed_raw, record=None):
        self.fixed_raw, self.record = fixed_raw, record

    def finish(self, ctx, head_px, exposure, round_f16=False, accumulate=False):
        if self.record is not None:
            self.record.append(head_px.detach())
        if self.fixed_raw:
            head_px = head_px.clone()
            for ch, v in self.fixed_raw.items():
                head_px[:, ch] = v
        return stages.finish(ctx, head_px, exposure, round_f16, accumulate)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default=SHIPPED_MODEL)
    ap.add_argument("--seqs", type=int, default=8)
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--seed", type=int, default=777001)
    ap.add_argument("--ratios", default="1.5,2,3", help="comma-separated subset of 1.5,2,3")
    ap.add_argument("--jitter-start", type=int, default=None,
                    help="start every sequence at this jitter index (default: starts spread over the period)")
    ap.add_argument("--brief", action="store_true", help="only the tuned baseline and the network")
    ap.add_argument("--hazards", type=float, default=0.0, metavar="FRACTION", help="sequences with each hazard (train.py --hazards)")
    ap.add_argument("--hazard-kinds", default=",".join(HAZARD_KINDS), help="which hazards (train.py --hazard-kinds)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    dev = torch.device(a.device)
    net, mj = load_net(a.package)
    net = net.to(dev).eval()
    base = tuple(mj["baseline"][k] for k in ("blend", "sigma", "clamp"))
    base_raw = dict(enumerate(raw_controls(*base)))
    ratios = tuple(float(x) for x in a.ratios.split(","))
    if not set(ratios) <= set(RATIOS):
        sys.exit(f"--ratios: {a.ratios} is not a subset of {RATIOS}")
    kinds = tuple(k for k in a.hazard_kinds.split(",") if k)
    cache = make_cache(a.seqs, a.frames, a.size, a.seed, dev, spp=16, chunk=a.seqs, ratios=ratios, jitter_start=a.jitter_start,
                       hazards=a.hazards, hazard_kinds=kinds)
    start = min(8, a.frames // 2)
    rows = {}
    for r in ratios:
        b = batch_from(cache, r, torch.arange(a.seqs, device=dev))
        score = lambda ops=stages.EAGER, fixed=None, n=net: psnr_frames(*run_sequence(n, b, a.size, fixed=fixed, ops=ops)[:2], start)
        heads = []
        with torch.no_grad():
            res = {"tuned baseline": score(fixed=base), "network": score(ops=Edit({}, heads))}
            h = torch.stack(heads[start:])  # [T,B,8,H,W] raw head
            med = {ch: float(h[:, :, ch].median()) for ch in CHANNELS}
            spread = {CHANNELS[ch]: float(h[:, :, ch].std()) for ch in CHANNELS}
            for ch in () if a.brief else (0, 1, 2):
                res[f"{CHANNELS[ch]} := baseline"] = score(ops=Edit({ch: base_raw[ch]}))
                res[f"{CHANNELS[ch]} := own median"] = score(ops=Edit({ch: med[ch]}))
            if not a.brief:
                res["no residual"] = score(ops=Edit({3: 0.0, 4: 0.0, 5: 0.0}))
                res["no feature memory"] = score(ops=Edit({6: 0.0, 7: 0.0}))
                res["blend, sigma, clamp := own medians, no residual"] = score(ops=Edit({0: med[0], 1: med[1], 2: med[2], 3: 0.0, 4: 0.0, 5: 0.0}))
        rows[r] = (res, spread, med)
        print(f"{r}x done", file=sys.stderr, flush=True)
    names = list(rows[ratios[0]][0])
    print("| variant | " + " | ".join(f"{r}x dB" for r in ratios) + " | mean vs network |")
    print("|---|" + "---|" * (len(ratios) + 1))
    for n in names:
        v = [rows[r][0][n] for r in ratios]
        d = sum(rows[r][0][n] - rows[r][0]["network"] for r in ratios) / len(ratios)
        print(f"| {n} | " + " | ".join(f"{x:.3f}" for x in v) + f" | {d:+.3f} |")
    print("\nraw head, frames 8..: median (spatial std) per ratio")
    for ch, n in CHANNELS.items():
        print(f"- {n}: " + ", ".join(f"{r}x {rows[r][2][ch]:+.3f} ({rows[r][1][n]:.3f})" for r in ratios))


if __name__ == "__main__":
    main()
