#!/usr/bin/env python3
"""Does today's PyTorch twin still produce the committed golden vectors? Rewrites every case of
model/tests/golden/ into a temporary folder with the package the cases name (the default model's
cases, and a preset's such as fast_2x_72x40 with its own) and compares each file with the committed
one element by element: equal within 4e-3 absolute or relative (a few f16 steps: another CPU or
PyTorch build may round differently), non-finite inputs identical. The Rust test checks the CPU
reference against the same files.

    python3 train/check_golden.py [--golden model/tests/golden]

Exit status 1 and the failing files when anything moved: a change to train/ that moves the golden
vectors must come with new ones (train.py writes them) and a passing `cargo test`."""
import argparse
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import golden  # noqa: E402
from tessel_train.export import load_net  # noqa: E402


F16_PREFIXES = ("tokens", "head", "hist")  # golden.py writes these as f16, the rest as f32


def compare(mine, ref):
    """-> (number of elements out of tolerance, largest finite difference)."""
    if mine is None or mine.size != ref.size:
        return ref.size, float("inf")
    ok = np.isclose(mine.astype(np.float64), ref, rtol=4e-3, atol=4e-3, equal_nan=True)
    finite = np.isfinite(ref) & np.isfinite(mine)
    return int((~ok).sum()), float(np.abs(mine[finite].astype(np.float64) - ref[finite]).max(initial=0.0))


def source_case(name):
    """The case of golden.CASES a committed case was written as: its own name, or, for a preset's
    copy (fast_2x_72x40), the name it ends with."""
    return next((c[0] for c in golden.CASES if name == c[0] or name.endswith("_" + c[0])), name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden", default="model/tests/golden")
    a = ap.parse_args()
    root = os.path.abspath(a.golden)
    # The trained cases by the package they name (a folder outside the case); the seeded cases
    # carry a small network of their own ("model") and are written beside the first package's.
    groups = {}
    for name in sorted(os.listdir(root)):
        model = json.load(open(os.path.join(root, name, "golden.json"))).get("model")
        if model and model != "model":
            groups.setdefault(os.path.normpath(os.path.join(root, name, model)), []).append(name)
    seeded = [n for n in sorted(os.listdir(root)) if not any(n in cases for cases in groups.values())]
    failed, worst, exact, total = [], 0.0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        written = {}  # committed case -> the folder its rewrite is in
        for i, (package, cases) in enumerate(groups.items()):
            out = os.path.join(tmp, str(i))
            golden.write_all(load_net(package)[0], out, package, seeded=i == 0)
            written.update({n: os.path.join(out, source_case(n)) for n in cases})
            if i == 0:
                written.update({n: os.path.join(out, n) for n in seeded})
        for name in sorted(os.listdir(root)):
            for f in sorted(os.listdir(os.path.join(root, name))):
                if not f.endswith(".bin"):
                    continue
                dt = "<f2" if f.startswith(F16_PREFIXES) else "<f4"
                stored = np.fromfile(os.path.join(root, name, f), dtype=dt)
                path = os.path.join(written.get(name, os.path.join(tmp, "none")), f)
                mine = np.fromfile(path, dtype=dt) if os.path.exists(path) else None
                bad, diff = compare(mine, stored.astype(np.float64))
                total += 1
                exact += mine is not None and mine.tobytes() == stored.tobytes()
                worst = max(worst, diff)
                if bad:
                    failed.append(f"{name}/{f}: {bad} of {stored.size} values out of tolerance, largest difference {diff:.3g}")
    if failed:
        print(f"{len(failed)} of {total} golden files moved:")
        print("\n".join("  " + d for d in failed))
        sys.exit(1)
    print(f"golden vectors: all {total} files of {len(os.listdir(root))} cases reproduce ({exact} byte for byte; "
          f"largest difference {worst:.3g})")


if __name__ == "__main__":
    main()
