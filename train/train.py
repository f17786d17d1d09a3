#!/usr/bin/env python3
"""Train tessel's network end to end through the reconstruction (docs/NETWORK.md), then export the
model package, the tuned baseline and the golden vectors.

    python3 train/train.py --minutes 15 --out out/train          # fresh run: data to package in 15 minutes
    python3 train/train.py --minutes 15 --out out/train --resume # continue from out/train/ckpt.pt

Fixed seeds; the loss curve goes to OUT/log.csv; a checkpoint every --ckpt-every seconds."""
import argparse
import copy
import dataclasses
import hashlib
import inspect
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessel_train import experimental, scene_data, scenes, stages  # noqa: E402
from tessel_train.export import export_package, load_net, round_weights_f16  # noqa: E402
from tessel_train.golden import write_all  # noqa: E402
from tessel_train.net import LAYOUTS, SHAPE_FIELDS, Config, TesselNet, init_like_reference, shaped_config, take_matching  # noqa: E402
from tessel_train.scenes import HAZARD_KINDS, SceneBatch, render_sequence  # noqa: E402

RATIOS = (1.5, 2.0, 3.0)
EXPORT_RESERVE_S = 20  # kept free at the end of --minutes for the last validation, export and golden vectors
EARLY_FRAMES = 8  # the frames right after a reset: validation selects on the later ones and logs these apart
DEADLINE_RESERVE_S = 75  # kept free before --deadline: the export, and the caller's archiving after it
GENERATOR = 2  # bumped whenever make_cache/scenes.py render other sequences for the same arguments (2: jitter starts)
GRID_BLEND = (0.55, 0.65, 0.75, 0.85, 0.92)
GRID_SIGMA = (0.2, 0.3, 0.42, 0.6)
GRID_CLAMP = (0.0, 0.15, 0.35, 0.7, 1.0)


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def make_cache(n_per_ratio, frames, size, seed, device, spp=16, chunk=64, ratios=RATIOS, jitter_start=None, hazards=0.0, hazard_kinds=HAZARD_KINDS):
    """{ratio: dict of f16 tensors [T,S,...]} generated on the device. Sequence k starts at jitter
    index 7k of the ratio's period (7 is prime to every period, 18, 32 and 72, so the starts cover
    it evenly): a game's reset or camera cut can fall anywhere in the jitter cycle. jitter_start
    (an int) starts every sequence there instead. A ratio's sequences do not depend on `ratios`."""
    cache = {}
    for ri, ratio in ((RATIOS.index(r), r) for r in ratios):
        parts = []
        for c0 in range(0, n_per_ratio, chunk):
            s = min(chunk, n_per_ratio - c0)
            sb = SceneBatch(s, seed * 100003 + ri * 1009 + c0, device, out_size=(size, size), hazards=hazards, hazard_kinds=hazard_kinds)
            starts = (c0 + torch.arange(s, device=device)) * 7 if jitter_start is None else jitter_start
            seq = render_sequence(sb, ratio, frames, spp=spp, t0=(c0 * 7) % 50, jitter_phase=starts)
            parts.append({k: (v.half() if k != "jitter" else v) for k, v in seq.items()})
        cache[ratio] = {k: torch.cat([p[k] for p in parts], 1) for k in parts[0]}
    return cache


def stored_cache(folder, device, n_per_ratio, frames, size, seed, spp, hazards=0.0, hazard_kinds=HAZARD_KINDS):
    """make_cache's result, kept in folder between runs (the GPU machine keeps ignored files while it
    stays warm, so a resumed call skips the generation). The file name holds every argument and a
    hash of the generator's source, so a changed generator never reads old sequences."""
    src = inspect.getsource(scenes) + inspect.getsource(make_cache)
    tag = hashlib.sha256(src.encode()).hexdigest()[:12]
    hz = f"_hz{hazards:g}" if hazards > 0 else ""
    if hazards > 0 and tuple(hazard_kinds) != HAZARD_KINDS:
        hz += "_" + "-".join(hazard_kinds)
    path = os.path.join(folder, f"seq_{n_per_ratio}x{frames}_{size}px_seed{seed}_spp{spp}{hz}_{tag}.pt") if folder else None
    if path and os.path.exists(path):
        try:
            return torch.load(path, map_location=device), path
        except Exception as e:  # a torn or foreign file: generate again
            log(f"{path}: unreadable ({type(e).__name__}: {str(e).splitlines()[0][:120]}); generating the sequences again")
    cache = make_cache(n_per_ratio, frames, size, seed, device, spp, hazards=hazards, hazard_kinds=hazard_kinds)
    if path:
        os.makedirs(folder, exist_ok=True)
        torch.save(cache, path + ".partial")
        os.replace(path + ".partial", path)
    return cache, None


def batch_from(cache, ratio, idx, aug=None):
    """A training batch; aug = (flip_x, flip_y, transpose, exposure) applies an exact symmetry of the
    scene (one of the eight of the square: images, motion and jitter transformed together) and scales
    its radiance (input and truth alike): new, equally valid sequences from the same cache. Checked:
    the fixed-head reconstruction of a transformed batch equals the transformed reconstruction to
    2e-6, except at 2x under an x flip, where Halton jitter of +-0.25 puts output pixels exactly
    between two samples and the nearest-sample tie breaks the other way (the transformed batch is
    still an exact rendering of the mirrored scene)."""
    d = cache[ratio]
    b = {k: d[k][:, idx].float() for k in ("color", "motion", "depth", "reference", "jitter")}
    if aug is None:
        return b
    flip_x, flip_y, transpose, exposure = aug
    imgs = ("color", "motion", "depth", "reference")
    if transpose:  # x <-> y: motion and jitter components swap
        b = {k: (v.transpose(-1, -2) if k in imgs else v) for k, v in b.items()}
        b["motion"], b["jitter"] = b["motion"].flip(2), b["jitter"].flip(-1)
    for on, dim, comp in ((flip_x, -1, 0), (flip_y, -2, 1)):
        if on:  # a sample at i + 0.5 + j lands at i' + 0.5 - j; motion reverses along that axis
            b = {k: (v.flip(dim) if k in imgs else v) for k, v in b.items()}
            b["motion"][:, :, comp] *= -1.0
            b["jitter"][..., comp] *= -1.0
    b["color"][:, :, :3] *= exposure
    b["reference"][:, :, :3] *= exposure
    return {k: v.contiguous() for k, v in b.items()}


def draw_aug(g, exposure_stops):
    """Random symmetry and exposure from generator g."""
    bits = torch.randint(0, 8, (1,), generator=g).item()
    stops = (torch.rand(1, generator=g).item() * 2 - 1) * exposure_stops
    return bool(bits & 1), bool(bits & 2), bool(bits & 4), 2.0 ** stops


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


def run_sequence(net, b, size, fixed=None, t_range=None, grad=False, hist=None, phase0=0, ops=stages.EAGER, teacher=None):
    """Runs frames t_range of batch b. Returns (tonemapped outputs list, gts list, hist), and with a
    teacher network (--distill) each frame's stages.distill_error after them."""
    T = b["color"].shape[0]
    B = b["color"].shape[1]
    dev = b["color"].device
    if hist is None:
        hist = stages.new_history(B, size, size, dev, stages.memory_of(None if fixed is not None else net))
    outs, gts, dist = [], [], []
    for t in t_range or range(T):
        p = stages.prepare(b["color"][t], b["motion"][t], b["depth"][t], (size, size))
        reset = torch.full((B,), t == 0, device=dev, dtype=torch.bool)
        with torch.set_grad_enabled(grad), torch.autocast("cuda", dtype=torch.bfloat16, enabled=(dev.type == "cuda" and fixed is None)):
            out, hist, ex = stages.step(net, p, hist, b["jitter"][t], reset, (phase0 + t) % 8, fixed=fixed, ops=ops)
            if teacher is not None:
                dist.append(stages.distill_error(teacher, ex, (phase0 + t) % 8))
        outs.append(out.float())
        gts.append(stages.tonemap(b["reference"][t][:, :3]))
    return (outs, gts, hist, dist) if teacher is not None else (outs, gts, hist)


def frame_psnrs(outs, gts):
    """Per frame, the mean over the batch of each sequence's PSNR."""
    return [(-10 * torch.log10(((o - g) ** 2).mean(dim=(1, 2, 3)))).mean().item() for o, g in zip(outs, gts)]


def psnr_frames(outs, gts, start):
    v = frame_psnrs(outs[start:], gts[start:])
    return sum(v) / len(v)


def window(per_frame, lo, hi=None):
    """{ratio: mean of its per-frame PSNRs over frames lo..hi-1}."""
    return {r: sum(v[lo:hi]) / len(v[lo:hi]) for r, v in per_frame.items()}


def segments(per_frame, start):
    """(frames >= start, frames 0..start-1) window means of validate()'s per-frame PSNRs: what
    validation selects on, and the frames right after the reset that starts each sequence."""
    return window(per_frame, start), window(per_frame, 0, start)


def gain(res, base, weights=None):
    """Mean of res - base over the ratios a run trains on: every ratio, or those whose --ratio-weights
    weight is above 0 (a run of one ratio selects its weights on that ratio alone)."""
    rs = [r for i, r in enumerate(RATIOS) if weights is None or weights[i] > 0]
    return sum(res[r] - base[r] for r in rs) / len(rs)


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


def init_from_package(net, pkg, grow=""):
    """Loads a package's weights into net; returns its baseline, the record of the search behind it
    and the names of the tensors --exp-grow added (they learn at --fresh-lr-scale times the rate)."""
    src, mj = load_net(pkg)
    # The reconstruction's settings (`accumulate`, `history_a`) may differ from the package's: the
    # tensors are the same.
    grown = grow and dataclasses.replace(net.cfg, accumulate=src.cfg.accumulate, history_a=src.cfg.history_a) == experimental.grown_config(src.cfg, grow)
    new = []
    if grown:  # --exp-grow: the package's tensors, the new parts as the identity
        new = experimental.grow_from(net, src)
        log(f"--exp-grow {grow}: {pkg}'s weights, {len(new)} new tensors ({', '.join(sorted({k.rsplit('.', 1)[0] for k in new}))}) "
            f"starting as the identity" + (f" but the classical TAAU's share, sigmoid({experimental.TAAU_MIX_START})" if net.cfg.taau_mix else ""))
    elif dataclasses.replace(src.cfg, accumulate=net.cfg.accumulate, history_a=net.cfg.history_a, layout=net.cfg.layout) != net.cfg:
        sys.exit(f"--init {pkg}: model.json config {mj['config']} differs from this run's network {net.cfg}")
    elif src.cfg.layout != net.cfg.layout:  # --exp-layout from a package of the contract's layout
        if src.cfg.layout != "rgb":
            sys.exit(f"--init {pkg}: --exp-layout {net.cfg.layout} starts from a package of the contract's layout, not {src.cfg.layout!r}")
        experimental.adapt_layout(net, src)
        log(f"--exp-layout {net.cfg.layout}: {pkg}'s weights adapted (experimental.adapt_layout)")
    else:
        net.load_state_dict(src.state_dict())
    return (*package_baseline(mj), new)


def package_baseline(mj):
    """A package's tuned baseline (blend, sigma, clamp) and the record of the search behind it, from its model.json."""
    b = mj["baseline"]
    return (b["blend"], b["sigma"], b["clamp"]), mj.get("provenance", {}).get("baseline_search", {})


def fresh_config(a):
    """The network a run starts unless it resumes: --arch's shape (refused, with the reason, where the
    kernels cannot compute it, it costs over the budget, or an --init package brings its own shape),
    else the default's, with the run's flags."""
    flags = dict(pixel_head=a.pixel_head, accumulate=a.accumulate, history_a=history_a_of(a), layout=a.exp_layout)
    if a.arch_fresh and not a.arch_from:
        sys.exit("--arch-fresh is about the tensors --arch-from does not take; give --arch-from")
    # (--data-only makes the sequences every run of device_train_runs.sh shares, from the common
    # arguments: a run's own --exp-grow or --arch is not among them.)
    if a.fresh_lr_scale != 1.0 and not (a.arch_from or a.exp_grow or a.data_only):
        sys.exit("--fresh-lr-scale is about the tensors --arch-from does not take or --exp-grow adds; give one of them")
    if a.arch is None:
        if a.arch_from and not a.data_only:
            sys.exit("--arch-from starts a network of --arch's shape; give --arch")
        return Config(**flags)
    if a.init:
        sys.exit("--arch shapes a fresh network; an --init package brings its own shape")
    try:
        return shaped_config(a.arch, over_budget=a.exp_over_budget, **flags)
    except ValueError as e:
        sys.exit(f"--arch: {e}")


def history_a_of(a):
    """The history kernel of a new run: --history-a, else the --init package's, else Catmull-Rom."""
    if a.history_a is not None:
        return a.history_a
    src = a.init or a.arch_from
    if src:
        return json.load(open(os.path.join(src, "model.json")))["config"].get("history_a", stages.CATMULL_ROM_A)
    return stages.CATMULL_ROM_A


def data_seed_of(a, ck):
    """The training sequences' seed: --data-seed, else the checkpoint's when resuming, else --seed."""
    if a.data_seed is not None:
        return a.data_seed
    return ck.get("data_seed", a.seed) if ck is not None else a.seed


def start_weights(a, net, ck, cache, start):
    """The network's starting weights (a checkpoint's, a package's, part of a package's, or the
    baseline-equivalent initialisation after a baseline search). Returns (baseline, record of the
    search behind it, names of the tensors that start fresh beside a package's: --arch-from)."""
    search = dict(grid=dict(blend=GRID_BLEND, sigma=GRID_SIGMA, clamp=GRID_CLAMP), sequences_per_ratio=min(32, a.cache),
                  frames_scored=f"{start}..{a.frames - 1}")
    if ck is not None:  # the Trainer loads the weights
        if "baseline_search" in ck:  # (a warm start's is its package's record, possibly empty)
            return tuple(ck["baseline"]), ck["baseline_search"], ck.get("fresh", [])
        return tuple(ck["baseline"]), dict(search, score_db=ck["baseline_score"]), ck.get("fresh", [])
    fresh = []
    if a.arch_from:
        src, mj = load_net(a.arch_from)
        baseline, search = package_baseline(mj)
        init_like_reference(net, baseline, seed=a.seed)
        fresh = take_matching(net, src, a.arch_fresh)
        n_all = len(net.state_dict())
        log(f"--arch-from {a.arch_from}: {n_all - len(fresh)} of {n_all} tensors and the tuned baseline taken from it; "
            f"fresh ({len(fresh)}, learning at {a.fresh_lr_scale} x --lr): {', '.join(sorted({k.rsplit('.', 1)[0] for k in fresh}))}")
    elif a.init:
        baseline, search, fresh = init_from_package(net, a.init, a.exp_grow)
        if fresh:
            log(f"--exp-grow: the {len(fresh)} new tensors learn at {a.fresh_lr_scale} x --lr")
        log(f"initialised from {a.init}: its weights and its tuned baseline (blend {baseline[0]} sigma {baseline[1]} clamp {baseline[2]})")
    else:
        t0 = time.time()
        baseline, score, top = tune_baseline(cache, a.size, min(32, a.cache), start)
        log(f"tuned baseline (training sequences, frames {start}..): blend {baseline[0]} sigma {baseline[1]} clamp {baseline[2]} "
            f"-> {score:.3f} dB ({time.time() - t0:.1f} s); top 5: {top}")
        init_like_reference(net, baseline, seed=a.seed)
        search = dict(search, score_db=score)
    if a.exp_dilate_choice:
        experimental.init_dilate_choice(net, trained=bool(a.init))
        log(f"--exp-dilate-choice: head channel 2 starts at {experimental.DILATE_CHOICE_START} (a mix of "
            f"{torch.sigmoid(torch.tensor(experimental.DILATE_CHOICE_START)).item():.3f} of the dilated history)"
            + (" (its rectification weights cleared)" if a.init else ""))
    if a.exp_history_kernel:
        experimental.init_history_kernel(net, trained=bool(a.init))
        log("--exp-history-kernel: head channel 2 starts at Catmull-Rom" + (" (its rectification weights cleared)" if a.init else ""))
    return baseline, search, fresh


def draw_ratio(g, weights):
    """Index into RATIOS of the next batch: uniform (the draw every earlier run made) unless weighted."""
    if weights is None or len(set(weights)) == 1:
        return int(torch.randint(0, len(RATIOS), (1,), generator=g))
    return int(torch.multinomial(torch.tensor(weights, dtype=torch.float64), 1, generator=g))


def hazard_kinds(text):
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in HAZARD_KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"hazard kinds are a comma list of {', '.join(HAZARD_KINDS)}; got '{text}'")
    return kinds


def arch_arg(text):
    """--arch: a JSON object of network shape fields (net.SHAPE_FIELDS)."""
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON: {e}")
    if not isinstance(d, dict):
        raise argparse.ArgumentTypeError(f"{text!r}: a JSON object of {', '.join(SHAPE_FIELDS)}")
    return d


def ratio_weights(text):
    """--ratio-weights: one non-negative weight per ratio of RATIOS, comma-separated."""
    try:
        w = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
    if len(w) != len(RATIOS) or min(w) < 0 or sum(w) <= 0 or not all(math.isfinite(x) for x in w):
        raise argparse.ArgumentTypeError(f"need {len(RATIOS)} finite non-negative weights "
                                         f"(one per ratio {', '.join(map(str, RATIOS))}), not all zero; got {text!r}")
    return w


def frame_loss(o, g, prev_o, prev_g, temporal=0.1):
    """Log MSE against the ground truth, plus `temporal` times the log MSE of the frame-to-frame
    change against the ground truth's change (flicker the ground truth does not have)."""
    mse = ((o - g) ** 2).mean(dim=(1, 2, 3))
    loss = torch.log(mse + 1e-5).mean()
    if prev_o is not None:
        d = (o - prev_o) - (g - prev_g)
        loss = loss + temporal * torch.log((d ** 2).mean(dim=(1, 2, 3)) + 1e-5).mean()
    return loss


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=15.0,
                    help="wall-clock budget of one uninterrupted run, from start to exported package (data, baseline "
                         "search, training and validation, export); the steps are planned at step 40 from the measured rates")
    ap.add_argument("--out", default="out/train")
    ap.add_argument("--package", default="models/tessel-dev",
                    help="where the trained package goes (a new name: the shipped models/tessel-v10 took ten runs)")
    ap.add_argument("--golden", default="model/tests/golden")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--chunk", type=int, default=4, help="truncated BPTT length (frames)")
    ap.add_argument("--batch", type=int, default=128, help="sequences per step (the step is launch-bound: 128 costs about what 64 does)")
    ap.add_argument("--deadline", type=float, default=0.0,
                    help="hard wall-clock limit in seconds from start (0: none): training stops early so export always finishes")
    ap.add_argument("--init", metavar="PACKAGE", default=None,
                    help="start from a model package's weights and tuned baseline (no baseline search; a fresh "
                         "optimizer and schedule), e.g. to train on from the shipped model")
    ap.add_argument("--data-seed", type=int, default=None,
                    help="seed of the training sequences (default: --seed; a resumed run keeps its checkpoint's); a new one with --init or --resume --replan trains "
                         "on fresh sequences, while validation stays on --seed + 1")
    ap.add_argument("--data-cache", default="out/data-cache",
                    help="folder keeping generated sequences between runs ('' for none); about 5 GB at the defaults")
    ap.add_argument("--cache", type=int, default=512, help="training sequences per ratio (256 overfitted within 5,000 steps)")
    ap.add_argument("--ratio-weights", type=ratio_weights, default=None, metavar="W1,W2,W3",
                    help="how often each ratio's sequences are drawn for a batch (default: equally often; a resumed run keeps its checkpoint's); "
                         "validation selects the best weights on the ratios weighted above 0")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--ema", type=float, default=None, metavar="DECAY",
                    help="also keep an exponential moving average of the weights (e.g. 0.999; default off, a resumed run keeps "
                         "its checkpoint's); it is validated beside the raw weights and the package gets whichever validated best")
    ap.add_argument("--temporal-weight", type=float, default=0.1, metavar="W",
                    help="weight of the temporal term of the loss (the log MSE of the frame-to-frame change against the ground truth's)")
    ap.add_argument("--exp-early-weight", type=float, default=1.0, metavar="W",
                    help="experiment: the loss of the first 8 frames after a reset weighs W times as much as the later ones (default 1: all alike)")
    ap.add_argument("--spp", type=int, default=16, help="ground-truth samples per pixel")
    ap.add_argument("--hazards", type=float, default=0.0, metavar="FRACTION",
                    help="fraction of the training and validation sequences with each hazard: a moving light, translucent layers, scrolling screens, thin wires and fences, photo-like textures (tessel_train/scenes.py)")
    ap.add_argument("--hazard-kinds", type=hazard_kinds, default=HAZARD_KINDS, metavar="K1,K2,...",
                    help=f"which hazards --hazards draws (default all: {','.join(HAZARD_KINDS)}; tessel-v8 trained with light,veil,screen, tessel-v9 with all)")
    ap.add_argument("--val-seqs", type=int, default=32, help="validation sequences per ratio")
    ap.add_argument("--scene-data", default=None, metavar="DIR",
                    help="add the `tessel scene` sequences below DIR (scripts/scene_data.sh: the held-out scenes' generator, other seeds) to each ratio's training cache")
    ap.add_argument("--scene-val", default=None, metavar="DIR",
                    help="add the `tessel scene` sequences below DIR to the validation set (at least --val-frames frames between cuts)")
    ap.add_argument("--val-frames", type=int, default=24)
    ap.add_argument("--val-every", type=float, default=60.0,
                    help="seconds between validations; the package gets the weights that validated best")
    ap.add_argument("--steps", type=int, default=0,
                    help="total optimizer steps (0: derived from --minutes at step 40); also overrides a resumed plan")
    ap.add_argument("--no-augment", dest="augment", action="store_false",
                    help="no random symmetries / exposure of training batches")
    ap.add_argument("--aug-stops", type=float, default=1.0, help="exposure augmentation range, +-stops")
    ap.add_argument("--replan", action="store_true",
                    help="with --resume: a new schedule from the checkpoint's weights (warm-up, then cosine decay to the end of "
                         "--minutes from this start, or up to --steps)")
    ap.add_argument("--no-pixel-head", dest="pixel_head", action="store_false",
                    help="no per-pixel head path (docs/NETWORK.md; tessel-v1 has none)")
    ap.add_argument("--accumulate", action="store_true",
                    help="the reconstruction keeps an accumulation count and clips to the mean +- a deviation (config "
                         "`accumulate`, docs/NETWORK.md §6); --init from a package without it keeps its weights")
    ap.add_argument("--history-a", type=float, default=None, metavar="A",
                    help="the history kernel's Keys parameter (config `history_a`, docs/NETWORK.md §2): -0.5 is "
                         "Catmull-Rom, lower is sharper; default: the --init package's, else -0.5")
    ap.add_argument("--exp-dilate", action="store_true",
                    help="experiment: the history sampled at the motion of the nearest surface in the 3x3 (not in the contract)")
    ap.add_argument("--exp-dilate-choice", action="store_true",
                    help="experiment (no backend computes it): head channel 2 mixes the history at the nearest sample's motion "
                         "with the history at the nearest surface's motion, per pixel, instead of rectifying (stages.DILATE_CHOICE)")
    ap.add_argument("--exp-layout", choices=sorted(LAYOUTS), default="rgb",
                    help="experiment (no backend computes it): another head layout (tessel_train/net.py LAYOUTS): a luma residual, "
                         "and the channels it frees as a per-pixel choice of the dilated history, more feature memory, or the current frame's "
                         "gather shifted (luma_shift) or stretched (luma_aniso)")
    ap.add_argument("--arch", type=arch_arg, default=None, metavar="JSON",
                    help="a fresh network of another shape, e.g. '{\"channels\": [16, 48, 96], \"encoder_depths\": [1, 3], "
                         "\"bottleneck_depth\": 3, \"decoder_depths\": [1, 3]}' (fields absent keep the default's; not with --init; "
                         "refused where the kernels cannot compute it or it costs over 80 GFLOP at 3840x2160)")
    ap.add_argument("--exp-over-budget", action="store_true",
                    help="experiment: let --arch cost over 80 GFLOP at 3840x2160 (a capacity test; such a package cannot ship)")
    ap.add_argument("--arch-from", metavar="PACKAGE", default=None,
                    help="with --arch: start from every tensor of PACKAGE whose name and shape the new network shares, and its "
                         "tuned baseline (the others as a fresh run's; e.g. a narrower level 0 beside tessel-v12's levels 1 and 2)")
    ap.add_argument("--arch-fresh", type=lambda t: tuple(x.strip() for x in t.split(",") if x.strip()), default=(), metavar="NAMES",
                    help="with --arch-from: tensors (or the tensors under these prefixes, e.g. enc0.0) that start fresh even where "
                         "the package has them (a control for a narrower level: the same shape with that level fresh)")
    ap.add_argument("--fresh-lr-scale", type=float, default=1.0, metavar="S",
                    help="with --arch-from: the tensors not taken from the package, with --exp-grow: the tensors it adds, learn at S times --lr "
                         "(a resumed run keeps its checkpoint's S)")
    ap.add_argument("--distill", metavar="PACKAGE", default=None,
                    help="add to the loss the log of the squared difference of the head's controls from those PACKAGE's network "
                         "computes on the same pixel features (e.g. a new shape from --arch-from learning tessel-v12's head)")
    ap.add_argument("--distill-weight", type=float, default=0.5, metavar="W", help="with --distill: the weight of its term")
    ap.add_argument("--exp-grow", default="", metavar="SPEC",
                    help="experiment: more capacity than the --init package, its parts starting as the identity "
                         "(experimental.grown_config: mid=N, decL=N, encL=N, pixel_mlp=N, features=A+B of net.EXTRA_FEATURES; "
                         "no backend computes pixel_mlp or features)")
    ap.add_argument("--exp-history-kernel", action="store_true",
                    help="experiment (tessel_train/experimental.py): channel 2 sets the history kernel's sharpness; "
                         "validation only, no package")
    ap.add_argument("--compile", action="store_true", help="torch.compile the stages around the network")
    ap.add_argument("--ckpt-every", type=float, default=120.0)
    ap.add_argument("--data-only", action="store_true",
                    help="generate (or check) the training and validation sequences in --data-cache, then stop: runs started "
                         "after it on the same arguments read them instead of each generating its own")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return ap.parse_args()


def validate(net, val, size, fixed=None, ops=stages.EAGER):
    """{ratio: [PSNR of each frame]} on the validation cache (no augmentation). Its sequences start at a
    reset: frames from `start` on (segments(); EARLY_FRAMES unless the sequences are short) are what
    validation scores, the frames before it show how the history fills again."""
    res = {}
    for r in RATIOS:
        b = batch_from(val, r, torch.arange(val[r]["color"].shape[1], device=val[r]["color"].device))
        with torch.no_grad():
            o, gt, _ = run_sequence(net, b, size, fixed=fixed, ops=ops)
        res[r] = frame_psnrs(o, gt)
    return res


class WeightAverage:
    """An exponential moving average of the network's weights (--ema), in a network of its own so that it
    validates and exports like the raw one. Buffers are not averaged: the network's are constant indices."""

    def __init__(self, net, decay, state=None):
        self.decay, self.net = decay, copy.deepcopy(net)
        if state is not None:
            self.net.load_state_dict(state)
        self.net.requires_grad_(False)
        self.src, self.dst = list(net.parameters()), list(self.net.parameters())

    @torch.no_grad()
    def update(self):
        torch._foreach_lerp_(self.dst, self.src, 1.0 - self.decay)


class Trainer:
    """Optimizer state, the step plan, the loss log and the best-validated weights; save/resume."""

    def __init__(self, a, net, dev, baseline, search, ck, ops, data_seed, fresh=()):
        self.a, self.net, self.dev, self.ops = a, net, dev, ops
        self.baseline, self.search = baseline, search  # search: how the baseline was found (score_db, grid, ...)
        self.init = ck.get("init") if ck is not None else (a.init or a.arch_from)  # the package a warm start began from
        # --arch-from: the tensors that started fresh (--exp-grow: that it added) learn in a group of
        # their own at --fresh-lr-scale times the rate (the group keeps its scale in the optimizer's state).
        self.fresh = sorted(fresh)
        named = dict(net.named_parameters())
        groups = [dict(params=[p for k, p in named.items() if k not in self.fresh], lr_scale=1.0)]
        if self.fresh:
            scale = ck["opt"]["param_groups"][1]["lr_scale"] if ck is not None else a.fresh_lr_scale
            groups.append(dict(params=[named[k] for k in self.fresh if k in named], lr_scale=scale))
        self.teacher = None  # --distill: a frozen network whose head controls the run's head learns beside the task
        if a.distill:
            self.teacher = load_net(a.distill)[0].to(dev).eval().requires_grad_(False)
            if self.teacher.cfg.history_a != net.cfg.history_a or not (self.teacher.cfg.in_contract and net.cfg.in_contract):
                sys.exit(f"--distill {a.distill}: its network ({self.teacher.cfg.to_json()}) and this run's must be the contract's, with the same history kernel "
                         f"(history_a {net.cfg.history_a}), so that it reads the same pixel features")
            log(f"--distill {a.distill}: the head's controls learn its on the same pixel features too (weight {a.distill_weight})")
        self.data_seed = data_seed  # recorded in the checkpoint: a resumed run trains on the same sequences
        # How often each ratio is drawn: --ratio-weights, else the checkpoint's when resuming, else uniform (None).
        self.ratio_weights = a.ratio_weights if a.ratio_weights is not None else (ck.get("ratio_weights") if ck is not None else None)
        # What validation measures; best weights are only compared within one validation set.
        self.val_set = dict(generator=GENERATOR, seed=a.seed + 1, seqs=a.val_seqs, frames=a.val_frames, size=a.size, spp=a.spp)
        self.opt = torch.optim.AdamW(groups, lr=a.lr, weight_decay=1e-4, betas=(0.9, 0.99))
        self.step, self.total_steps, self.history, self.spent = 0, None, [], 0.0
        self.sched0 = 0  # the step where the learning-rate schedule (warm-up, cosine) begins
        self.val_log, self.best = [], None  # best: dict(gain, step, net state, weights: "raw" or "average")
        decay = a.ema if a.ema is not None else (ck.get("ema_decay") if ck is not None else None)
        self.ema = None
        if ck is not None:
            net.load_state_dict(ck["net"])
            self.opt.load_state_dict(ck["opt"])
            self.step, self.total_steps, self.history = ck["step"], ck["total_steps"], ck["log"]
            self.spent, self.val_log, self.best = ck.get("train_seconds", 0.0), ck.get("val_log", []), ck.get("best")
            self.sched0 = ck.get("sched0", 0)
            if ck.get("val_set") != self.val_set:
                log(f"validation set {self.val_set} differs from the checkpoint's ({ck.get('val_set', 'not recorded')}): "
                    "its best weights are not comparable and are dropped")
                self.best = None
            torch.set_rng_state(ck["rng"].cpu())  # map_location moved it to the device
            log(f"resumed at step {self.step}/{self.total_steps}" + (f"; ratio weights {self.ratio_weights}" if self.ratio_weights else ""))
        if decay:  # after the checkpoint's weights are in: a new average starts from them
            kept = ck is not None and ck.get("ema_decay") == decay
            self.ema = WeightAverage(net, decay, ck["ema"] if kept else None)
            log(f"weight average: decay {decay}" + (" (from the checkpoint)" if kept else " (starts here)"))
        if a.replan and ck is not None:
            self.sched0, self.total_steps = self.step, None
            log(f"re-planning: warm-up and cosine decay start again at step {self.step}")
        if a.steps:
            self.total_steps = a.steps
            log(f"planned steps: {self.total_steps} (--steps)")
        self.t_train = time.time()

    def seconds(self):
        return time.time() - self.t_train + self.spent

    def save(self, path):
        torch.save(dict(net=self.net.state_dict(), opt=self.opt.state_dict(), step=self.step, total_steps=self.total_steps, sched0=self.sched0,
                        log=self.history, val_log=self.val_log, best=self.best, train_seconds=self.seconds(),
                        baseline=list(self.baseline), baseline_search=self.search, init=self.init, fresh=self.fresh, data_seed=self.data_seed, ratio_weights=self.ratio_weights,
                        val_set=self.val_set, rng=torch.get_rng_state(), config=self.net.cfg.to_json(),
                        ema=self.ema.net.state_dict() if self.ema else None, ema_decay=self.ema.decay if self.ema else None), path + ".partial")
        os.replace(path + ".partial", path)

    def lr(self):
        n = self.step - self.sched0
        frac = n / (self.total_steps - self.sched0) if self.total_steps else 0.0
        return self.a.lr * min(1.0, (n + 1) / 200) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))

    def chunk_step(self, b, c, hist, prev, ops):
        """One optimizer step on frames [c*chunk, (c+1)*chunk) of batch b; returns (hist, prev, loss)."""
        a, lr = self.a, self.lr()
        for pg in self.opt.param_groups:
            pg["lr"] = lr * pg.get("lr_scale", 1.0)
        self.net.train()
        res = run_sequence(self.net, b, a.size, t_range=range(c * a.chunk, (c + 1) * a.chunk), grad=True, hist=hist,
                           phase0=self.step, ops=ops, teacher=self.teacher)
        outs, gts, hist = res[:3]
        loss = 0.0
        po, pgt = prev
        for t, o, gt in zip(range(c * a.chunk, (c + 1) * a.chunk), outs, gts):
            loss = loss + frame_loss(o, gt, po, pgt, a.temporal_weight) * (a.exp_early_weight if t < EARLY_FRAMES else 1.0)
            po, pgt = o, gt
        loss = loss / len(outs)
        if self.teacher is not None:  # --distill: the log of the head controls' squared difference, as the task's term is
            loss = loss + a.distill_weight * torch.log(torch.stack(res[3]).mean() + 1e-6)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
        self.opt.step()
        if self.ema is not None:
            self.ema.update()
        self.step += 1
        hist = {k: (v.detach() if torch.is_tensor(v) else v) for k, v in hist.items()}
        return hist, (po.detach(), pgt.detach()), loss.detach()  # the loss is read only when logged: no sync per step

    def validate(self, val, base_val, start):
        """Validation gain over the tuned baseline (gain(): mean over the ratios trained on, frames >= start) of the raw weights
        and, with --ema, of their average; keeps the best of either. base_val: validate()'s per-frame
        PSNRs of the baseline. The gain over frames 0..start-1, right after the reset, is logged beside it."""
        cands = dict(raw=self.net, **({"average": self.ema.net} if self.ema else {}))
        base, base_early = segments(base_val, start)
        res, gains, early = {}, {}, {}
        for kind, net in cands.items():
            net.eval()
            res[kind], res_early = segments(validate(net, val, self.a.size, ops=self.ops), start)
            w = self.ratio_weights
            gains[kind], early[kind] = gain(res[kind], base, w), gain(res_early, base_early, w)
        raw = res["raw"]
        self.val_log.append(dict(step=self.step, seconds=round(self.seconds(), 1), gain=round(gains["raw"], 4),
                                 **{f"{r}x": round(raw[r], 4) for r in RATIOS}, early_gain=round(early["raw"], 4),
                                 **({"avg_gain": round(gains["average"], 4), "avg_early_gain": round(early["average"], 4)}
                                    if "average" in gains else {})))
        text = (", ".join(f"{r}x {raw[r]:.3f}" for r in RATIOS) + f" dB; {gains['raw']:+.3f} dB over the baseline "
                f"(frames 0..{start - 1}: {early['raw']:+.3f})")
        if "average" in gains:
            text += f", averaged weights {gains['average']:+.3f} dB ({early['average']:+.3f})"
        kind = max(gains, key=gains.get)
        is_best = self.best is None or gains[kind] > self.best["gain"]
        if is_best:
            self.best = dict(gain=gains[kind], step=self.step, weights=kind,
                             net={k: v.detach().clone() for k, v in cands[kind].state_dict().items()})
        log(f"validation at step {self.step}: {text}" + (f" (best: {kind})" if is_best else f" (best {self.best['gain']:+.3f} at {self.best['step']})"))

    def write_logs(self, out):
        with open(os.path.join(out, "log.csv"), "w") as f:
            f.write("step,seconds,loss,ratio,lr\n")
            for h in self.history:
                f.write(f"{h['step']},{h['seconds']},{h['loss']},{h['ratio']},{h['lr']:.3e}\n")
        with open(os.path.join(out, "val.csv"), "w") as f:
            # early: frames 0..7, the first after the reset that starts each validation sequence (not what selects)
            f.write("step,seconds,gain_db," + ",".join(f"{r}x_db" for r in RATIOS) + ",average_gain_db,early_gain_db,average_early_gain_db\n")
            for v in self.val_log:
                f.write(f"{v['step']},{v['seconds']},{v['gain']}," + ",".join(str(v[f'{r}x']) for r in RATIOS)
                        + "".join(f",{v.get(k, '')}" for k in ("avg_gain", "early_gain", "avg_early_gain")) + "\n")


def train(tr, cache, val, base_val, start, t_start, ckpt_path):
    """The loop: a batch of sequences per iteration, one optimizer step per TBPTT chunk. Returns
    whether a deadline stopped it before the planned steps."""
    a, dev = tr.a, tr.dev
    ops = tr.ops
    if a.compile and ops is stages.EAGER:
        ops = compiled_ops()
        log("stages around the network: torch.compile (first steps include compilation)")
    elif a.compile:
        log("--compile ignored: the experiment's stage functions run eager")
    g = torch.Generator(device="cpu").manual_seed(a.seed + tr.step)
    sync = (lambda: torch.cuda.synchronize()) if dev.type == "cuda" else (lambda: None)
    val_cost = 0.0
    if tr.total_steps is None:  # to be planned: validating now also measures what validations cost
        t0 = time.time()
        tr.validate(val, base_val, start)
        val_cost = time.time() - t0
    last_ckpt = last_val = t_loop = time.time()
    s0, t_warm = tr.step, None  # the plan is made from this run's steps 10..40 (10 warm-up steps excluded)
    while tr.total_steps is None or tr.step < tr.total_steps:
        ratio = RATIOS[draw_ratio(g, tr.ratio_weights)]
        idx = torch.randint(0, cache[ratio]["color"].shape[1], (a.batch,), generator=g).to(dev)  # --scene-data adds to --cache
        b = batch_from(cache, ratio, idx, draw_aug(g, a.aug_stops) if a.augment else None)
        hist, prev = None, (None, None)
        for c in range(a.frames // a.chunk):
            if tr.total_steps is not None and tr.step >= tr.total_steps:
                break
            hist, prev, loss = tr.chunk_step(b, c, hist, prev, ops)
            lr = tr.opt.param_groups[0]["lr"]  # the rate that step used
            if tr.total_steps is None and tr.step - s0 == 10:
                sync()
                t_warm = time.time()  # steps 1..10 include compilation and allocator warm-up
            if tr.total_steps is None and tr.step - s0 == 40:
                sync()
                per = (time.time() - t_warm) / 30
                left = a.minutes * 60 - (time.time() - t_start) - EXPORT_RESERVE_S
                tr.total_steps = max(s0 + 60, tr.step + int(left / (per * (1 + val_cost / a.val_every))))
                log(f"{per * 1000:.1f} ms/step (steps 10..40; first 10 steps {t_warm - t_loop:.1f} s), validation {val_cost:.1f} s "
                    f"every {a.val_every:g} s -> {tr.total_steps} steps, the run done {a.minutes:g} min after its start")
                stop = a.deadline - DEADLINE_RESERVE_S
                if a.deadline and a.minutes * 60 - EXPORT_RESERVE_S > stop:
                    log(f"note: the plan runs past this call's deadline ({a.deadline:g} s, training stops at {stop:g} s); "
                        f"--resume finishes the remaining steps")
            if tr.step % 50 == 0:
                tr.history.append(dict(step=tr.step, seconds=round(tr.seconds(), 1), loss=round(loss.item(), 5), ratio=ratio, lr=lr))
                if tr.step % 500 == 0:
                    log(f"step {tr.step}/{tr.total_steps} loss {tr.history[-1]['loss']:.4f} lr {lr:.2e}")
            if a.deadline and time.time() - t_start > a.deadline - DEADLINE_RESERVE_S and (tr.total_steps is None or tr.step < tr.total_steps):
                # The schedule stays as planned in the checkpoint: --resume continues it.
                log(f"deadline: stopping at step {tr.step} of {tr.total_steps}; --resume continues from here")
                return True
            if time.time() - last_ckpt > a.ckpt_every:
                tr.save(ckpt_path)
                last_ckpt = time.time()
        if time.time() - last_val > a.val_every:  # between sequences: the history starts afresh anyway
            tr.validate(val, base_val, start)
            last_val = time.time()
    return False


def main():
    a = parse_args()
    if a.data_only and not a.data_cache:
        sys.exit("--data-only: needs --data-cache (a folder to keep the sequences in)")
    fresh_cfg = fresh_config(a)  # a wrong --arch is refused before any data is made
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    t_start = time.time()
    name = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    log(f"device {name}; torch {torch.__version__}")

    ckpt_path = os.path.join(a.out, "ckpt.pt")
    ck = torch.load(ckpt_path, map_location=dev, weights_only=False) if a.resume and os.path.exists(ckpt_path) else None
    data_seed = data_seed_of(a, ck)
    cache, found = stored_cache(a.data_cache, dev, a.cache, a.frames, a.size, data_seed, a.spp, a.hazards, a.hazard_kinds)
    torch.cuda.synchronize() if dev.type == "cuda" else None
    t_data = time.time() - t_start
    log(f"training cache: {a.cache} sequences x {len(RATIOS)} ratios x {a.frames} frames at {a.size}^2 in {t_data:.1f} s"
        f" (data seed {data_seed}; " + (f"read from {found})" if found else "generated)"))
    val = stored_cache(a.data_cache, dev, a.val_seqs, a.val_frames, a.size, a.seed + 1, a.spp, a.hazards, a.hazard_kinds)[0]
    for folder, frames, target, what in ((a.scene_data, a.frames, cache, "training"), (a.scene_val, a.val_frames, val, "validation")):
        if folder:
            extra = scene_data.load_scene_folder(folder, frames, a.size, RATIOS, dev)
            scene_data.append(target, extra)
            log(f"{what}: + `tessel scene` sequences from {folder}: " + ", ".join(f"{r}x {d['color'].shape[1]}" for r, d in sorted(extra.items())))
    if a.data_only:
        log(f"--data-only: sequences kept in {a.data_cache}")
        return
    start = min(EARLY_FRAMES, a.frames // 2, a.val_frames // 2)

    # A resumed run keeps its checkpoint's network (checkpoints before this line was written: the flags').
    resumed_cfg = ck is not None and "config" in ck
    cfg = Config.from_json(ck["config"]) if resumed_cfg else fresh_cfg
    if resumed_cfg and a.arch is not None and any(getattr(cfg, k) != v for k, v in a.arch.items()):
        sys.exit(f"--arch {json.dumps(a.arch)} differs from the resumed checkpoint's network {cfg.to_json()}")
    if a.exp_grow and not resumed_cfg:
        if not a.init:
            sys.exit("--exp-grow grows an --init package")
        cfg = experimental.grown_config(cfg, a.exp_grow)
    net = TesselNet(cfg).to(dev)
    log(f"network config: {cfg.to_json()}")
    baseline, search, fresh = start_weights(a, net, ck, cache, start)
    stages.DILATE_MOTION = a.exp_dilate
    stages.DILATE_CHOICE = a.exp_dilate_choice
    ops = experimental.HistoryKernelOps() if a.exp_history_kernel else stages.EAGER
    tr = Trainer(a, net, dev, baseline, search, ck, ops, data_seed, fresh)
    base_val = validate(None, val, a.size, fixed=baseline)
    stopped_early = train(tr, cache, val, base_val, start, t_start, ckpt_path)
    if not tr.val_log or tr.val_log[-1]["step"] != tr.step:
        tr.validate(val, base_val, start)
    tr.save(ckpt_path)
    tr.write_logs(a.out)
    if a.exp_history_kernel:
        log(f"experiment: no backend runs this head, so no package; best validation gain {tr.best['gain']:+.3f} dB "
            f"at step {tr.best['step']} ({a.out}/val.csv)")
        return

    # The package gets the best-validated weights, rounded to f16, validated once more as shipped.
    net.load_state_dict(tr.best["net"])
    net.eval()
    round_weights_f16(net)
    shipped, shipped_early = segments(validate(net, val, a.size), start)
    base, base_early = segments(base_val, start)
    res = {str(r): dict(network=shipped[r], baseline=base[r], network_after_reset=shipped_early[r], baseline_after_reset=base_early[r])
           for r in RATIOS}
    for r in RATIOS:
        log(f"validation {r}x frames {start}..{a.val_frames - 1} (step {tr.best['step']}, f16): network {shipped[r]:.3f} dB, "
            f"tuned baseline {base[r]:.3f} dB; frames 0..{start - 1}: {shipped_early[r]:.3f} and {base_early[r]:.3f} dB")

    prov = dict(trainer="train/train.py", device=name, torch=torch.__version__, seed=a.seed, data_seed=data_seed, steps=tr.step, planned_steps=tr.total_steps,
                complete=not stopped_early, shipped_step=tr.best["step"], shipped_weights=tr.best.get("weights", "raw"),
                weight_average=tr.ema.decay if tr.ema else None, train_seconds=round(tr.seconds(), 1),
                data_seconds=round(t_data, 1), final_loss=tr.history[-1]["loss"] if tr.history else None, batch=a.batch, frames=a.frames,
                tbptt=a.chunk, crop=a.size, sequences_per_ratio=a.cache, scene_data=a.scene_data, scene_val=a.scene_val, augment=a.augment, ratios=list(RATIOS), ratio_weights=tr.ratio_weights, early_weight=a.exp_early_weight, temporal_weight=a.temporal_weight, validation=res,
                initialised_from=tr.init, fresh_tensors=tr.fresh or None, distilled_from=a.distill,
                distill_weight=a.distill_weight if a.distill else None, baseline_search=tr.search,
                **({"experiment": "dilate_choice (train.py --exp-dilate-choice): no backend computes this head"} if a.exp_dilate_choice else {}),
                **({"experiment": f"layout {cfg.layout} (train.py --exp-layout): no backend computes this head"} if cfg.layout != "rgb" else {}),
                **({"experiment": f"grown (train.py --exp-grow {a.exp_grow})" + (": no backend computes the per-pixel MLP or the extra features" if cfg.pixel_mlp or cfg.extra_features else "")} if a.exp_grow else {}))
    export_package(net.float().cpu(), a.package, os.path.basename(os.path.normpath(a.package)),
                   "tessel's own model: Swin-style window U-Net over 4x4-pixel tokens, trained on procedural scenes (train/train.py)",
                   baseline, prov)
    if cfg.in_contract:  # golden vectors are the contract's
        write_all(net, a.golden, a.package)
    else:
        log(f"{'--exp-layout ' + cfg.layout if cfg.layout != 'rgb' else '--exp-grow ' + a.exp_grow}: no golden vectors (no backend computes this head)")
    json.dump(prov, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    log(f"done: {tr.step} steps in {tr.seconds():.0f} s, final loss {prov['final_loss']}; shipped {prov['shipped_weights']} weights of step {tr.best['step']}; "
        f"package {a.package}; golden {a.golden}")


if __name__ == "__main__":
    main()
