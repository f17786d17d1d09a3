#!/usr/bin/env python3
"""A weighted average of model packages trained from one starting point (a "soup"): the same
config and fixed head, each tensor the weighted mean of the packages' (in f32, stored as the
package's f16). Runs trained on from one package stay in one basin, so their mean is a model of
its own, which the held-out scoring (train/eval_twin.py) judges like any other.

    python3 train/soup.py A_PKG B_PKG [...] --out DIR [--weights 0.5,0.5] [--name NAME]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train.export import export_package, load_net  # noqa: E402


def parse_weights(text, n):
    w = [float(x) for x in text.split(",")] if text else [1.0 / n] * n
    if len(w) != n or any(x < 0 for x in w) or sum(w) <= 0:
        sys.exit(f"soup: --weights needs {n} non-negative numbers, not all zero (got {text!r})")
    return [x / sum(w) for x in w]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("packages", nargs="+", help="model package folders (model.json + weights.safetensors)")
    ap.add_argument("--out", required=True, help="folder of the averaged package")
    ap.add_argument("--weights", default=None, help="comma list, one per package (default: equal); normalised to sum 1")
    ap.add_argument("--name", default="tessel-dev")
    a = ap.parse_args()
    if len(a.packages) < 2:
        sys.exit("soup: give at least two packages")
    w = parse_weights(a.weights, len(a.packages))
    nets, mjs = zip(*(load_net(p) for p in a.packages))
    for p, mj in zip(a.packages[1:], mjs[1:]):
        for field in ("config", "baseline"):
            if mj[field] != mjs[0][field]:
                sys.exit(f"soup: {p}/model.json: field `{field}` differs from {a.packages[0]}'s ({mj[field]} against {mjs[0][field]})")
    sds = [n.state_dict() for n in nets]
    mean = {k: sum(wi * sd[k].float() for wi, sd in zip(w, sds)) for k in sds[0]}
    nets[0].load_state_dict(mean)
    b = mjs[0]["baseline"]
    provenance = {"soup": [{"package": os.path.normpath(p), "name": mj.get("name"), "weight": round(wi, 6),
                            "sha256": mj["files"][0]["sha256"]} for p, mj, wi in zip(a.packages, mjs, w)]}
    export_package(nets[0], a.out, a.name, mjs[0].get("description", ""), (b["blend"], b["sigma"], b["clamp"]), provenance)
    print(f"soup: {a.out}: " + " + ".join(f"{wi:.3g} x {p}" for p, wi in zip(a.packages, w)))


if __name__ == "__main__":
    main()
