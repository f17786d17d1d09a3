#!/usr/bin/env python3
"""Times the training generator (tessel_train/scenes.py) on whatever device PyTorch has: the
culled evaluation (SceneBatch.cull, what train.py uses) against evaluating every object, family,
light and layer everywhere, on the same sequences, and checks that both render them bit for bit
alike. Prints seconds a frame (the render samples and the 16-sample truth) and the ratio. The
unculled form gathers every point where the generator before culling selected with masks, so
it is slower than that generator was: the figure to plan data generation by is the culled one.

    python3 train/bench_scenes.py [--size 512] [--seqs 16] [--frames 3] [--device cuda]
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train.scenes import SceneBatch, render_sequence  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--size", type=int, default=512, help="output side in pixels")
    ap.add_argument("--seqs", type=int, default=16, help="sequences rendered together (train.py renders up to 64)")
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--ratio", type=float, default=2.0)
    ap.add_argument("--hazards", type=float, default=0.15)
    a = ap.parse_args()
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    out, secs = {}, {}
    for cull in (True, False, True):  # the first culled pass also warms the device up
        sb = SceneBatch(a.seqs, 4242, dev, out_size=(a.size, a.size), hazards=a.hazards, cull=cull)
        sync()
        t0 = time.time()
        out[cull] = render_sequence(sb, a.ratio, a.frames, spp=16, t0=3)
        sync()
        secs[cull] = (time.time() - t0) / a.frames
    for k in out[True]:
        if not torch.equal(out[True][k], out[False][k]):
            sys.exit(f"bench_scenes: the culled evaluation changed the {k}")
    name = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    print(f"scenes on {name}: {a.seqs} sequences at {a.size}^2, ratio {a.ratio:g}, hazards {a.hazards:g}: "
          f"{secs[True]:.3f} s a frame culled, {secs[False]:.3f} s evaluating everything ({secs[False] / secs[True]:.2f}x); the same sequences")


if __name__ == "__main__":
    main()
