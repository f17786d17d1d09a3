"""Replaying held-out `tessel scene` folders through the tessel binary, for the analysis scripts
(train/error_split.py, train/mix_bound.py). numpy-free and torch-free."""
import json
import os
import subprocess
import sys


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
