#!/usr/bin/env python3
"""Where a model's lead over the classical TAAU lies: the held-out scenes' squared error (tonemapped,
frames 8..31, as `tessel compare` scores them) split by what each output pixel shows, for the
network (CPU reference) and the classical TAAU (`--network none`) side by side.

    python3 train/error_split.py SCENES [--model DIR] [--work DIR] [--json FILE]

SCENES holds `tessel scene` folders named KIND-RATIO (e.g. out/scenes/1001/640x360); each is
replayed through both (`tessel replay`, outputs kept under --work and reused). Classes, per output
pixel and frame (a pixel can be in several):
- still / moving: the nearest render sample's motion under or over 0.05 output px;
- motion edge: the 3 x 3 render neighbourhood's motion differs from the centre's by over 0.5 output
  px (where disocclusion happens);
- detail / flat: the ground truth's tonemapped luma gradient in the frame's top 20 % / bottom 50 %;
- after the cut: the four frames after a reset inside the scored frames (frames 16..19 of the
  held-out scenes), else steady.
Per ratio, pooled over the kinds: each class's share of pixels, the network's lead in it
(10 log10 of the TAAU's mean squared error over the network's), and its share of the network's
whole squared error. The lead over all pixels is the pooled one, not `tessel compare`'s mean of
per-frame PSNRs.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL  # noqa: E402
from tessel_train.heldout import check_tessel, read_output, replay, scene_cases, tonemapped  # noqa: E402
from tessel_train.sequence import load_sequence  # noqa: E402

ROOT = os.path.dirname(HERE)
START = 8
CLASSES = ("all", "still", "moving", "motion edge", "detail", "flat", "after the cut", "steady")


def luma(rgb):
    return 0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]


def classes(seq, i, gt_tm):
    """Boolean masks [H, W] of each class for frame i."""
    W, H = seq["out_size"]
    m = seq["motion"][i, 0].numpy()  # [2, rh, rw]
    rh, rw = m.shape[1:]
    if seq["motion_units"] == "render":
        m = m * np.array([W / rw, H / rh], dtype=np.float32)[:, None, None]
    nx = np.minimum(((np.arange(W) + 0.5) * rw / W).astype(int), rw - 1)
    ny = np.minimum(((np.arange(H) + 0.5) * rh / H).astype(int), rh - 1)
    speed = np.hypot(m[0], m[1])
    pad = np.pad(m, ((0, 0), (1, 1), (1, 1)), mode="edge")
    jump = np.zeros((rh, rw), np.float32)
    for dy in range(3):
        for dx in range(3):
            d = pad[:, dy:dy + rh, dx:dx + rw] - m
            jump = np.maximum(jump, np.hypot(d[0], d[1]))
    speed, jump = speed[ny][:, nx], jump[ny][:, nx]
    lum = luma(gt_tm)
    g = np.hypot(np.gradient(lum, axis=1), np.gradient(lum, axis=0))
    hi, lo = np.quantile(g, 0.8), np.quantile(g, 0.5)
    resets = [k for k in range(START, i + 1) if seq["reset"][k]]
    after = bool(resets) and i - resets[-1] < 4
    ones = np.ones((H, W), bool)
    return {"all": ones, "still": speed < 0.05, "moving": speed >= 0.05, "motion edge": jump > 0.5,
            "detail": g >= hi, "flat": g <= lo, "after the cut": ones if after else ~ones, "steady": ~ones if after else ones}


def split_case(tessel, scene, model, work):
    frames = os.path.join(scene, "frames.json")
    seq = load_sequence(frames)
    W, H = seq["out_size"]
    runs = {"net": os.path.join(work, "net"), "taau": os.path.join(work, "taau")}
    reports = {k: replay(tessel, frames, n, model, runs[k], "error_split") for k, n in (("net", "cpu"), ("taau", "none"))}
    acc = {c: dict(n=0, net=0.0, taau=0.0) for c in CLASSES}
    for i in range(START, seq["color"].shape[0]):
        e = seq["exposure"][i]
        gt = tonemapped(seq["reference"][i, 0].permute(1, 2, 0).numpy(), e)
        err = {k: ((tonemapped(read_output(os.path.join(d, f"o{i:04d}.bin"), W, H, "error_split"), e) - gt) ** 2).mean(-1)
               for k, d in runs.items()}
        for k, sq in err.items():  # the same error `tessel replay` scored the frame with
            mine, theirs = 10 * np.log10(1.0 / max(float(sq.mean()), 1e-20)), reports[k]["frames"][i]["psnr"]
            if abs(mine - theirs) > 0.01:
                sys.exit(f"error_split: {runs[k]} frame {i}: {mine:.3f} dB here, {theirs:.3f} in its report.json")
        for c, mask in classes(seq, i, gt).items():
            a = acc[c]
            a["n"] += int(mask.sum())
            a["net"] += float(err["net"][mask].sum())
            a["taau"] += float(err["taau"][mask].sum())
    return acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenes")
    ap.add_argument("--model", default=os.path.join(ROOT, SHIPPED_MODEL))
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "error-split"))
    ap.add_argument("--tessel", default=os.path.join(ROOT, "target", "release", "tessel"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    check_tessel(a.tessel, "error_split")
    cases = scene_cases(a.scenes, "error_split")
    per = {}
    for k, case in enumerate(cases):
        kind, ratio = case.rsplit("-", 1)
        print(f"[{k + 1}/{len(cases)}] {case}", file=sys.stderr, flush=True)
        per[case] = split_case(a.tessel, os.path.join(a.scenes, case), a.model, os.path.join(a.work, case))
    ratios = sorted({c.rsplit("-", 1)[1] for c in cases}, key=float)
    print(f"Squared error by class, frames {START}.., model {os.path.relpath(a.model, ROOT)}: share of pixels, "
          "the network's lead over the classical TAAU (dB), share of the network's squared error.\n")
    print("| class | " + " | ".join(f"{r}x pixels | {r}x lead dB | {r}x error share" for r in ratios) + " |")
    print("|---|" + "---|---|---|" * len(ratios))
    table = {}
    for c in CLASSES:
        row = []
        for r in ratios:
            tot = {k: sum(per[x][c][k] for x in per if x.endswith(f"-{r}")) for k in ("n", "net", "taau")}
            all_ = {k: sum(per[x]["all"][k] for x in per if x.endswith(f"-{r}")) for k in ("n", "net", "taau")}
            lead = 10 * np.log10(tot["taau"] / tot["net"]) if tot["n"] and tot["net"] > 0 else float("nan")
            share_px, share_err = tot["n"] / all_["n"], tot["net"] / all_["net"]
            table.setdefault(c, {})[r] = dict(pixels=share_px, lead_db=lead, error_share=share_err)
            row.append(f"{100 * share_px:.1f} % | {lead:+.2f} | {100 * share_err:.1f} %")
        print(f"| {c} | " + " | ".join(row) + " |")
    if a.json:
        json.dump(dict(model=a.model, scenes=a.scenes, cases=per, table=table), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
