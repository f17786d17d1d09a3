"""Checks train.py's `tessel scene` data (tessel_train/scene_data.py, --scene-data / --scene-val)
against the files `tessel scene` writes: every 32-frame scene gives two 16-frame sequences (cut
at its reset), grouped by ratio, each frame's colour, motion, depth, ground truth and jitter the
ones on disk, in the cache layout of make_cache; a scene of another size is refused, naming it.

    python3 train/check_scene_data.py [--tessel target/release/tessel]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import scene_data  # noqa: E402

RATIOS = (1.5, 2.0, 3.0)


def scene(tessel, out, kind, ratio, seed, size):
    subprocess.run([tessel, "scene", "--kind", kind, "--ratio", str(ratio), "--seed", str(seed), "--frames", "32",
                    "--size", f"{size}x{size}", "--out", out], check=True, stdout=subprocess.DEVNULL)
    return json.load(open(os.path.join(out, "frames.json")))


def plane(folder, name, dtype, shape):
    return torch.from_numpy(np.fromfile(os.path.join(folder, name), dtype=dtype).astype(np.float32).reshape(shape))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", default="target/release/tessel")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        size = 48
        d2 = os.path.join(tmp, "train", "thin_2x")
        d3 = os.path.join(tmp, "train", "light_3x")
        f2 = scene(a.tessel, d2, "thin", 2, 3001, size)
        scene(a.tessel, d3, "light", 3, 3002, size)
        cache = scene_data.load_scene_folder(os.path.join(tmp, "train"), 16, size, RATIOS, "cpu")
        assert sorted(cache) == [2.0, 3.0], f"ratios {sorted(cache)}"
        for r, d in cache.items():
            assert d["color"].shape[:2] == (16, 2) and d["reference"].shape == (16, 2, 4, size, size), (r, d["color"].shape)
            assert d["color"].dtype == torch.float16 and d["jitter"].dtype == torch.float32
        rw = round(size / 2)
        d = cache[2.0]
        # Sequence 1 is frames 16..31 of the scene: its frame 3 is the scene's frame 19.
        fr = f2["frames"][19]
        assert torch.equal(d["color"][3, 1].float(), plane(d2, fr["color"], np.float16, (rw, rw, 4)).permute(2, 0, 1)), "colour"
        assert torch.equal(d["motion"][3, 1].float(), plane(d2, fr["motion"], np.float16, (rw, rw, 2)).permute(2, 0, 1)), "motion"
        assert torch.equal(d["depth"][3, 1, 0].float(), plane(d2, fr["depth"], np.float32, (rw, rw)).half().float()), "depth"
        assert torch.equal(d["reference"][3, 1].float(), plane(d2, fr["reference"], np.float16, (size, size, 4)).permute(2, 0, 1)), "reference"
        assert torch.equal(d["jitter"][3, 1], torch.tensor(fr["jitter"], dtype=torch.float32)), "jitter"
        assert torch.equal(d["color"][0, 0].float(), plane(d2, f2["frames"][0]["color"], np.float16, (rw, rw, 4)).permute(2, 0, 1)), "frame 0"
        # Appended to a cache, each ratio keeps its own sequences first.
        base = {r: {k: v[:, :1].clone() for k, v in cache[2.0].items()} for r in (2.0,)}
        merged = scene_data.append(base, {2.0: cache[2.0]})
        assert merged[2.0]["color"].shape[1] == 3 and torch.equal(merged[2.0]["color"][:, 1:], cache[2.0]["color"])
        # Another crop size is refused, naming the file and field.
        try:
            scene_data.load_scene_folder(os.path.join(tmp, "train"), 16, 64, RATIOS, "cpu")
            raise AssertionError("a 48x48 scene was taken for 64x64 crops")
        except ValueError as e:
            assert "frames.json" in str(e) and "output" in str(e), str(e)
    print("scene data: ok (2 scenes -> 2 sequences each, frames as on disk, wrong size refused)")


if __name__ == "__main__":
    main()
