"""Reads a frame sequence in the public format (DESIGN.md, docs/FORMATS.md: frames.json and raw planes,
as `tessel scene` writes them) into the tensors train.py's stages take, batch of one."""
import json
import math
import os

import numpy as np
import torch

from . import stages


def _plane(path, dtype, shape, field):
    if not os.path.exists(path):
        raise ValueError(f"{field}: {path} does not exist")
    a = np.fromfile(path, dtype=dtype)
    if a.size != math.prod(shape):
        raise ValueError(f"{field}: {path} holds {a.size} values, expected {math.prod(shape)} ({'x'.join(map(str, shape))})")
    return torch.from_numpy(a.astype(np.float32).reshape(shape))


def auto_exposure(color):
    """docs/NETWORK.md §1, of sanitised colour [1,4,rh,rw]: 0.18 / exp(mean ln max(luma, 1e-4)), clamped to [1/256, 256]."""
    lum = stages.luma(color[:, :3]).clamp(min=1e-4)
    return float((0.18 / torch.exp(torch.log(lum).mean())).clamp(1 / 256, 256))


def load_sequence(path):
    """-> dict: color [T,1,4,rh,rw], motion [T,1,2,rh,rw], depth [T,1,1,rh,rw], jitter [T,1,2],
    reference [T,1,4,H,W] (when every frame has one, else None), reset [T] bool, exposure [T] floats,
    out_size (W, H), motion_units, depth_inverted. All frames must share one render size."""
    d = json.load(open(path))
    root = os.path.dirname(path)
    W, H = d["output"]
    dt = {16: np.float16, 32: np.float32}[d.get("bits", 16)]
    st = d.get("settings", {})
    frames = d["frames"]
    rw, rh = frames[0]["render"]
    seq = dict(color=[], motion=[], depth=[], jitter=[], reference=[], reset=[], exposure=[])
    for i, f in enumerate(frames):
        where = f"{path}: frames[{i}]"
        if tuple(f["render"]) != (rw, rh):
            raise ValueError(f"{where}.render: {f['render']} differs from frame 0's {[rw, rh]} (not supported here)")
        c = _plane(os.path.join(root, f["color"]), dt, (rh, rw, 4), f"{where}.color").permute(2, 0, 1)[None]
        m = _plane(os.path.join(root, f["motion"]), dt, (rh, rw, 2), f"{where}.motion").permute(2, 0, 1)[None]
        z = _plane(os.path.join(root, f["depth"]), np.float32, (rh, rw), f"{where}.depth")[None, None]
        seq["color"].append(c)
        seq["motion"].append(m)
        seq["depth"].append(z)
        seq["jitter"].append(torch.tensor([f["jitter"]], dtype=torch.float32))
        seq["reset"].append(i == 0 or bool(f.get("reset", False)))
        e = st.get("exposure", 1.0)
        seq["exposure"].append(auto_exposure(stages.sanitize(c, m, z)[0]) if e == "auto" else float(e))
        if "reference" in f:
            seq["reference"].append(_plane(os.path.join(root, f["reference"]), dt, (H, W, 4), f"{where}.reference").permute(2, 0, 1)[None])
    out = {k: torch.stack(v) for k, v in seq.items() if k in ("color", "motion", "depth", "jitter")}
    out["reference"] = torch.stack(seq["reference"]) if len(seq["reference"]) == len(frames) else None
    out.update(reset=seq["reset"], exposure=seq["exposure"], out_size=(W, H),
               motion_units=st.get("motion_units", "render"), depth_inverted=st.get("depth_inverted", True))
    return out


def prepared_frames(seq, device="cpu"):
    """Each frame of a load_sequence sequence, in order, as (t, the prepared frame (stages.prepare,
    under the frame's exposure), jitter [1,2], reset [1] bool), on `device`: what a replay through
    the twin steps with."""
    W, H = seq["out_size"]
    for t in range(seq["color"].shape[0]):
        p = stages.prepare(seq["color"][t].to(device), seq["motion"][t].to(device), seq["depth"][t].to(device), (W, H),
                           exposure=seq["exposure"][t], motion_units=seq["motion_units"], depth_inverted=seq["depth_inverted"])
        yield t, p, seq["jitter"][t].to(device), torch.tensor([seq["reset"][t]], device=device)
