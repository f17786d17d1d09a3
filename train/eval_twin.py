#!/usr/bin/env python3
"""Held-out scores through the PyTorch twin: `tessel scene` sequences replayed by each package, for a
head that no backend computes yet (an experiment's, e.g. train.py --exp-dilate-choice) beside the
contract's. Mean PSNR of tonemapped colour over frames --start.. and the temporal error (RMS of the
frame-to-frame change against the truth's), as `tessel compare` scores them; the twin rounds to f16
where the contract does, so its figures sit within a few hundredths of a dB of the CPU reference's.

    python3 train/eval_twin.py out/scenes/1001/640x360 v10=models/tessel-v10 choice=DIR:dilate_choice [--device cuda]

A package whose config asks for the classical TAAU beside the network (train.py --exp-grow taau_mix or
features=taau+taau_state) runs it as its config says, with no EXPERIMENT needed.

Each package is LABEL=DIR, optionally :EXPERIMENT (dilate_choice, dilate, dilate_mix=P, depth_gather=TAU, dering=A, dilate_thin=K). Every kind-ratio folder of the
scene root is scored (KIND-RATIO/frames.json); the table compares every package with the first."""
import argparse
import glob
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import experimental, stages  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.sequence import load_sequence, prepared_frames  # noqa: E402

# dilate_mix=P: the dilate-choice head with channel 2 set to a constant mix P for every pixel (its
# rows cleared, as experimental.init_dilate_choice does): what a uniform mix gives, untrained.
# depth_gather=TAU: the gather weighted by nearness as well (stages.DEPTH_GATHER), untrained.
# dering=A: the history kernel's a set to A and its result clamped to its 2 x 2 nearest texels
# (stages.HISTORY_DERING), untrained.
# dilate_thin=K: the history at the nearest surface's motion where that surface covers at most K of
# the 3 x 3's samples (stages.DILATE_THIN), untrained.
EXPERIMENTS = {"dilate_choice": "DILATE_CHOICE", "dilate": "DILATE_MOTION", "dilate_mix": "DILATE_CHOICE", "depth_gather": "DEPTH_GATHER",
               "dering": "HISTORY_DERING", "dilate_thin": "DILATE_THIN"}
VALUED = ("dilate_mix", "depth_gather", "dering", "dilate_thin")
# The experiments whose stages flag holds their value; the others' flags are switches (True).
FLAG_VALUES = {"depth_gather": float, "dilate_thin": int}


def clear_experiments():
    """Every experiment's flag in stages back to the contract's (off)."""
    for flag in set(EXPERIMENTS.values()):
        setattr(stages, flag, type(getattr(stages, flag))())  # False, 0.0 or 0


def package_arg(text):
    label, sep, rest = text.partition("=")
    if not sep or not label or not rest:
        raise argparse.ArgumentTypeError(f"a package is LABEL=DIR[:EXPERIMENT]; got {text!r}")
    path, _, exp = rest.partition(":")
    name, _, value = exp.partition("=")
    if exp and (name not in EXPERIMENTS or (name in VALUED) != bool(value)):
        raise argparse.ArgumentTypeError(f"{text!r}: experiment {exp!r} is not one of dilate_choice, dilate, dilate_mix=P, depth_gather=TAU, dering=A, dilate_thin=K")
    if name == "dilate_thin" and not (value.isdigit() and 1 <= int(value) <= 8):
        raise argparse.ArgumentTypeError(f"{text!r}: K must be a whole number from 1 to 8")
    if name == "depth_gather" and not float(value) > 0.0:
        raise argparse.ArgumentTypeError(f"{text!r}: TAU must be positive")
    if name == "dering" and not -1.0 <= float(value) <= 0.0:
        raise argparse.ArgumentTypeError(f"{text!r}: Keys' a must lie in [-1, 0]")
    if name == "dilate_mix" and not 0.0 < float(value) < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: the mix must lie in (0, 1)")
    if not os.path.exists(os.path.join(path, "model.json")):
        raise argparse.ArgumentTypeError(f"{text!r}: {path}/model.json does not exist")
    return label, path, exp


def score(net, seq, start, device):
    """(mean PSNR over frames start.., mean temporal error over frames start+1.. but those at a reset) of one replay."""
    W, H = seq["out_size"]
    hist = stages.new_history(1, W, H, device, stages.memory_of(net))
    psnrs, temporal, prev = [], [], None
    for t, p, jitter, reset in prepared_frames(seq, device):
        e = seq["exposure"][t]
        out, hist, _ = stages.step(net, p, hist, jitter, reset, t % 8, round_f16=True)
        # The output as the backends write it (linear, then scored tonemapped under the frame's exposure).
        o = stages.tonemap(stages.untonemap(out.clamp(0.0, stages.Y_MAX)))
        gt = stages.tonemap(seq["reference"][t][:, :3].to(device).clamp(min=0) * e)
        if t < start:
            continue
        psnrs.append(float(-10 * torch.log10(((o - gt) ** 2).mean())))
        if prev is not None and not seq["reset"][t]:  # a cut's change is no flicker
            temporal.append(float((((o - prev[0]) - (gt - prev[1])) ** 2).mean().sqrt()))
        prev = (o, gt)
    return sum(psnrs) / len(psnrs), sum(temporal) / max(1, len(temporal))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenes", help="a folder of KIND-RATIO/frames.json (scripts/eval_heldout.sh's SCENES/SEED/SIZE)")
    ap.add_argument("packages", nargs="+", type=package_arg, metavar="LABEL=DIR[:EXPERIMENT]")
    ap.add_argument("--start", type=int, default=8)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--json", help="also write the scores here")
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    cases = sorted(glob.glob(os.path.join(a.scenes, "*-*", "frames.json")))
    if not cases:
        sys.exit(f"{a.scenes}: no KIND-RATIO/frames.json below it")
    nets = []
    for label, path, exp in a.packages:
        net, _ = load_net(path)
        name, _, value = exp.partition("=")
        if name == "dilate_mix":
            p = float(value)
            experimental.init_dilate_choice(net, trained=True, start=math.log(p / (1.0 - p)))
        if name == "dering":
            net.cfg.history_a = float(value)
        nets.append((label, net.to(a.device).eval(), exp))
    res = {}
    for c in cases:
        case = os.path.basename(os.path.dirname(c))
        seq = load_sequence(c)
        if seq["reference"] is None:
            sys.exit(f"{c}: frames without a reference")
        for label, net, exp in nets:
            clear_experiments()
            if exp:
                name, _, value = exp.partition("=")
                setattr(stages, EXPERIMENTS[name], FLAG_VALUES[name](value) if name in FLAG_VALUES else True)
            res.setdefault(case, {})[label] = score(net, seq, a.start, a.device)
        print(f"{case}: " + ", ".join(f"{l} {p:.3f} dB {t:.4f}" for l, (p, t) in res[case].items()), file=sys.stderr, flush=True)
    clear_experiments()
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)
    table(res, [l for l, _, _ in a.packages])


def table(res, labels):
    """Markdown: per ratio and kind each package's PSNR, its difference from the first's, its temporal error."""
    first, rest = labels[0], labels[1:]
    cols = [f"{l} dB" for l in labels] + [f"{l} - {first}" for l in rest] + [f"temporal {l}" for l in labels]
    print("| ratio | kind | " + " | ".join(cols) + " |")
    print("|---" * (2 + len(cols)) + "|")
    by_ratio = {}
    for case in res:
        kind, ratio = case.rsplit("-", 1)
        by_ratio.setdefault(ratio, []).append((kind, res[case]))
    for ratio in sorted(by_ratio, key=float):
        rows = by_ratio[ratio]
        mean = {l: tuple(sum(x[1][l][i] for x in rows) / len(rows) for i in (0, 1)) for l in labels}
        for kind, r in rows + [("**mean**", mean)]:
            cells = [f"{r[l][0]:.2f}" for l in labels] + [f"{r[l][0] - r[first][0]:+.3f}" for l in rest] + [f"{r[l][1]:.4f}" for l in labels]
            print(f"| {ratio}x | {kind} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
