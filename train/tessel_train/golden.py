"""Golden vectors: small cases run through the PyTorch twin in f32 on the CPU, with the f16 rounding
points of the contract; the Rust CPU reference must reproduce them (model/tests/golden.rs)."""
import json
import os

import numpy as np
import torch

from . import stages
from .export import export_package, round_weights_f16
from .net import Config, TesselNet, init_like_reference
from .scenes import SceneBatch, render_sequence


def _f32(path, t):
    np.ascontiguousarray(t.detach().cpu().numpy().astype("<f4")).tofile(path)


def _f16(path, t):
    np.ascontiguousarray(t.detach().cpu().numpy().astype("<f2")).tofile(path)


CASES = [
    # name, output (W, H), ratio, frames, seed, exposure
    ("2x_72x40", (72, 40), 2.0, 4, 11, 1.0),
    ("1.5x_52x36", (52, 36), 1.5, 3, 12, 1.5),
]


def write_case(net, out_root, name, out_size, ratio, frames, seed, exposure, model_dir=None):
    d = os.path.join(out_root, name)
    os.makedirs(d, exist_ok=True)
    net = net.cpu().float().eval()
    sb = SceneBatch(1, seed, "cpu", out_size=out_size, objects=6)
    seq = render_sequence(sb, ratio, frames, spp=4, t0=5)
    W, H = out_size
    hist = stages.new_history(1, W, H, "cpu")
    entries = []
    for t in range(frames):
        color, motion, depth = seq["color"][t], seq["motion"][t], seq["depth"][t]
        if t == 1:  # exercise sanitising: a NaN, an Inf and a negative colour, a NaN motion
            color = color.clone()
            color[0, 0, 0, 0] = float("nan")
            color[0, 1, 0, 1] = float("inf")
            color[0, 2, 1, 0] = -3.0
            motion = motion.clone()
            motion[0, 0, 2, 2] = float("nan")
        jit = seq["jitter"][t].view(1, 2)
        reset = torch.tensor([t == 0])
        p = stages.prepare(color, motion, depth, out_size, exposure=exposure)
        with torch.no_grad():
            out, hist, ex = stages.step(net, p, hist, jit, reset, phase=t % 8, round_f16=True)
        rh, rw = color.shape[-2:]
        files = {k: f"{k}{t}.bin" for k in ("c", "m", "d", "tokens", "head", "out", "hist")}
        _f32(os.path.join(d, files["c"]), color[0].permute(1, 2, 0))
        _f32(os.path.join(d, files["m"]), motion[0].permute(1, 2, 0))
        _f32(os.path.join(d, files["d"]), depth[0, 0])
        _f16(os.path.join(d, files["tokens"]), ex["tokens"][0])
        _f16(os.path.join(d, files["head"]), ex["head"][0])
        linear = stages.untonemap(out) / exposure
        _f32(os.path.join(d, files["out"]), linear[0].permute(1, 2, 0))
        _f16(os.path.join(d, files["hist"]), hist["color"][0].permute(1, 2, 0))
        entries.append({"color": files["c"], "motion": files["m"], "depth": files["d"], "render": [rw, rh],
                        "jitter": [float(jit[0, 0]), float(jit[0, 1])], "reset": t == 0})
        entries[-1]["golden"] = {k: files[k] for k in ("tokens", "head", "out", "hist")}
    seqjson = {"output": [W, H], "bits": 32,
               "settings": {"hdr": True, "depth_inverted": True, "motion_units": "render", "exposure": exposure},
               "frames": [{k: v for k, v in e.items() if k != "golden"} for e in entries]}
    json.dump(seqjson, open(os.path.join(d, "frames.json"), "w"), indent=1)
    extra = {"model": model_dir} if model_dir else {}
    json.dump({**extra, "frames": [e["golden"] for e in entries],
               "note": "tokens/head: f16 [padded_h][padded_w][128]; out: f32 linear RGB [H][W][3]; hist: f16 tonemapped RGB [H][W][3]"},
              open(os.path.join(d, "golden.json"), "w"), indent=1)


# Cases with their own small seeded networks (not trained models), so that a path is checked
# whether or not the shipped model uses it: the per-pixel head path (config `pixel_head`); the
# accumulating reconstruction (config `accumulate`, docs/NETWORK.md §6: the count kept in the
# history, the clip to the mean +- a deviation), over five frames so that the count climbs; and a
# history kernel other than Catmull-Rom (config `history_a`, §2), over five frames of history.
# Each: (case, network seed, baseline, accumulate, scale of a fresh draw of pixel_head.weight or
# None, package name, history_a).
SEEDED_CASES = [
    (("3x_48x30_pixel_head", (48, 30), 3.0, 3, 13, 1.0), 7, (0.75, 0.3, 0.1), False, 0.5, "pixel-head-test", -0.5),
    (("2x_40x32_accumulate", (40, 32), 2.0, 5, 14, 1.0), 8, (0.85, 0.3, 0.5), True, None, "accumulate-test", -0.5),
    (("2x_44x28_history_a", (44, 28), 2.0, 5, 15, 1.0), 9, (0.85, 0.3, 0.5), False, None, "history-a-test", -0.8),
]


def seeded_test_net(seed, baseline, accumulate=False, pixel_weight_scale=None, history_a=-0.5):
    cfg = Config(channels=[16, 32], encoder_depths=[1], bottleneck_depth=1, decoder_depths=[1], pixel_head=True, accumulate=accumulate,
                 history_a=history_a)
    net = TesselNet(cfg)
    init_like_reference(net, baseline, seed=seed)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
        if pixel_weight_scale is not None:
            net.pixel_head.weight.copy_(pixel_weight_scale * torch.randn(net.pixel_head.weight.shape, generator=g))
    round_weights_f16(net)
    return net


def write_all(net, out_root, package_dir=None, seeded=True):
    """The cases of `net` (recording package_dir, relative to each case, when given: the Rust test
    then loads that package; without it, the shipped model) and, unless seeded=False, the seeded
    cases (whose small networks do not depend on `net`)."""
    for c in CASES:
        rel = os.path.relpath(package_dir, os.path.join(out_root, c[0])) if package_dir else None
        write_case(net, out_root, *c, model_dir=rel)
    if not seeded:
        return
    for case, seed, baseline, accumulate, pixel_scale, name, history_a in SEEDED_CASES:
        small = seeded_test_net(seed, baseline, accumulate, pixel_scale, history_a)
        export_package(small, os.path.join(out_root, case[0], "model"), name, "seeded test network for the golden vectors",
                       baseline, {"trainer": "train/tessel_train/golden.py", "note": "not trained"}, trained=False)
        write_case(small, out_root, *case, model_dir="model")
