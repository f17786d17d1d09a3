"""The stages of docs/NETWORK.md §1-3, 5-6 in torch, batched: images are [B, C, H, W] float32."""
import torch
import torch.nn.functional as F

from .net import GATHER_ANISO, GATHER_EDGE_EPS, GATHER_SHIFT, HEAD_CHANNELS, LAYOUTS, PIXEL_FEATURES, TOKEN, padded_grid

Y_MAX = 1.0 - 1.0 / 1024.0


def tonemap(x):
    return torch.clamp(x / (1.0 + x), max=Y_MAX)


def untonemap(y):
    y = y.clamp(0.0, Y_MAX)
    return y / (1.0 - y)


def luma(c):  # c [..., 3, H, W] along dim -3
    return 0.2126 * c[..., 0, :, :] + 0.7152 * c[..., 1, :, :] + 0.0722 * c[..., 2, :, :]


def sanitize(color, motion, depth):
    color = torch.nan_to_num(color, nan=0.0, posinf=65504.0, neginf=0.0).clamp(0.0, 65504.0)
    motion = torch.nan_to_num(motion, nan=0.0, posinf=16384.0, neginf=-16384.0).clamp(-16384.0, 16384.0)
    depth = torch.nan_to_num(depth, nan=0.0, posinf=1.0, neginf=0.0).clamp(0.0, 1.0)
    return color, motion, depth


def prepare(color, motion, depth, out_size, exposure=1.0, motion_units="render", depth_inverted=True):
    """color [B,4,rh,rw] linear, motion [B,2,rh,rw], depth [B,1,rh,rw] -> dict of prepared planes."""
    color, motion, depth = sanitize(color, motion, depth)
    rh, rw = color.shape[-2:]
    W, H = out_size
    c = tonemap(color[:, :3] * exposure)
    if motion_units == "render":
        m = torch.stack([motion[:, 0] * (W / rw), motion[:, 1] * (H / rh)], 1)
    else:
        m = motion
    near = depth if depth_inverted else 1.0 - depth
    return dict(color=c, motion=m, near=near, exposure=exposure)


def _gather(img, iy, ix):
    """img [B,C,h,w]; iy [B,H,1] or [B,H,W], ix [B,1,W] or [B,H,W] long -> [B,C,H,W]."""
    b, c, h, w = img.shape
    iy, ix = torch.broadcast_tensors(iy, ix)
    flat = (iy * w + ix).view(b, 1, -1).expand(b, c, -1)
    return torch.gather(img.reshape(b, c, h * w), 2, flat).view(b, c, *iy.shape[1:])


def catmull_rom_weights(f):
    return [f * (-0.5 + f * (1.0 - 0.5 * f)), 1.0 + f * f * (-2.5 + 1.5 * f), f * (0.5 + f * (2.0 - 1.5 * f)), f * f * (-0.5 + 0.5 * f)]


def sample_catmull_rom(img, px, py):
    """img [B,C,h,w]; px, py [B,H,W] in pixel units -> [B,C,H,W]; clamp-to-edge."""
    return sample_cubic(img, px, py, catmull_rom_weights)


CATMULL_ROM_A = -0.5  # Keys' a of Catmull-Rom: the history kernel of a config without `history_a`


def keys_weights(f, a):
    """Keys' cubic: tap weights for offsets -1, 0, 1, 2 at fractional position f (a = -0.5 is
    Catmull-Rom, lower is sharper); a is a number or broadcasts with f."""
    near = lambda x: ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = lambda x: ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return [far(1.0 + f), near(f), near(1.0 - f), far(2.0 - f)]


def sample_keys(img, px, py, a):
    """Keys' cubic with parameter a (a number, or a tensor [B,H,W] per pixel); at the number -0.5
    exactly sample_catmull_rom (as the reference)."""
    if isinstance(a, float) and a == CATMULL_ROM_A:
        return sample_catmull_rom(img, px, py)
    return sample_cubic(img, px, py, lambda f: keys_weights(f, a))


def sample_cubic(img, px, py, weights):
    """A separable 4 x 4-tap resampling; weights(f) gives the taps at offsets -1, 0, 1, 2."""
    h, w = img.shape[-2:]
    ux, uy = px - 0.5, py - 0.5
    fx0, fy0 = torch.floor(ux), torch.floor(uy)
    wx, wy = weights(ux - fx0), weights(uy - fy0)
    ix, iy = fx0.long(), fy0.long()
    out = 0.0
    for j in range(4):
        row = 0.0
        yj = (iy - 1 + j).clamp(0, h - 1)
        for i in range(4):
            row = row + wx[i].unsqueeze(1) * _gather(img, yj, (ix - 1 + i).clamp(0, w - 1))
        out = out + wy[j].unsqueeze(1) * row
    return out


def footprint(img, px, py):
    """The 2 x 2 texels around (px, py), clamp-to-edge: t00, t01, t10, t11 (row, column; each
    [B,C,H,W]) and the fractions fx, fy [B,1,H,W] of (px, py) between them."""
    h, w = img.shape[-2:]
    ux, uy = px - 0.5, py - 0.5
    fx0, fy0 = torch.floor(ux), torch.floor(uy)
    fx, fy = (ux - fx0).unsqueeze(1), (uy - fy0).unsqueeze(1)
    ix, iy = fx0.long(), fy0.long()
    g = lambda dy, dx: _gather(img, (iy + dy).clamp(0, h - 1), (ix + dx).clamp(0, w - 1))
    return (g(0, 0), g(0, 1), g(1, 0), g(1, 1)), fx, fy


def sample_bilinear(img, px, py):
    (t00, t01, t10, t11), fx, fy = footprint(img, px, py)
    top = t00 + (t01 - t00) * fx
    bot = t10 + (t11 - t10) * fx
    return top + (bot - top) * fy


def new_history(b, W, H, device, memory=2):
    """An empty history; memory: its feature-memory channels (the contract's 2; a head layout
    experiment's Config.memory_channels)."""
    z = lambda c: torch.zeros(b, c, H, W, device=device)
    return dict(color=z(3), near=z(1), memory=z(memory), count=z(1), exposure=1.0, valid=torch.zeros(b, device=device))


def memory_of(net):
    """The feature-memory channels a history for this network holds (2 for the fixed head)."""
    return 2 if net is None else net.cfg.memory_channels


DILATE_MOTION = False  # experiment (train.py --exp-dilate): the history at the nearest surface's motion in the 3x3
# Experiment (train.py --exp-dilate-choice): the reconstruction's history colour is a per-pixel mix of
# the history at the nearest sample's motion (the contract's) and at the nearest surface's motion in
# the 3x3, by head channel 2 (sigmoid), which then no longer rectifies. The features keep the
# contract's history; validity, nearness and memory keep the nearest sample's motion.
DILATE_CHOICE = False
# experiment (train/eval_twin.py :depth_gather=TAU; no backend computes it): the gather's weights
# times exp(-(dn / TAU)^2), dn the sample's nearness difference from the nearest sample's relative
# to it, so that a pixel on a depth edge gathers from its own surface. 0: off (the contract).
DEPTH_GATHER = 0.0
# experiment (train/eval_twin.py :dering=A; no backend computes it): the cubic history clamped per
# channel to the range of its 2 x 2 nearest texels (the bilinear footprint), so that a sharper
# kernel cannot overshoot; False: off (the contract).
HISTORY_DERING = False
# experiment (train/eval_twin.py :dilate_thin=K; no backend computes it): the history at the nearest
# surface's motion (dilated_motion) only where that surface covers at most K of the 3x3's samples
# (their nearness within THIN_TOLERANCE of the nearest's, relative to it): a sparsely sampled wire,
# not a large object's edge. 0: off (the contract).
DILATE_THIN = 0
THIN_TOLERANCE = 0.05


def dilated_motion(nears, mots):
    """The motion of the nearest surface in the 3x3 (nearness: 1 = near; the first of equals), where it
    is nearer than the centre sample; else the centre's. nears [B,9,H,W], mots [B,9,2,H,W] -> [B,2,H,W]."""
    best = nears.argmax(1, keepdim=True)
    md = torch.gather(mots, 1, best.unsqueeze(2).expand(-1, -1, 2, -1, -1))[:, 0]
    return torch.where((nears.amax(1) > nears[:, 4]).unsqueeze(1), md, mots[:, 4])


def thin_dilated_motion(nears, mots, k):
    """dilated_motion where the nearest surface covers at most k of the 9 samples, else the centre's."""
    nmax = nears.amax(1, keepdim=True)
    cover = ((nmax - nears) / (nmax + 1e-3) < THIN_TOLERANCE).sum(1)
    return torch.where((cover <= k).unsqueeze(1), dilated_motion(nears, mots), mots[:, 4])


def pixel_context(p, hist, jitter, reset, history_a=CATMULL_ROM_A):
    """p: prepared frame; hist: history dict; jitter [B,2]; reset [B] bool -> context dict."""
    c = p["color"]
    B, _, rh, rw = c.shape
    H, W = hist["color"].shape[-2:]
    dev = c.device
    xs = torch.arange(W, device=dev, dtype=torch.float32)
    ys = torch.arange(H, device=dev, dtype=torch.float32)
    prx = ((xs + 0.5) * rw / W).view(1, 1, W).expand(B, 1, W)
    pry = ((ys + 0.5) * rh / H).view(1, H, 1).expand(B, H, 1)
    jx, jy = jitter[:, 0].view(B, 1, 1), jitter[:, 1].view(B, 1, 1)
    nx = torch.floor(prx - jx).clamp(0, rw - 1)
    ny = torch.floor(pry - jy).clamp(0, rh - 1)
    offset = torch.stack(torch.broadcast_tensors(prx - (nx + 0.5 + jx), pry - (ny + 0.5 + jy)), 1)  # [B,2,H,W]
    nxl, nyl = nx.long(), ny.long()
    d2, dq, cols, nears, mots = [], [], [], [], []
    for k in range(9):
        dx, dy = k % 3 - 1, k // 3 - 1
        kx = (nxl + dx).clamp(0, rw - 1)
        ky = (nyl + dy).clamp(0, rh - 1)
        qx = kx.float() + 0.5 + jx
        qy = ky.float() + 0.5 + jy
        d2.append((prx - qx) * (prx - qx) + (pry - qy) * (pry - qy))
        dq.append(torch.stack(torch.broadcast_tensors(prx - qx, pry - qy), 1))
        cols.append(_gather(c, ky, kx))
        nears.append(_gather(p["near"], ky, kx))
        mots.append(_gather(p["motion"], ky, kx))
    d2 = torch.stack(torch.broadcast_tensors(*d2), 1)  # [B,9,H,W]
    cols = torch.stack(cols, 1)  # [B,9,3,H,W]
    nears = torch.stack(nears, 1)[:, :, 0]  # [B,9,H,W]
    mots = torch.stack(mots, 1)  # [B,9,2,H,W]
    m = dilated_motion(nears, mots) if DILATE_MOTION else thin_dilated_motion(nears, mots, DILATE_THIN) if DILATE_THIN else mots[:, 4]
    px = (xs.view(1, 1, W) + 0.5) + m[:, 0]
    py = (ys.view(1, H, 1) + 0.5) + m[:, 1]
    outside = torch.zeros_like(px)
    for v in (-px, px - W, -py, py - H):
        outside = torch.maximum(outside, v)
    ok = (hist["valid"] * (~reset).float()).view(B, 1, 1)
    valid = (1.0 - outside).clamp(0.0, 1.0) * ok
    reexpose = lambda h: tonemap(untonemap(h) * (p["exposure"] / hist["exposure"])) if hist["exposure"] != p["exposure"] else h
    hc = sample_keys(hist["color"], px, py, history_a)
    if HISTORY_DERING:
        taps = torch.stack(footprint(hist["color"], px, py)[0])
        hc = torch.clamp(hc, taps.amin(0), taps.amax(0))
    hc = reexpose(hc.clamp(0.0, Y_MAX))
    prev_near = sample_bilinear(hist["near"], px, py)[:, 0]
    memory = sample_bilinear(hist["memory"], px, py)
    count = sample_bilinear(hist["count"], px, py)[:, 0]
    ctx = dict(offset=offset, d2=d2, dq=torch.stack(dq, 1), c=cols, near=nears, motion=mots, prev=torch.stack([px, py], 1),
               hist=hc, valid=valid, prev_near=prev_near, memory=memory, count=count)
    if DILATE_CHOICE:
        ctx["hist_dilated"] = dilated_history(ctx, hist, p, history_a)
    return ctx


def features(ctx):
    """-> [B,16,H,W]."""
    c, near, mot = ctx["c"], ctx["near"], ctx["motion"]
    nmin, nmax = near.min(1).values, near.max(1).values
    lum = luma(c)  # [B,9,H,W]
    dm = mot - mot[:, 4:5]
    u = torch.sqrt(dm[:, :, 0] ** 2 + dm[:, :, 1] ** 2).max(1).values
    a = near[:, 4]
    f = [c[:, 4], ctx["offset"], ctx["hist"],
         ((nmax - nmin) / (nmax + 1e-3)).unsqueeze(1),
         (u / (1.0 + u)).unsqueeze(1),
         ((a - ctx["prev_near"]).abs() / (torch.maximum(a, ctx["prev_near"]) + 1e-3)).unsqueeze(1),
         ctx["valid"].unsqueeze(1), lum.min(1).values.unsqueeze(1), lum.max(1).values.unsqueeze(1), ctx["memory"]]
    out = torch.cat(f, 1)
    assert out.shape[1] == PIXEL_FEATURES - 2 + ctx["memory"].shape[1]
    return out


def extra_features(ctx, names):
    """The experiment's features beyond the contract's (net.EXTRA_FEATURES), in the order named."""
    out = []
    for n in names:
        if n == "phase":
            t = ctx["prev"] - 0.5
            out.append(0.5 - ((t - torch.floor(t)) - 0.5).abs())
        elif n == "motion":
            m = ctx["motion"][:, 4]
            u = torch.sqrt(m[:, 0] ** 2 + m[:, 1] ** 2)
            out.append((u / (1.0 + u)).unsqueeze(1))
        elif n == "spread":
            lum = luma(ctx["c"])
            out.append(torch.sqrt((lum.pow(2).mean(1) - lum.mean(1).pow(2)).clamp(min=0.0)).unsqueeze(1))
        elif n == "taau":
            out.append(ctx["taau"])
        elif n == "taau_state":
            out.append(ctx["taau_state"])
        else:
            raise ValueError(f"unknown extra feature {n!r}")
    return torch.cat(out, 1)


def round16(x):
    return x.half().float()


def tokens(net, feats, round_f16=False):
    """feats [B,16,H,W] -> tokens [B,Th,Tw,16P] on the padded grid (zero outside the output)."""
    B, _, H, W = feats.shape
    pw, ph = padded_grid(W, H, net.cfg.alignment)
    f = feats.permute(0, 2, 3, 1)
    n = net.pixel_embed.in_features
    e = net.pixel_embed(f[..., :n])
    if n < f.shape[-1]:  # an experiment's extra features (net.EXTRA_FEATURES), after the contract's
        e = e + net.pixel_embed_extra(f[..., n:])
    e = F.silu(e)  # [B,H,W,P]
    P = e.shape[-1]
    e = F.pad(e, (0, 0, 0, pw * TOKEN - W, 0, ph * TOKEN - H))
    t = e.view(B, ph, TOKEN, pw, TOKEN, P).permute(0, 1, 3, 2, 4, 5).reshape(B, ph, pw, 16 * P)
    return round16(t) if round_f16 else t


def head_pixels(head_tokens, W, H):
    """[B,Th,Tw,16n] -> per-pixel head [B,n,H,W]: n = 8, the contract's channels, or 9 with an
    experiment's TAAU mix (net.Config.taau_mix)."""
    B, th, tw, n = head_tokens.shape
    n //= TOKEN * TOKEN
    h = head_tokens.view(B, th, tw, TOKEN, TOKEN, n).permute(0, 5, 1, 3, 2, 4).reshape(B, n, th * TOKEN, tw * TOKEN)
    return h[:, :, :H, :W]


def decode(h, layout="rgb"):
    """[B,8,H,W] (or 9 channels: net.Config.taau_mix) -> controls; layout: the head layout
    (net.LAYOUTS; "rgb" is the contract's)."""
    ctl = dict(blend=torch.sigmoid(h[:, 0]), sigma=torch.exp(h[:, 1].clamp(-2.5, 1.0)), clamp=torch.sigmoid(h[:, 2]))
    if h.shape[1] > HEAD_CHANNELS:  # an experiment's ninth channel: the classical TAAU's share of the output
        ctl["taau_mix"] = torch.sigmoid(h[:, HEAD_CHANNELS])
    if layout == "rgb":
        return dict(ctl, residual=0.5 * torch.tanh(h[:, 3:6]), memory=torch.tanh(h[:, 6:8]))
    lay = LAYOUTS[layout]
    res = 0.5 * torch.tanh(h[:, list(lay["residual"])])
    ctl.update(residual=res.expand(-1, 3, -1, -1) if res.shape[1] == 1 else res, memory=torch.tanh(h[:, list(lay["memory"])]))
    if lay["choice"] is not None:
        ctl["choice"] = torch.sigmoid(h[:, lay["choice"]])
    if lay.get("gather") == "shift":
        ctl["shift"] = GATHER_SHIFT * torch.tanh(h[:, 4:6])
    elif lay.get("gather") == "aniso":
        ctl["aniso"] = GATHER_ANISO * torch.tanh(h[:, 4:6]) / 2 ** 0.5  # |(u, v)| < GATHER_ANISO
    elif lay.get("gather") in ("edge", "edge_stretch"):
        ctl["edge_stretch"] = GATHER_ANISO * torch.tanh(h[:, 4])
        if lay["gather"] == "edge":
            ctl["edge_shift"] = GATHER_SHIFT * torch.tanh(h[:, 5])
    return ctl


def edge_direction(ctx):
    """The 3x3's luma gradient direction at the output pixel, [B,2,H,W], of length |g| / sqrt(|g|^2 +
    eps^2) < 1 (about 1 across an edge, 0 in a flat region): g the least-squares slope of the taps'
    tonemapped luma over their positions."""
    lum = luma(ctx["c"])  # [B,9,H,W]
    q = -ctx["dq"]  # the taps' positions relative to the output pixel
    q = q - q.mean(1, keepdim=True)
    lc = (lum - lum.mean(1, keepdim=True)).unsqueeze(2)
    g = (lc * q).sum(1) / (q * q).sum(1).clamp(min=1e-6)  # [B,2,H,W]
    return g / torch.sqrt((g * g).sum(1, keepdim=True) + GATHER_EDGE_EPS ** 2)


def gather_weights(ctx, ctl):
    """The current frame's 3x3 gather weights [B,9,H,W]: the contract's Gaussian of width sigma around
    the output pixel, or a head layout's shifted or stretched one (net.LAYOUTS' gather)."""
    d2 = ctx["d2"]
    if "shift" in ctl:  # the centre moved by the shift (render px)
        d = ctx["dq"] + ctl["shift"].unsqueeze(1)
        d2 = d[:, :, 0] ** 2 + d[:, :, 1] ** 2
    elif "aniso" in ctl:  # d^T (I + [[u, v], [v, -u]]) d: eigenvalues 1 +- |(u, v)|
        dx, dy = ctx["dq"][:, :, 0], ctx["dq"][:, :, 1]
        u, v = ctl["aniso"][:, 0:1], ctl["aniso"][:, 1:2]
        d2 = d2 + u * (dx * dx - dy * dy) + 2.0 * v * dx * dy
    elif "edge_stretch" in ctl:  # stretched along the edge (across the gradient n): d^2 + e ((d.n)^2 - (d.t)^2)
        n = edge_direction(ctx)
        d = ctx["dq"]
        if "edge_shift" in ctl:  # the centre moved along the gradient
            d = d + (ctl["edge_shift"].unsqueeze(1) * n).unsqueeze(1)
        dn = (d * n.unsqueeze(1)).sum(2)
        dt = d[:, :, 1] * n[:, 0:1] - d[:, :, 0] * n[:, 1:2]
        d2 = (d * d).sum(2) + ctl["edge_stretch"].unsqueeze(1) * (dn * dn - dt * dt)
    d2min = d2.min(1, keepdim=True).values
    inv = 1.0 / (2.0 * ctl["sigma"] * ctl["sigma"])
    return torch.exp(-(d2 - d2min) * inv.unsqueeze(1))


def head_controls(head_tokens):
    """A head buffer [B,Th,Tw,128] -> its controls [B,8,Th,Tw,16] (decode's, each on a scale of about
    one: β, σ's clamped logarithm over its range, the rectification, the residual, the memory):
    what distillation compares (train.py --distill), insensitive to where a saturated logit sits."""
    h = head_tokens.reshape(*head_tokens.shape[:-1], TOKEN * TOKEN, HEAD_CHANNELS).movedim(-1, 1)  # channels where decode reads them
    c = decode(h)
    return torch.cat([c["blend"][:, None], (torch.log(c["sigma"][:, None]) + 2.5) / 3.5, c["clamp"][:, None], 2 * c["residual"], c["memory"]], 1)


def distill_error(teacher, extras, phase):
    """Mean squared difference of a step's head controls from those a teacher network computes on
    the same pixel features (its own embedding of them); extras: stages.step's."""
    with torch.no_grad():
        want = head_controls(teacher(tokens(teacher, extras["feats"]), phase)).float()
    return ((head_controls(extras["head"]).float() - want) ** 2).mean()


def dilated_history(ctx, hist, p, history_a):
    """The history colour at the nearest surface's motion in the 3x3 (dilated_motion), resampled and
    re-exposed as the contract's history is: what DILATE_CHOICE and a layout's choice channel mix in."""
    md = dilated_motion(ctx["near"], ctx["motion"])
    H, W = hist["color"].shape[-2:]
    xs = torch.arange(W, device=md.device, dtype=torch.float32).view(1, 1, W)
    ys = torch.arange(H, device=md.device, dtype=torch.float32).view(1, H, 1)
    h = sample_keys(hist["color"], xs + 0.5 + md[:, 0], ys + 0.5 + md[:, 1], history_a).clamp(0.0, Y_MAX)
    if hist["exposure"] != p["exposure"]:
        h = tonemap(untonemap(h) * (p["exposure"] / hist["exposure"]))
    return h


def fixed_controls(blend, sigma, clamp, like):
    B, _, H, W = like.shape
    full = lambda v: torch.full((B, H, W), float(v), device=like.device)
    return dict(blend=full(blend), sigma=full(sigma), clamp=full(clamp),
                residual=torch.zeros(B, 3, H, W, device=like.device), memory=torch.zeros(B, 2, H, W, device=like.device))


ACCUM_MAX = 16.0  # docs/NETWORK.md §6, config `accumulate`
ACCUM_GAMMA = 1.0


def history_weight(ctx, accumulate):
    """The history's weight before the blend: validity, times n / (n + 1) of the count with `accumulate`."""
    if accumulate:
        return ctx["valid"] * ctx["count"] / (ctx["count"] + 1.0)
    return ctx["valid"]


def reconstruct(ctx, ctl, accumulate=False):
    """-> (tonemapped output [B,3,H,W], alpha [B,1,H,W])."""
    w = gather_weights(ctx, ctl)  # [B,9,H,W]
    if DEPTH_GATHER:
        near = ctx["near"]
        w = w * torch.exp(-(((near - near[:, 4:5]) / (near[:, 4:5] + 1e-3)) / DEPTH_GATHER) ** 2)
    c = ctx["c"]  # [B,9,3,H,W]
    cur = (w.unsqueeze(2) * c).sum(1) / w.sum(1, keepdim=True)
    lo, hi = c.min(1).values, c.max(1).values
    blo, bhi = lo, hi
    if accumulate:  # clip to the mean +- ACCUM_GAMMA deviations of the 3x3 instead of its extremes
        mean = c.sum(1) / 9.0
        dev = ((c * c).sum(1) / 9.0 - mean * mean).clamp(min=0.0).sqrt()
        blo, bhi = mean - ACCUM_GAMMA * dev, mean + ACCUM_GAMMA * dev
    h = ctx["hist"]
    if "choice" in ctl:  # a head layout's choice: mix in the dilated history, then rectify as the contract does
        h = h + ctl["choice"].unsqueeze(1) * (ctx["hist_dilated"] - h)
    if "hist_dilated" in ctx and "choice" not in ctl:  # the experiment of DILATE_CHOICE: channel 2 mixes, nothing rectifies
        rect = h + ctl["clamp"].unsqueeze(1) * (ctx["hist_dilated"] - h)
    else:
        rect = h + ctl["clamp"].unsqueeze(1) * (torch.minimum(torch.maximum(h, blo), bhi) - h)
    alpha = (ctl["blend"] * history_weight(ctx, accumulate)).unsqueeze(1)
    out = (alpha * rect + (1.0 - alpha) * cur + ctl["residual"] * (hi - lo)).clamp(0.0, Y_MAX)
    if "taau_mix" in ctl:  # the experiment of net.Config.taau_mix: the classical TAAU's frame mixed in
        out = out + ctl["taau_mix"].unsqueeze(1) * (ctx["taau"] - out)
    return out, alpha


def context_and_features(p, hist, jitter, reset, with_features=True, history_a=CATMULL_ROM_A):
    """The per-pixel half of the input stage: context dict and, for the network, its features.
    history_a: the history kernel (config `history_a`; Catmull-Rom for the fixed head)."""
    ctx = pixel_context(p, hist, jitter, reset, history_a)
    return ctx, (features(ctx) if with_features else None)


def finish(ctx, head_px, exposure, round_f16=False, accumulate=False):
    """Decode the per-pixel head [B,8,H,W], reconstruct, and build the next history.
    Returns (tonemapped output, new history)."""
    return _finish(ctx, decode(head_px, ctx.get("layout", "rgb")), exposure, round_f16, accumulate)


def _finish(ctx, ctl, exposure, round_f16, accumulate=False):
    out, alpha = reconstruct(ctx, ctl, accumulate)
    r = round16 if round_f16 else (lambda x: x)
    # The count the blend implies (alpha < 1 while the count is capped): alpha / (1 - alpha) + 1.
    count = (alpha / (1.0 - alpha) + 1.0).clamp(max=ACCUM_MAX) if accumulate else torch.zeros_like(alpha)
    new = dict(color=r(out), near=r(ctx["near"][:, 4:5].contiguous()), memory=r(ctl["memory"]), count=r(count),
               exposure=exposure, valid=torch.ones(out.shape[0], device=out.device))
    return out, new


class Ops:
    """The stage functions `step` calls around the network. Training swaps in torch.compile'd
    versions (train.py --compile); the math is the same functions."""
    context_and_features = staticmethod(context_and_features)
    finish = staticmethod(finish)


EAGER = Ops()


def apply_reset(hist, reset):
    """History with the sequences flagged in reset [B] (bool) cleared and marked invalid."""
    if not bool(reset.any()):
        return hist
    keep = (~reset).float().view(-1, 1, 1, 1)
    return dict(hist, color=hist["color"] * keep, near=hist["near"] * keep, memory=hist["memory"] * keep,
                count=hist["count"] * keep, valid=hist["valid"] * (~reset).float())


def step(net, p, hist, jitter, reset, phase, fixed=None, round_f16=False, ops=EAGER, head_px=None):
    """One evaluation. Returns (tonemapped output, new history, extras). fixed: the baseline's
    (blend, sigma, clamp) instead of the network; head_px: a raw per-pixel head [B,8,H,W] instead."""
    H, W = hist["color"].shape[-2:]
    hist = apply_reset(hist, reset)
    # The network's history kernel (config `history_a`); the fixed head keeps Catmull-Rom.
    history_a = float(net.cfg.history_a) if net is not None and fixed is None else CATMULL_ROM_A
    ctx, feats = ops.context_and_features(p, hist, jitter, reset, fixed is None and head_px is None, history_a)
    layout = net.cfg.layout if net is not None and fixed is None else "rgb"
    if layout != "rgb":  # an experiment's head layout (net.LAYOUTS)
        ctx = dict(ctx, layout=layout)
        if LAYOUTS[layout]["choice"] is not None:
            ctx["hist_dilated"] = dilated_history(ctx, hist, p, history_a)
    if fixed is not None:
        out, new = _finish(ctx, fixed_controls(*fixed, like=ctx["hist"]), p["exposure"], round_f16)
        return out, new, {}
    accumulate = bool(net is not None and net.cfg.accumulate)
    taau_state = None
    if net is not None and net.cfg.uses_taau:  # an experiment: the classical TAAU beside the network
        from . import taau
        prev = hist.get("taau") or taau.new_state(hist["color"].shape[0], W, H, hist["color"].device)
        t_out, taau_state = taau.step(p, prev, jitter, reset, (W, H), round_f16=round_f16)
        ctx = dict(ctx, taau=t_out, taau_state=taau_state["count"])
    if head_px is not None:
        out, new = ops.finish(ctx, head_px, p["exposure"], round_f16, accumulate)
        if taau_state is not None:
            new["taau"] = taau_state
        return out, new, {}
    if net.cfg.extra_features:  # an experiment's features after the contract's
        feats = torch.cat([feats, extra_features(ctx, net.cfg.extra_features)], 1)
    toks = tokens(net, feats, round_f16)
    head = net(toks, phase)
    if round_f16:
        head = round16(head)
    out, new = ops.finish(ctx, head_pixels(head, W, H), p["exposure"], round_f16, accumulate)
    if taau_state is not None:
        new["taau"] = taau_state
    return out, new, dict(tokens=toks, head=head, feats=feats)
