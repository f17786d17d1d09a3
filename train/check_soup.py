#!/usr/bin/env python3
"""Checks train/soup.py on the shipped package: a soup of a package with itself is that package
byte for byte; weights 1,0 give the first package's weights exactly; an equal soup of the
package and a perturbed copy holds each weight's mean rounded to f16; a package of another
config is refused, naming the field.

    python3 train/check_soup.py
"""
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tessel_train import SHIPPED_MODEL  # noqa: E402
from tessel_train.export import export_package, load_net  # noqa: E402

ROOT = os.path.dirname(HERE)


def soup(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "soup.py"), *args], capture_output=True, text=True)


def main():
    pkg = os.path.join(ROOT, SHIPPED_MODEL)
    weights = lambda d: open(os.path.join(d, "weights.safetensors"), "rb").read()
    with tempfile.TemporaryDirectory() as t:
        same = os.path.join(t, "same")
        r = soup(pkg, pkg, "--out", same)
        assert r.returncode == 0, r.stderr
        assert weights(same) == weights(pkg), "a package souped with itself changed"
        # A perturbed copy, then 1,0 (the first exactly) and 0.5,0.5 (the mean, rounded to f16).
        net, mj = load_net(pkg)
        sd = {k: v.clone() for k, v in net.state_dict().items()}
        g = torch.Generator().manual_seed(5)
        other = {k: v + 0.01 * torch.randn(v.shape, generator=g) for k, v in sd.items()}
        net.load_state_dict(other)
        b = mj["baseline"]
        pert = os.path.join(t, "pert")
        export_package(net, pert, "perturbed", "", (b["blend"], b["sigma"], b["clamp"]), {})
        first = os.path.join(t, "first")
        assert soup(pkg, pert, "--weights", "1,0", "--out", first).returncode == 0
        assert weights(first) == weights(pkg), "weights 1,0 moved the first package's weights"
        half = os.path.join(t, "half")
        assert soup(pkg, pert, "--out", half).returncode == 0
        got = load_net(half)[0].state_dict()
        pert_sd = load_net(pert)[0].state_dict()
        worst = max(((got[k] - ((sd[k] + pert_sd[k]) / 2).half().float()).abs().max().item() for k in sd))
        assert worst == 0.0, f"the equal soup is not the f16-rounded mean (largest difference {worst})"
        # Another config: refused, naming the file and the field.
        cfg = mj["config"]
        net2_dir = os.path.join(t, "narrow")
        from tessel_train.net import Config, TesselNet
        c2 = dict(cfg, mlp_ratio=cfg["mlp_ratio"] + 1)
        export_package(TesselNet(Config.from_json(c2)), net2_dir, "narrow", "", (b["blend"], b["sigma"], b["clamp"]), {})
        r = soup(pkg, net2_dir, "--out", os.path.join(t, "bad"))
        assert r.returncode != 0 and "narrow/model.json" in r.stderr and "`config`" in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(t, "bad", "model.json")), "a refused soup wrote a package"
    print(f"soup: ok ({SHIPPED_MODEL}: itself, weights 1,0, the f16 mean, another config refused)")


if __name__ == "__main__":
    main()
