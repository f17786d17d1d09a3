"""How far the parts that `train.py --exp-grow` added have moved from their start.

    python3 train/grown_moved.py BASE GROWN [GROWN ...]

BASE is the package the growth started from (`--init`); each GROWN is a grown package folder
(its shipped weights, averaged where the run averaged them) or a training checkpoint `ckpt.pt`
(its raw weights, `net`). For every tensor that BASE lacks, the root mean square of its values;
beside it, the same for the BASE tensor of the same kind (the trained parts' scale), so that a
new output layer still near its zero start shows as such. Output layers of added blocks and of
the per-pixel MLP start at zero, and so do the extra features' embedding columns
(tessel_train/experimental.py `grow_from`): their RMS is how far training took them.
(docs/MODEL.md, "More capacity or more inputs on tessel-v12", the thirty-first session's runs.)
"""
import argparse
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train.export import load_net  # noqa: E402


def weights(path):
    """Name -> f32 tensor of a package folder or a checkpoint."""
    if not os.path.exists(path):
        sys.exit(f"{path}: no such package folder or checkpoint")
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "model.json")):
            sys.exit(f"{path}: no model.json (a package folder or a ckpt.pt)")
        net, _ = load_net(path)
        return {k: v.float() for k, v in net.state_dict().items()}
    ck = torch.load(path, map_location="cpu", weights_only=False)
    if not isinstance(ck, dict) or "net" not in ck:
        sys.exit(f"{path}: not a train.py checkpoint (no 'net')")
    return {k: v.float() for k, v in ck["net"].items()}


def added(w, base):
    """The names of the tensors of W that BASE lacks, sorted."""
    return sorted(k for k in w if k not in base)


def rms(t):
    return t.pow(2).mean().sqrt().item()


def kin(name, base):
    """The BASE tensor of the same kind as a new one: an added block's counterpart in the first
    block of its level (mid.3.fc2.weight -> mid.0.fc2.weight), the contract's pixel embedding for
    the extra features' columns and for the per-pixel MLP's first layer, the per-pixel head path
    for its output layer."""
    cand = [re.sub(r"^(\w+)\.\d+\.", r"\g<1>.0.", name)]
    if name.startswith("pixel_embed_extra."):
        cand.append("pixel_embed.weight")
    if name.startswith("pixel_mlp2."):
        cand.append("pixel_head." + name.split(".", 1)[1])
    if name.startswith("pixel_mlp1."):
        cand.append("pixel_embed." + name.split(".", 1)[1])
    return next((c for c in cand if c in base and c != name), None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("grown", nargs="+")
    a = ap.parse_args()
    base = weights(a.base)
    for g in a.grown:
        w = weights(g)
        new = added(w, base)
        print(f"{g}: {len(new)} tensors not in {a.base}")
        if not new:
            continue
        print("| tensor | shape | RMS | trained counterpart | its RMS |")
        print("|---|---|---|---|---|")
        for k in new:
            c = kin(k, base)
            cr = f"{rms(base[c]):.4f}" if c else "-"
            print(f"| {k} | {tuple(w[k].shape)} | {rms(w[k]):.4f} | {c or '-'} | {cr} |")


if __name__ == "__main__":
    main()
