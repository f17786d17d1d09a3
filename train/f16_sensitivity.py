"""How much of a model's head survives f16 activations: the PyTorch twin run wholly in f16 against
the same twin in f32, on a golden case's token buffers, as PSNR over the f32 head's range (the
measure `tessel check` uses). A model whose head scores lower here has less margin on the GPU's
f16 matrix paths (BENCHMARKS.md, eleventh session: tessel-v8's 73 dB against tessel-v6's 82).

    python3 train/f16_sensitivity.py [--case model/tests/golden/2x_72x40] PACKAGE...
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train.export import load_net  # noqa: E402


def psnr_range(a, ref):
    r = float(ref.max() - ref.min())
    return 10 * np.log10(r * r / float(((a - ref) ** 2).mean()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("packages", nargs="+")
    ap.add_argument("--case", default="model/tests/golden/2x_72x40")
    a = ap.parse_args()
    frames = sorted(f for f in os.listdir(a.case) if f.startswith("tokens") and f.endswith(".bin"))
    for pkg in a.packages:
        net = load_net(pkg)[0].eval()
        scores, rng = [], 0.0
        for phase, f in enumerate(frames):
            tok = np.fromfile(os.path.join(a.case, f), dtype="<f2").astype(np.float32)
            n = tok.size // 128
            side = int(round(n ** 0.5))
            if side * side != n:
                sys.exit(f"{a.case}/{f}: {n} tokens is not a square padded grid")
            t = torch.from_numpy(tok).view(1, side, side, 128)
            with torch.no_grad():
                ref = net.float()(t, phase)
                low = net.half()(t.half(), phase).float()
            scores.append(psnr_range(low.numpy(), ref.numpy()))
            rng = max(rng, float(ref.max() - ref.min()))
        print(f"{pkg}: f16 twin against f32 twin, head {' '.join(f'{s:.1f}' for s in scores)} dB; head range {rng:.1f}")


if __name__ == "__main__":
    main()
