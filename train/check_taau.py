#!/usr/bin/env python3
"""Holds the torch port of the classical TAAU (tessel_train/taau.py) to the tessel binary's
(`tessel replay --network none`, model/src/taau.rs): scenes of every kind at 1.5x, 2x and 3x
(three kinds with automatic exposure, so that the history is re-exposed), each frame's output compared with the
binary's as PSNR of the tonemapped colour. The port rounds its history to f16 as the binary does;
what is left are float orders of evaluation, which may flip a threshold (a lock, the depth test)
on a few pixels, so the bar is a PSNR, not equality.

    python3 train/check_taau.py [--tessel target/release/tessel] [--size 96x64] [--frames 12] [--min-db 80]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import stages, taau  # noqa: E402
from tessel_train.heldout import check_tessel, psnr, read_output, replay, tonemapped  # noqa: E402
from tessel_train.sequence import load_sequence, prepared_frames  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("street", "fabric", "traffic", "night", "mixed", "light", "translucent", "screen", "thin")
RATIOS = ("1.5", "2", "3")
AUTO_EXPOSURE = ("night", "light", "thin")


def params_in_rust():
    """TaauParams::default() as model/src/taau.rs writes it: the port must use the same numbers."""
    src = open(os.path.join(ROOT, "model", "src", "taau.rs")).read()
    body = re.search(r"impl Default for TaauParams \{.*?TaauParams \{(.*?)\}", src, re.S).group(1)
    return {k: float(v) for k, v in re.findall(r"(\w+):\s*(-?[0-9.]+)", body)}


def run_case(tessel, tmp, kind, ratio, size, frames):
    scene = os.path.join(tmp, f"{kind}-{ratio}")
    subprocess.run([tessel, "scene", "--kind", kind, "--ratio", ratio, "--seed", "77", "--frames", str(frames), "--size", size,
                    "--out", scene], check=True, stdout=subprocess.DEVNULL)
    fj = os.path.join(scene, "frames.json")
    if kind in AUTO_EXPOSURE:  # the exposure follows the frame, so the history is re-exposed
        d = json.load(open(fj))
        d["settings"]["exposure"] = "auto"
        json.dump(d, open(fj, "w"))
    replay(tessel, fj, "none", os.path.join(ROOT, "models", "tessel-v12"), os.path.join(scene, "rust"), "check_taau")
    seq = load_sequence(fj)
    W, H = seq["out_size"]
    state = taau.new_state(1, W, H, "cpu")
    worst = 200.0
    for t, p, jitter, reset in prepared_frames(seq):
        e = seq["exposure"][t]
        out, state = taau.step(p, state, jitter, reset, (W, H), round_f16=True)
        # The port's output as the binary writes it (linear under the exposure, f16), tonemapped again.
        mine = stages.round16(stages.untonemap(out[0]) / e).permute(1, 2, 0).numpy()
        theirs = read_output(os.path.join(scene, "rust", f"o{t:04d}.bin"), W, H, "check_taau")[..., :3]
        worst = min(worst, psnr(tonemapped(mine, e), tonemapped(theirs, e)))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessel", default=os.path.join(ROOT, "target", "release", "tessel"))
    ap.add_argument("--size", default="96x64")
    ap.add_argument("--frames", type=int, default=12)
    ap.add_argument("--min-db", type=float, default=80.0)
    a = ap.parse_args()
    check_tessel(a.tessel, "check_taau")
    rust = params_in_rust()
    if rust != taau.PARAMS:
        sys.exit(f"check_taau: tessel_train/taau.py PARAMS differ from model/src/taau.rs TaauParams::default(): "
                 f"{ {k: (taau.PARAMS.get(k), v) for k, v in rust.items() if taau.PARAMS.get(k) != v} }")
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            res = {r: run_case(a.tessel, tmp, kind, r, a.size, a.frames) for r in RATIOS}
            print(f"check_taau: {kind:12s} " + "  ".join(f"{r}x {v:6.2f} dB" for r, v in res.items()))
            failed += [f"{kind} {r}x ({v:.2f} dB)" for r, v in res.items() if v < a.min_db]
    if failed:
        sys.exit(f"check_taau: the port's worst frame is under {a.min_db} dB against tessel replay --network none: {', '.join(failed)}")
    print(f"check_taau: pass (every frame of 27 scenes >= {a.min_db} dB against the binary's classical TAAU)")


if __name__ == "__main__":
    main()
