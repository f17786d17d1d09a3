#!/usr/bin/env python3
"""Does today's PyTorch twin still produce the committed golden vectors? Rewrites every case of
model/tests/golden/ into a temporary folder with the package each case names and compares the
files byte for byte (the Rust test checks the CPU reference against the same files).

    python3 train/check_golden.py [--golden model/tests/golden]

Exit status 1 and the differing files when anything changed: a change to train/ that moves the
golden vectors must come with new ones (train.py writes them) and a passing `cargo test`."""
import argparse
import filecmp
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import golden  # noqa: E402
from tessel_train.export import load_net  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden", default="model/tests/golden")
    a = ap.parse_args()
    root = os.path.abspath(a.golden)
    first = golden.CASES[0][0]  # the trained cases all name the same package
    meta = json.load(open(os.path.join(root, first, "golden.json")))
    package = os.path.normpath(os.path.join(root, first, meta["model"]))
    diffs, compared = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        golden.write_all(load_net(package)[0], tmp, package)
        for name in sorted(os.listdir(root)):
            for f in sorted(os.listdir(os.path.join(root, name))):
                if not f.endswith(".bin"):
                    continue
                compared += 1
                mine = os.path.join(tmp, name, f)
                if not os.path.exists(mine) or not filecmp.cmp(mine, os.path.join(root, name, f), shallow=False):
                    diffs.append(os.path.join(name, f))
    if diffs:
        print(f"{len(diffs)} of {compared} golden files differ from what train/ writes today:")
        print("\n".join("  " + d for d in diffs))
        sys.exit(1)
    print(f"golden vectors: all {compared} files of {len(os.listdir(root))} cases reproduce byte for byte")


if __name__ == "__main__":
    main()
