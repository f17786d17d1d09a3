"""Training and validation sequences from `tessel scene` (the Rust generator of the held-out scenes,
docs/MODEL.md), in the cache layout of train.py's make_cache: {ratio: {color [T,S,4,rh,rw] f16,
motion [T,S,2,rh,rw] f16 (render px), depth [T,S,1,rh,rw] f16 (nearness), jitter [T,S,2] f32,
reference [T,S,4,H,W] f16}}. scripts/scene_data.sh writes the folders; the held-out seeds are never
among them. Each sequence is cut at its resets, and every piece of at least `frames` frames gives one
sequence of its first `frames` frames (a 32-frame scene with its cut at 16: two of 16)."""
import glob
import os
from concurrent.futures import ThreadPoolExecutor

import torch

from .sequence import load_sequence

KEYS = ("color", "motion", "depth", "jitter", "reference")


def ratio_of(path, out_size, render, ratios):
    """The ratio of `ratios` whose render size round(W / ratio) x round(H / ratio) is this sequence's."""
    W, H = out_size
    for r in ratios:
        if (max(1, round(W / r)), max(1, round(H / r))) == tuple(render):
            return r
    raise ValueError(f"{path}: render size {render[0]}x{render[1]} for output {W}x{H} is none of the ratios {ratios}")


def pieces(path, frames, size, ratios):
    """-> (ratio, [dict of one sequence's tensors, T = frames, S = 1]) for one frames.json."""
    s = load_sequence(path)
    if s["out_size"] != (size, size):
        raise ValueError(f"{path}: output: {s['out_size'][0]}x{s['out_size'][1]}, the training crops are {size}x{size}")
    if s["motion_units"] != "render" or not s["depth_inverted"]:
        raise ValueError(f"{path}: settings: motion_units 'render' and depth_inverted true expected (as tessel scene writes)")
    if any(e != 1.0 for e in s["exposure"]):
        raise ValueError(f"{path}: settings.exposure: 1.0 expected (training applies its own exposure changes)")
    if s["reference"] is None:
        raise ValueError(f"{path}: frames[].reference: every frame needs its ground truth")
    ratio = ratio_of(path, s["out_size"], s["color"].shape[-1:-3:-1], ratios)
    starts = [i for i, r in enumerate(s["reset"]) if r] + [len(s["reset"])]
    out = []
    for a, b in zip(starts, starts[1:]):
        if b - a >= frames:
            out.append({k: s[k][a:a + frames] for k in KEYS})
    return ratio, out


def load_scene_folder(folder, frames, size, ratios, device):
    """Every frames.json below `folder` as sequences of `frames` frames, grouped by ratio."""
    paths = sorted(glob.glob(os.path.join(folder, "**", "frames.json"), recursive=True))
    if not paths:
        raise ValueError(f"{folder}: no frames.json below it (scripts/scene_data.sh writes them)")
    with ThreadPoolExecutor(max_workers=8) as ex:
        loaded = list(ex.map(lambda p: pieces(p, frames, size, ratios), paths))
    by_ratio = {}
    for ratio, seqs in loaded:
        by_ratio.setdefault(ratio, []).extend(seqs)
    cache = {}
    for ratio, seqs in by_ratio.items():
        cache[ratio] = {k: torch.cat([q[k] for q in seqs], 1).to(device) for k in KEYS}
        for k in KEYS:
            if k != "jitter":
                cache[ratio][k] = cache[ratio][k].half()
    return cache


def append(cache, extra):
    """cache with extra's sequences added to each ratio's (both in the layout above)."""
    for ratio, d in extra.items():
        if ratio not in cache:
            raise ValueError(f"scene sequences at {ratio}x, a ratio the cache does not train")
        cache[ratio] = {k: torch.cat([cache[ratio][k], d[k].to(cache[ratio][k].dtype)], 1) for k in KEYS}
    return cache
