#!/usr/bin/env python3
"""Train tessel's network end to end through the reconstruction (docs/NETWORK.md), then export the
model package, the tuned baseline and the golden vectors.

    python3 train/train.py --minutes 10 --out out/train          # fresh run
    python3 train/train.py --minutes 10 --out out/train --resume # continue from out/train/ckpt.pt

Fixed seeds; the loss curve goes to OUT/log.csv; a checkpoint every --ckpt-every seconds."""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import stages  # noqa: E402
from tessel_train.export import export_package, round_weights_f16  # noqa: E402
from tessel_train.golden import write_all  # noqa: E402
from tessel_train.net import Config, TesselNet, init_like_reference  # noqa: E402
from tessel_train.scenes import SceneBatch, render_sequence  # noqa: E402

RATIOS = (1.5, 2.0, 3.0)
GRID_BLEND = (0.55, 0.65, 0.75, 0.85, 0.92)
GRID_SIGMA = (0.2, 0.3, 0.42, 0.6)
GRID_CLAMP = (0.0, 0.15, 0.35, 0.7, 1.0)


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def make_cache(n_per_ratio, frames, size, seed, device, spp=16, chunk=64):
    """{ratio: dict of f16 tensors [T,S,...]} generated on the device."""
    cache = {}
    for ri, ratio in enumerate(RATIOS):
        parts = []
        for c0 in range(0, n_per_ratio, chunk):
            s = min(chunk, n_per_ratio - c0)
            sb = SceneBatch(s, seed * 100003 + ri * 1009 + c0, device, out_size=(size, size))
            seq = render_sequence(sb, ratio, frames, spp=spp, t0=(c0 * 7) % 50, jitter_phase=c0)
            parts.append({k: (v.half() if k != "jitter" else v) for k, v in seq.items()})
        cache[ratio] = {k: torch.cat([p[k] for p in parts], 1) for k in parts[0]}
    return cache


def batch_from(cache, ratio, idx):
    d = cache[ratio]
    return {k: d[k][:, idx].float() for k in ("color", "motion", "depth", "reference", "jitter")}


def compiled_ops():
    """torch.compile'd stage functions around the network (the gathers and element-wise math that
    dominate a training step in eager mode); the network itself stays eager (8 shift phases)."""
    # Variants: 3 ratios x history with/without grad (first frame of a chunk) x reset; never a silent
    # fall-back to eager when the limit is hit.
    cfg = torch._dynamo.config
    cfg.cache_size_limit = 64
    for k, v in (("recompile_limit", 64), ("fail_on_recompile_limit_hit", True)):
        if hasattr(cfg, k):
            setattr(cfg, k, v)
    ops = stages.Ops()
    ops.context_and_features = torch.compile(stages.context_and_features, dynamic=False)
    ops.finish = torch.compile(stages.finish, dynamic=False)
    return ops


def run_sequence(net, b, size, fixed=None, t_range=None, grad=False, hist=None, phase0=0, ops=stages.EAGER):
    """Runs frames t_range of batch b. Returns (tonemapped outputs list, gts list, hist)."""
    T = b["color"].shape[0]
    B = b["color"].shape[1]
    dev = b["color"].device
    if hist is None:
        hist = stages.new_history(B, size, size, dev)
    outs, gts = [], []
    for t in t_range or range(T):
        p = stages.prepare(b["color"][t], b["motion"][t], b["depth"][t], (size, size))
        reset = torch.full((B,), t == 0, device=dev, dtype=torch.bool)
        with torch.set_grad_enabled(grad), torch.autocast("cuda", dtype=torch.bfloat16, enabled=(dev.type == "cuda" and fixed is None)):
            out, hist, _ = stages.step(net, p, hist, b["jitter"][t], reset, (phase0 + t) % 8, fixed=fixed, ops=ops)
        outs.append(out.float())
        gts.append(stages.tonemap(b["reference"][t][:, :3]))
    return outs, gts, hist


def psnr_frames(outs, gts, start):
    v = [(-10 * torch.log10(((o - g) ** 2).mean(dim=(1, 2, 3)))).mean().item() for o, g in zip(outs[start:], gts[start:])]
    return sum(v) / len(v)


def tune_baseline(cache, size, n, start):
    """Grid search of the fixed head on training sequences only (mean PSNR over frames >= start)."""
    grid = [(bl, sg, cl) for bl in GRID_BLEND for sg in GRID_SIGMA for cl in GRID_CLAMP]
    scores = []
    idx = torch.arange(n, device=next(iter(cache.values()))["color"].device)
    batches = {r: batch_from(cache, r, idx) for r in RATIOS}
    for g in grid:
        s = 0.0
        for r in RATIOS:
            with torch.no_grad():
                outs, gts, _ = run_sequence(None, batches[r], size, fixed=g)
            s += psnr_frames(outs, gts, start) / len(RATIOS)
        scores.append((s, g))
    scores.sort(reverse=True)
    return scores[0][1], scores[0][0], scores[:5]


def frame_loss(o, g, prev_o, prev_g):
    mse = ((o - g) ** 2).mean(dim=(1, 2, 3))
    loss = torch.log(mse + 1e-5).mean()
    if prev_o is not None:
        d = (o - prev_o) - (g - prev_g)
        loss = loss + 0.1 * torch.log((d ** 2).mean(dim=(1, 2, 3)) + 1e-5).mean()
    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10.0, help="training time budget (data and tuning not included)")
    ap.add_argument("--out", default="out/train")
    ap.add_argument("--package", default="models/tessel-v1")
    ap.add_argument("--golden", default="model/tests/golden")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--chunk", type=int, default=4, help="truncated BPTT length (frames)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--deadline", type=float, default=0.0,
                    help="hard wall-clock limit in seconds from start (0: none): training stops early so export always finishes")
    ap.add_argument("--cache", type=int, default=256, help="training sequences per ratio")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--spp", type=int, default=16, help="ground-truth samples per pixel")
    ap.add_argument("--val-seqs", type=int, default=32, help="validation sequences per ratio")
    ap.add_argument("--val-frames", type=int, default=24)
    ap.add_argument("--steps", type=int, default=0,
                    help="total optimizer steps (0: derived from --minutes at step 40); also overrides a resumed plan")
    ap.add_argument("--compile", action="store_true", help="torch.compile the stages around the network")
    ap.add_argument("--ckpt-every", type=float, default=120.0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    t_start = time.time()
    name = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    log(f"device {name}; torch {torch.__version__}")

    cache = make_cache(a.cache, a.frames, a.size, a.seed, dev, a.spp)
    torch.cuda.synchronize() if dev.type == "cuda" else None
    t_data = time.time() - t_start
    log(f"training cache: {a.cache} sequences x {len(RATIOS)} ratios x {a.frames} frames at {a.size}^2 in {t_data:.1f} s")
    val = make_cache(a.val_seqs, a.val_frames, a.size, a.seed + 1, dev, a.spp)
    start = min(8, a.frames // 2, a.val_frames // 2)

    ckpt_path = os.path.join(a.out, "ckpt.pt")
    cfg = Config()
    net = TesselNet(cfg).to(dev)
    if a.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path, map_location=dev, weights_only=False)
        baseline, base_score = tuple(ck["baseline"]), ck["baseline_score"]
    else:
        ck = None
        t0 = time.time()
        baseline, base_score, top = tune_baseline(cache, a.size, min(32, a.cache), start)
        log(f"tuned baseline (training sequences, frames 8..): blend {baseline[0]} sigma {baseline[1]} clamp {baseline[2]} "
            f"-> {base_score:.3f} dB ({time.time() - t0:.1f} s); top 5: {top}")
        init_like_reference(net, baseline, seed=a.seed)
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=1e-4, betas=(0.9, 0.99))
    step, total_steps, history, spent = 0, None, [], 0.0
    if ck is not None:
        net.load_state_dict(ck["net"])
        opt.load_state_dict(ck["opt"])
        step, total_steps, history, spent = ck["step"], ck["total_steps"], ck["log"], ck.get("train_seconds", 0.0)
        torch.set_rng_state(ck["rng"])
        log(f"resumed at step {step}/{total_steps}")
    if a.steps:
        total_steps = a.steps
        log(f"planned steps: {total_steps} (--steps)")

    def save():
        torch.save(dict(net=net.state_dict(), opt=opt.state_dict(), step=step, total_steps=total_steps, log=history,
                        train_seconds=time.time() - t_train + spent,
                        baseline=list(baseline), baseline_score=base_score, rng=torch.get_rng_state()), ckpt_path + ".partial")
        os.replace(ckpt_path + ".partial", ckpt_path)

    ops = compiled_ops() if a.compile else stages.EAGER
    if a.compile:
        log("stages around the network: torch.compile (first steps include compilation)")
    g = torch.Generator(device="cpu").manual_seed(a.seed + step)
    t_train, last_ckpt = time.time(), time.time()
    chunks = a.frames // a.chunk
    stopped_early = False
    while (total_steps is None or step < total_steps) and not stopped_early:
        ratio = RATIOS[int(torch.randint(0, len(RATIOS), (1,), generator=g))]
        idx = torch.randint(0, a.cache, (a.batch,), generator=g).to(dev)
        b = batch_from(cache, ratio, idx)
        hist, prev = None, (None, None)
        for c in range(chunks):
            if (total_steps is not None and step >= total_steps) or stopped_early:
                break
            frac = step / total_steps if total_steps else 0.0
            lr = a.lr * min(1.0, (step + 1) / 200) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
            for pg in opt.param_groups:
                pg["lr"] = lr
            net.train()
            outs, gts, hist = run_sequence(net, b, a.size, t_range=range(c * a.chunk, (c + 1) * a.chunk), grad=True, hist=hist,
                                           phase0=step, ops=ops)
            loss = 0.0
            po, pgt = prev
            for o, gt in zip(outs, gts):
                loss = loss + frame_loss(o, gt, po, pgt)
                po, pgt = o, gt
            loss = loss / len(outs)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            hist = {k: (v.detach() if torch.is_tensor(v) else v) for k, v in hist.items()}
            prev = (po.detach(), pgt.detach())
            run_loss = loss.detach()  # read only when logged: no device sync per step
            step += 1
            if total_steps is None and step == 10:
                torch.cuda.synchronize() if dev.type == "cuda" else None
                t_warm = time.time()  # steps 1..10 include compilation and allocator warm-up
            if total_steps is None and step == 40:
                torch.cuda.synchronize() if dev.type == "cuda" else None
                per = (time.time() - t_warm) / 30
                total_steps = max(60, 40 + int((a.minutes * 60 - (time.time() - t_train)) / per))
                log(f"{per * 1000:.1f} ms/step (steps 10..40; first 10 steps {t_warm - t_train:.1f} s) -> {total_steps} steps in {a.minutes} min")
            if step % 50 == 0:
                run_loss = run_loss.item()
                history.append(dict(step=step, seconds=round(time.time() - t_train + spent, 1), loss=round(run_loss, 5), ratio=ratio, lr=lr))
                if step % 500 == 0:
                    log(f"step {step}/{total_steps} loss {run_loss:.4f} lr {lr:.2e}")
            if a.deadline and time.time() - t_start > a.deadline - 75 and (total_steps is None or step < total_steps):
                # The schedule stays as planned in the checkpoint: --resume continues it.
                log(f"deadline: stopping at step {step} of {total_steps}; --resume continues from here")
                stopped_early = True
            if time.time() - last_ckpt > a.ckpt_every:
                save()
                last_ckpt = time.time()
    save()
    train_seconds = time.time() - t_train + spent
    with open(os.path.join(a.out, "log.csv"), "w") as f:
        f.write("step,seconds,loss,ratio,lr\n")
        for h in history:
            f.write(f"{h['step']},{h['seconds']},{h['loss']},{h['ratio']},{h['lr']:.3e}\n")

    # Validation on sequences never trained on (same generator, other seeds), f16-rounded weights.
    net.eval()
    round_weights_f16(net)
    res = {}
    for r in RATIOS:
        idx = torch.arange(val[r]["color"].shape[1], device=dev)
        b = batch_from(val, r, idx)
        with torch.no_grad():
            o, gt, _ = run_sequence(net, b, a.size)
            ob, gb, _ = run_sequence(None, b, a.size, fixed=baseline)
        res[str(r)] = dict(network=psnr_frames(o, gt, start), baseline=psnr_frames(ob, gb, start))
        log(f"validation {r}x frames {start}..{a.val_frames - 1}: network {res[str(r)]['network']:.3f} dB, tuned baseline {res[str(r)]['baseline']:.3f} dB")

    prov = dict(trainer="train/train.py", device=name, torch=torch.__version__, seed=a.seed, steps=step, planned_steps=total_steps,
                complete=not stopped_early, train_seconds=round(train_seconds, 1),
                data_seconds=round(t_data, 1), final_loss=history[-1]["loss"] if history else None, batch=a.batch, frames=a.frames,
                tbptt=a.chunk, crop=a.size, sequences_per_ratio=a.cache, ratios=list(RATIOS), validation=res,
                baseline_search=dict(score_db=base_score, grid=dict(blend=GRID_BLEND, sigma=GRID_SIGMA, clamp=GRID_CLAMP), sequences_per_ratio=min(32, a.cache), frames_scored=f"{start}..{a.frames - 1}"))
    export_package(net.float().cpu(), a.package, "tessel-v1",
                   "tessel's own model: Swin-style window U-Net over 4x4-pixel tokens, trained on procedural scenes (train/train.py)",
                   baseline, prov)
    write_all(net, a.golden)
    json.dump(prov, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    log(f"done: {step} steps in {train_seconds:.0f} s, final loss {prov['final_loss']}; package {a.package}; golden {a.golden}")


if __name__ == "__main__":
    main()
