#!/usr/bin/env python3
"""The trained network alone in PyTorch on the GPU: fp16, CUDA graphs (one per window phase), and
torch.compile where it helps; median GPU time per frame over >= 200 frames after warm-up, at
2560x1440 and 3840x2160 output. The figure tessel's own Vulkan and HIP networks must beat."""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch._dynamo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import SHIPPED_MODEL  # noqa: E402
from tessel_train.export import load_net  # noqa: E402
from tessel_train.net import padded_grid  # noqa: E402


def time_graphs(fn, x, frames, warmup=30):
    graphs, outs = [], []
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for ph in range(8):
            for _ in range(3):
                fn(x, ph)
    torch.cuda.current_stream().wait_stream(s)
    for ph in range(8):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outs.append(fn(x, ph))
        graphs.append(g)
    for i in range(warmup):
        graphs[i % 8].replay()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(frames)]
    for i in range(frames):
        ev[i][0].record()
        graphs[i % 8].replay()
        ev[i][1].record()
    torch.cuda.synchronize()
    times = [a.elapsed_time(b) for a, b in ev]
    return statistics.median(times), min(times)


def time_eager(fn, x, frames):
    for ph in range(8):
        fn(x, ph)
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(frames)]
    for i in range(frames):
        ev[i][0].record()
        fn(x, i % 8)
        ev[i][1].record()
    torch.cuda.synchronize()
    return statistics.median([a.elapsed_time(b) for a, b in ev])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=SHIPPED_MODEL)
    ap.add_argument("--frames", type=int, default=400)
    ap.add_argument("--compile", action="store_true", help="also try torch.compile (+ CUDA graphs)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    net, meta = load_net(a.model)
    cfg = net.cfg
    net = net.cuda().half().eval()
    res = dict(device=torch.cuda.get_device_name(0), torch=torch.__version__, model=meta["name"], frames=a.frames, sizes={})
    sizes = ((2560, 1440), (3840, 2160))
    inputs = {}

    def save():
        if a.out:
            json.dump(res, open(a.out, "w"), indent=1)

    def finish(key, r, flops):
        r["best_ms"] = min(v for k, v in r.items() if k in ("graphs_ms", "compile_graphs_ms"))
        r["tflops"] = flops / (r["best_ms"] * 1e-3) / 1e12
        res["sizes"][key] = r
        save()

    for (w, h) in sizes:
        pw, ph = padded_grid(w, h, cfg.alignment)
        x = torch.randn(1, ph, pw, 16 * cfg.pixel_embed, device="cuda", dtype=torch.float16)
        inputs[(w, h)] = x
        flops = cfg.flops(w, h)
        r = dict(tokens=[pw, ph], gflop=flops / 1e9)
        with torch.inference_mode():
            r["eager_ms"] = time_eager(net, x, min(a.frames, 100))
            r["graphs_ms"], r["graphs_min_ms"] = time_graphs(net, x, a.frames)
        finish(f"{w}x{h}", r, flops)
        print(f"{w}x{h}: tokens {pw}x{ph}, {flops / 1e9:.2f} GFLOP; eager {r['eager_ms']:.3f} ms, CUDA graphs {r['graphs_ms']:.3f} ms "
              f"(min {r['graphs_min_ms']:.3f}) = {r['tflops']:.1f} TFLOP/s", flush=True)
    if a.compile:
        # One compiled graph per (size, window phase): 16 in all, above dynamo's default limit of 8,
        # past which it silently falls back to eager.
        torch._dynamo.config.cache_size_limit = 64
        if hasattr(torch._dynamo.config, "recompile_limit"):
            torch._dynamo.config.recompile_limit = 64
        comp = torch.compile(net, dynamic=False)
        for (w, h) in sizes:
            r = res["sizes"][f"{w}x{h}"]
            t0 = time.time()
            try:
                with torch.inference_mode():
                    r["compile_graphs_ms"], r["compile_graphs_min_ms"] = time_graphs(comp, inputs[(w, h)], a.frames)
            except Exception as e:  # reported, not hidden
                r["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
            r["compile_seconds"] = round(time.time() - t0, 1)
            finish(f"{w}x{h}", r, cfg.flops(w, h))
            print(f"{w}x{h}: torch.compile + CUDA graphs {r.get('compile_graphs_ms', float('nan')):.3f} ms "
                  f"({r['compile_seconds']} s incl. compile); best {r['best_ms']:.3f} ms = {r['tflops']:.1f} TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
