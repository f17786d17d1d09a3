#!/usr/bin/env python3
"""Where a network of `--exp-grow taau_mix` takes the classical TAAU's frame: replays `tessel scene`
folders through the twin up to one frame and writes a picture, a row per scene: the ground truth,
the output, and the mix share sigmoid(h8) scaled to its largest value in the frame (white), with the
share's mean, percentiles and largest value printed.

    python3 train/mix_map.py PACKAGE SCENE_DIR [SCENE_DIR ...] --frame 20 --out mix.png [--device cpu]
"""
import argparse
import os
import sys

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import stages  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.sequence import load_sequence, prepared_frames  # noqa: E402


def to8(x):
    return (x.clamp(0, 1) * 255).round().byte().permute(1, 2, 0).cpu().numpy()


def row(net, scene, frame, device):
    seq = load_sequence(os.path.join(scene, "frames.json"))
    W, H = seq["out_size"]
    if not 0 <= frame < seq["color"].shape[0] or seq["reference"] is None:
        sys.exit(f"mix_map: {scene} has no frame {frame} with a ground truth")
    hist = stages.new_history(1, W, H, device, stages.memory_of(net))
    for t, p, jitter, reset in prepared_frames(seq, device):
        with torch.no_grad():
            out, hist, ex = stages.step(net, p, hist, jitter, reset, t % 8, round_f16=True)
        if t == frame:
            break
    mix = torch.sigmoid(stages.head_pixels(ex["head"], W, H)[0, 8])
    q = [round(mix.flatten().quantile(x).item(), 3) for x in (0.1, 0.5, 0.9)]
    print(f"{os.path.basename(scene)} frame {frame}: mix share mean {mix.mean().item():.3f}, 10/50/90 % {q}, largest {mix.max().item():.3f}")
    gt = stages.tonemap(seq["reference"][frame][0, :3].to(device).clamp(min=0) * seq["exposure"][frame])
    m = (mix / max(mix.max().item(), 1e-6)).unsqueeze(0).expand(3, -1, -1)
    return np.concatenate([to8(gt), to8(out[0]), to8(m)], 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("package")
    ap.add_argument("scenes", nargs="+")
    ap.add_argument("--frame", type=int, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    net, _ = load_net(a.package)
    if not net.cfg.taau_mix:
        sys.exit(f"mix_map: {a.package} has no TAAU mix (config taau_mix)")
    net = net.to(a.device).eval()
    Image.fromarray(np.concatenate([row(net, s, a.frame, a.device) for s in a.scenes], 0)).save(a.out)
    print(f"mix_map: {a.out}")


if __name__ == "__main__":
    main()
