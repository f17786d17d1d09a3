"""Replaying held-out `tessel scene` folders through the tessel binary, for the analysis scripts
(train/error_split.py, train/mix_bound.py), and reading their outputs back. torch-free."""
import json
import os
import subprocess
import sys

import numpy as np


def scene_cases(scenes, who):
    """The KIND-RATIO folders of SCENES that hold a frames.json, sorted; exits when there are none."""
    cases = sorted(d for d in os.listdir(scenes) if os.path.isfile(os.path.join(scenes, d, "frames.json")))
    if not cases:
        sys.exit(f"{who}: {scenes} holds no KIND-RATIO scene folders")
    return cases


def check_tessel(tessel, who):
    if not os.access(tessel, os.X_OK):
        sys.exit(f"{who}: {tessel} is not an executable (cargo build --release)")


def replay(tessel, frames, network, model, out, who):
    """`tessel replay` of FRAMES through NETWORK into OUT, unless OUT already holds its report;
    returns the report (report.json: per-frame PSNR among others)."""
    if not os.path.exists(os.path.join(out, "report.json")):
        r = subprocess.run([tessel, "replay", frames, "--network", network, "--model", model, "--out", out],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{who}: tessel replay {frames} --network {network} failed: {r.stderr.strip()[-400:]}")
    return json.load(open(os.path.join(out, "report.json")))


def read_output(path, W, H, who):
    """An output plane (RGBA f16, as `tessel replay` writes it) as f32 [H, W, 4]."""
    a = np.fromfile(path, dtype=np.float16)
    if a.size != W * H * 4:
        sys.exit(f"{who}: {path} holds {a.size} values, expected {W}x{H}x4")
    return a.astype(np.float32).reshape(H, W, 4)


def tonemapped(rgba, e):
    """Tonemapped RGB under exposure e (model/src/metrics.rs tonemapped_rgb)."""
    x = np.maximum(rgba[..., :3], 0.0) * e
    return x / (1.0 + x)


def psnr(a, b):
    """PSNR of tonemapped colours (peak 1) between two arrays; 200 dB where they are equal."""
    return 10 * np.log10(1.0 / max(float(((a - b) ** 2).mean()), 1e-20))
