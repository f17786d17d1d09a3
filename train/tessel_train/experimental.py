"""Training-only experiments on the head that are not in docs/NETWORK.md: no backend runs them.
train.py exports no package from history_kernel (it reports validation only); dilate_choice
(stages.DILATE_CHOICE) exports one marked as an experiment in its provenance, for
train/eval_twin.py to score.

history_kernel: the rectification channel (head channel 2, dead in tessel-v1) becomes the
sharpness of the history resampling kernel, per pixel: Keys' cubic convolution with
a = -0.5 + 0.5 * tanh(h2) in (-1, 0); a = -0.5 is the contract's Catmull-Rom, lower is sharper.
Repeated resampling of a panning history blurs it; this lets the network counter that where it
pays. Rectification is off (strength 0) in this mode."""
import torch

from . import stages


class HistoryKernelOps(stages.Ops):
    def context_and_features(self, p, hist, jitter, reset, with_features=True, history_a=stages.CATMULL_ROM_A):
        assert hist["exposure"] == p["exposure"], "history_kernel: exposure changes are not handled"
        ctx, f = stages.context_and_features(p, hist, jitter, reset, with_features, history_a)
        ctx["hist_img"] = hist["color"]
        return ctx, f

    def finish(self, ctx, head_px, exposure, round_f16=False, accumulate=False):
        a = -0.5 + 0.5 * torch.tanh(head_px[:, 2])
        px, py = ctx["prev"][:, 0], ctx["prev"][:, 1]
        hk = stages.sample_keys(ctx["hist_img"], px, py, a).clamp(0.0, stages.Y_MAX)  # a per pixel [B,H,W]
        ctl = stages.decode(head_px)
        ctl["clamp"] = torch.zeros_like(ctl["clamp"])
        return stages._finish(dict(ctx, hist=hk), ctl, exposure, round_f16, accumulate)


def start_channel2(net, raw, trained=False):
    """Raw head channel 2 = raw for every pixel slot of the head bias. For trained weights
    (--init), channel 2 held the rectification control, so its head rows and its per-pixel path
    row are cleared too: every pixel starts at exactly raw."""
    with torch.no_grad():
        net.head.bias[2::8] = raw
        if trained:
            net.head.weight[2::8] = 0.0
            if net.cfg.pixel_head:
                net.pixel_head.weight[2] = 0.0
                net.pixel_head.bias[2] = 0.0


def init_history_kernel(net, trained=False):
    """Start at Catmull-Rom: raw channel 2 = 0 (a = -0.5) for every pixel (start_channel2)."""
    start_channel2(net, 0.0, trained)


DILATE_CHOICE_START = -3.0  # raw channel 2 at the start: a mix of sigmoid(-3) = 0.05 of the dilated history


def init_dilate_choice(net, trained=False, start=DILATE_CHOICE_START):
    """Start the dilate-choice mix (stages.DILATE_CHOICE) near the contract's history everywhere:
    raw channel 2 = start (DILATE_CHOICE_START) for every pixel slot, where its sigmoid still
    passes a gradient. For trained weights (--init), channel 2 held the rectification control, which the
    mix would otherwise read as a choice (the eighteenth session's run started 0.16 dB under its
    package so): its head rows and its per-pixel path row are cleared too (start_channel2)."""
    start_channel2(net, start, trained)


LAYOUT_CHOICE_START = -3.0  # raw choice channel at the start: sigmoid(-3) = 0.05 of the dilated history
LAYOUT_MEMORY_SCALE = 0.1  # the new memory features' pixel-embedding columns: uniform in +-scale * sqrt(3 / fan_in)


def adapt_layout(net, src, seed=0):
    """Start a head-layout experiment (net.LAYOUTS, train.py --exp-layout) from a package of the
    contract's layout (src), as close to it as the layout allows: every tensor is src's but
    - the luma residual's row (channel 3 of each pixel slot, in the head and the per-pixel path) is
      the mean of src's three residual rows;
    - a choice channel starts at LAYOUT_CHOICE_START everywhere (its rows cleared);
    - a gather channel (shift or stretch) starts at 0, the contract's round Gaussian (its rows cleared);
    - a new memory channel starts at 0 (its rows cleared), and its feature's pixel-embedding column
      is small and random, so that a gradient reaches both (with both zero neither would move).
    The contract's memory keeps channels 6 and 7 and features 14 and 15."""
    from .net import LAYOUTS
    lay = LAYOUTS[net.cfg.layout]
    assert src.cfg.layout == "rgb", "adapt_layout starts from the contract's layout"
    sd = {k: v.clone() for k, v in src.state_dict().items()}
    pe = sd["pixel_embed.weight"]  # [P, 16]
    extra = net.cfg.memory_channels - 2
    g = torch.Generator().manual_seed(seed)
    a = LAYOUT_MEMORY_SCALE * (3.0 / net.cfg.pixel_features) ** 0.5
    sd["pixel_embed.weight"] = torch.cat([pe, (torch.rand(pe.shape[0], extra, generator=g) * 2 - 1) * a], 1)
    freed = [c for c in (4, 5) if c not in lay["residual"]]
    for wk, bk in [("head.weight", "head.bias")] + ([("pixel_head.weight", "pixel_head.bias")] if net.cfg.pixel_head else []):
        w, b = sd[wk], sd[bk]
        for s in range(0, w.shape[0], 8):  # each pixel slot's 8 channels
            w[s + 3], b[s + 3] = w[s + 3:s + 6].mean(0), b[s + 3:s + 6].mean()
            for c in freed:
                w[s + c] = 0.0
                b[s + c] = LAYOUT_CHOICE_START if c == lay["choice"] else 0.0
    net.load_state_dict(sd)


# The TAAU mix's raw channel at the start (--exp-grow taau_mix): sigmoid(-2) = 11.9 % of the
# classical TAAU's frame everywhere. Uniform mixes of 15 and 25 % are within 0.04 dB of tessel-v12's
# held-out means, 15 % at or above them (seed 1001, train/mix_bound.py, docs/MODEL.md), so this
# starts near the package, where the sigmoid passes a gradient of two fifths its largest (at -4 it was
# a fourteenth, and 410 steps at 2e-4 moved the channel by 0.02: thirtieth session, BENCHMARKS.md).
TAAU_MIX_START = -2.0


def grown_config(cfg, spec):
    """train.py --exp-grow SPEC: cfg with more capacity, a comma list of mid=DEPTH (bottleneck
    blocks), dec0=DEPTH / enc1=DEPTH ... (a level's decoder or encoder blocks), pixel_mlp=WIDTH (a
    per-pixel MLP refining the head, net.Config.pixel_mlp), features=A+B (pixel features beyond the
    contract's, net.EXTRA_FEATURES; their pixel-embedding columns start at zero). Blocks are only
    added, so a trained package's blocks keep their names and window shifts as long as every inserted run of blocks has
    an even length or ends the network (the shift depends on the layer number's parity)."""
    import dataclasses
    enc, dec = list(cfg.encoder_depths), list(cfg.decoder_depths)
    out = dict(bottleneck_depth=cfg.bottleneck_depth, pixel_mlp=cfg.pixel_mlp, extra_features=cfg.extra_features, taau_mix=cfg.taau_mix)
    for item in filter(None, (x.strip() for x in spec.split(","))):
        k, _, v = item.partition("=")
        n = int(v) if v.isdigit() else None
        if item == "taau_mix":
            out["taau_mix"] = True
            continue
        if k != "features" and n is None:
            raise ValueError(f"--exp-grow: {item!r} needs a whole number")
        if k == "mid":
            out["bottleneck_depth"] = n
        elif k == "pixel_mlp":
            out["pixel_mlp"] = n
        elif k == "features":
            out["extra_features"] = tuple(v.split("+"))
        elif k[:3] in ("enc", "dec") and k[3:].isdigit() and int(k[3:]) < len(enc):
            (enc if k[:3] == "enc" else dec)[int(k[3:])] = n
        else:
            raise ValueError(f"--exp-grow: unknown item {item!r} (mid=N, encL=N, decL=N, pixel_mlp=N, features=A+B, taau_mix)")
    return dataclasses.replace(cfg, encoder_depths=enc, decoder_depths=dec, **out)


def grow_from(net, src):
    """Start a grown network (grown_config) exactly where src is: src's tensors by name; every new
    block's residual outputs (proj, fc2) and the per-pixel MLP's output layer at zero, so each new
    part is the identity until training moves it. Returns the new tensors' names. A block whose
    layer number changes parity would see other windows: refused."""
    old = {f"{name}.{i}": layer for layer, (name, _, i) in enumerate(src.cfg.blocks())}
    for layer, (name, _, i) in enumerate(net.cfg.blocks()):
        key = f"{name}.{i}"
        if key in old and (old[key] - layer) % 2:
            raise ValueError(f"--exp-grow: block {key} moves from layer {old[key]} to {layer} (another window shift)")
    sd = net.state_dict()
    have = src.state_dict()
    for k, v in have.items():
        if k not in sd or sd[k].shape != v.shape:
            raise ValueError(f"--exp-grow: {k} of the package has no place in the grown network")
        sd[k] = v.clone()
    new = sorted(k for k in sd if k not in have)
    for k in new:
        if k.endswith(("proj.weight", "proj.bias", "fc2.weight", "fc2.bias")) or k.startswith(("pixel_mlp2.", "taau_head.", "taau_pixel.", "pixel_embed_extra.")):
            sd[k] = torch.zeros_like(sd[k])
        if k == "taau_head.bias":
            sd[k] = torch.full_like(sd[k], TAAU_MIX_START)
    net.load_state_dict(sd)
    return new
