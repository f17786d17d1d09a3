"""Checks the hazards of the training scenes (tessel_train/scenes.py, issue 13) on whatever device
PyTorch has: with hazards=0 the scenes are exactly what they were; with hazards=1 the motion and
depth are still the opaque surfaces' where the hazards are only in the colour, the thin wires and
fences take their own depth and motion over a small part of the frame, the colour changes, and
everything stays finite. Writes a strip of frames to out/hazards/ for a look.

    python3 train/check_hazards.py [--device cuda]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train.scenes import SceneBatch, render_sequence  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--out", default="out/hazards")
    a = ap.parse_args()
    S, size, frames = 8, 64, 6
    plain = render_sequence(SceneBatch(S, 77, a.device, out_size=(size, size)), 2.0, frames, spp=4)
    zero = render_sequence(SceneBatch(S, 77, a.device, out_size=(size, size), hazards=0.0), 2.0, frames, spp=4)
    for k in plain:
        assert torch.equal(plain[k], zero[k]), f"hazards=0 changed {k}"
    # The colour hazards: everything but the thin objects, which are geometry.
    colour_only = SceneBatch(S, 77, a.device, out_size=(size, size), hazards=1.0)
    colour_only.hz_thin[:] = False
    hz = render_sequence(colour_only, 2.0, frames, spp=4)
    for k in ("motion", "depth", "jitter"):
        # Screens scroll their pictures, not their geometry; lights and layers add no motion.
        assert torch.equal(plain[k], hz[k]), f"a hazard changed the {k}"
    # Thin wires and fences: their own depth and motion over a small part of the frame, finite.
    thin = render_sequence(SceneBatch(S, 77, a.device, out_size=(size, size), hazards=1.0), 2.0, frames, spp=4)
    covered = (thin["depth"] != hz["depth"]).float().mean().item()
    assert 0.002 < covered < 0.2, f"thin objects cover {covered:.4f} of the pixels"
    moved = (thin["motion"] != hz["motion"]).any(dim=2).float().mean().item()  # [T, S, 2, h, w]
    assert moved > 0.0, "thin objects left the motion unchanged"
    for k in ("color", "reference", "motion", "depth"):
        assert torch.isfinite(thin[k]).all(), f"non-finite {k} with thin objects"
    print(f"thin objects: {100 * covered:.2f} % of the pixels take their depth, {100 * moved:.2f} % their motion")
    for k in ("color", "reference"):
        assert torch.isfinite(hz[k]).all(), f"non-finite {k}"
        d = (hz[k] - plain[k]).abs().mean().item()
        assert d > 1e-3, f"the hazards left the {k} unchanged ({d})"
    # Over time the hazards move while the surfaces' motion does not describe them: the colour
    # change between frames differs from the hazard-free scene's.
    dc = (hz["color"][1:] - hz["color"][:-1]).abs().mean().item()
    dp = (plain["color"][1:] - plain["color"][:-1]).abs().mean().item()
    print(f"mean colour change per frame: {dp:.4f} without hazards, {dc:.4f} with")
    # The generator evaluates objects, materials, lights and layers only where they can show
    # (SceneBatch.cull): the same sequences, bit for bit, as evaluating each everywhere. A mix of
    # sequences with and without each hazard, at a size whose frames hold more than ten objects.
    for hazards, sz in ((0.4, 320), (1.0, 48)):
        got = []
        for cull in (True, False):
            got.append(render_sequence(SceneBatch(6, 2027, a.device, out_size=(sz, sz), hazards=hazards, cull=cull), 1.5, 2, spp=4, t0=5))
        for k in got[0]:
            assert torch.equal(got[0][k], got[1][k]), f"culled evaluation changed the {k} (hazards {hazards}, {sz} px)"
    print("culled evaluation: the same sequences as evaluating everything everywhere")
    os.makedirs(a.out, exist_ok=True)
    try:
        import numpy as np
        from PIL import Image
        ref = thin["reference"][:, :, :3].clamp(min=0)
        img = (ref / (1 + ref)).permute(1, 3, 0, 4, 2).reshape(S * size, frames * size, 3)
        Image.fromarray((img.cpu().numpy() * 255).astype(np.uint8)).save(os.path.join(a.out, "strip.png"))
        print(f"{a.out}/strip.png: {S} sequences (rows) x {frames} frames (columns), ground truth, tonemapped")
    except ImportError:
        print("skipped: no numpy/PIL: no picture")
    print("hazards: ok")


if __name__ == "__main__":
    main()
