"""The classical TAAU (`--network none`, model/src/taau.rs) in torch, batched: the same per-pixel
steps in the same order, so that a training run can show a network the classical TAAU's frame
(an experiment: net.Config.taau_mix and the `taau` pixel features; no backend computes it).
`train/check_taau.py` holds it to `tessel replay --network none` frame by frame.

No gradient flows through it: its state depends on the frames alone, never on the network."""
import torch

from . import stages

# TaauParams::default() of model/src/taau.rs (tuned on training scenes only; check_taau.py fails
# when the two differ, since the outputs would).
PARAMS = dict(sigma=0.3403, confidence_sigma=0.5731, gamma=8.086, box_floor=0.9401, cap=0.8909, cap_static=0.3809,
              keys_a=-0.8575, depth_tolerance=1.224, reactive=0.03068, disagree=0.01027, disagree_floor=0.1948,
              motion_edge=0.5, lock_threshold=0.9186, lock_cap=2.739, lock_decay=0.7655)
LOCK_MIN_RANGE = 0.02


def ycocg(c):
    """[B,3,...] RGB -> YCoCg along dim 1, as taau.rs computes it."""
    co = 0.5 * (c[:, 0] - c[:, 2])
    tmp = c[:, 2] + co
    cg = 0.5 * (c[:, 1] - tmp)
    return torch.stack([tmp + cg, co, cg], 1)


def rgb(y):
    tmp = y[:, 0] - y[:, 2]
    g = y[:, 0] + y[:, 2]
    b = tmp - y[:, 1]
    return torch.stack([b + 2.0 * y[:, 1], g, b], 1)


def thin_feature(l, threshold):
    """l [B,9,H,W] lumas of the 3 x 3 (row-major) -> 1 where the centre is a ridge or a valley."""
    lo, hi = l.min(1).values, l.max(1).values
    c = l[:, 4]
    ridge = torch.zeros_like(c)
    for a, b in ((3, 5), (1, 7), (0, 8), (2, 6)):
        ridge = torch.maximum(torch.maximum(ridge, torch.minimum(c - l[:, a], c - l[:, b])), torch.minimum(l[:, a] - c, l[:, b] - c))
    return ((hi - lo > LOCK_MIN_RANGE) & (ridge > threshold * (hi - lo))).float()


def new_state(b, W, H, device):
    z = lambda c: torch.zeros(b, c, H, W, device=device)
    return dict(color=z(3), near=z(1), count=z(2), exposure=1.0, valid=torch.zeros(b, device=device, dtype=torch.bool))


@torch.no_grad()
def step(p, state, jitter, reset, out_size, prm=None, round_f16=False):
    """p: stages.prepare's frame; state: new_state's or the last step's; jitter [B,2]; reset [B] bool.
    Returns (tonemapped output [B,3,H,W] under the frame's exposure, the next state). prm: PARAMS
    unless given."""
    prm = PARAMS if prm is None else prm
    c = p["color"].float()
    B, _, rh, rw = c.shape
    W, H = out_size
    dev = c.device
    xs = torch.arange(W, device=dev, dtype=torch.float32).view(1, 1, W)
    ys = torch.arange(H, device=dev, dtype=torch.float32).view(1, H, 1)
    prx = ((xs + 0.5) * rw / W).expand(B, H, W)
    pry = ((ys + 0.5) * rh / H).expand(B, H, W)
    jx, jy = jitter[:, 0].view(B, 1, 1).float(), jitter[:, 1].view(B, 1, 1).float()
    nx, ny = torch.floor(prx - jx), torch.floor(pry - jy)
    ox = torch.where(prx - jx - nx >= 0.5, 0.0, -1.0)
    oy = torch.where(pry - jy - ny >= 0.5, 0.0, -1.0)
    cx = lambda v: v.clamp(0, rw - 1).long()
    cy = lambda v: v.clamp(0, rh - 1).long()
    inv = 1.0 / (2.0 * prm["sigma"] * prm["sigma"])
    sxo, syo = W / rw, H / rh
    acc = torch.zeros(B, 3, H, W, device=dev)
    wsum = torch.zeros(B, H, W, device=dev)
    d2min = torch.full((B, H, W), 3.4e38, device=dev)
    # The jitter-aware gather over the 4 x 4 samples around the pixel centre.
    for dy in range(-1, 3):
        for dx in range(-1, 3):
            sx, sy = nx + dx + ox, ny + dy + oy
            qx, qy = sx + 0.5 + jx, sy + 0.5 + jy
            d2 = (prx - qx) ** 2 + (pry - qy) ** 2
            wt = torch.exp(-d2 * inv)
            acc = acc + wt.unsqueeze(1) * stages._gather(c, cy(sy), cx(sx))
            wsum = wsum + wt
            d2min = torch.minimum(d2min, ((prx - qx) * sxo) ** 2 + ((pry - qy) * syo) ** 2)
    nearest = stages._gather(c, cy(ny), cx(nx))
    cur = torch.where((wsum > 1e-12).unsqueeze(1), acc / wsum.clamp(min=1e-30).unsqueeze(1), nearest)
    # The 3 x 3 around the nearest sample: YCoCg moments and extremes, motions, lumas, nearness.
    yc, mots, nears = [], [], []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            kx, ky = cx(nx + dx), cy(ny + dy)
            yc.append(ycocg(stages._gather(c, ky, kx)))
            mots.append(stages._gather(p["motion"].float(), ky, kx))
            nears.append(stages._gather(p["near"].float(), ky, kx)[:, 0])
    m1 = torch.zeros_like(yc[0])
    m2 = torch.zeros_like(yc[0])
    for v in yc:
        m1 = m1 + v / 9.0
        m2 = m2 + v * v / 9.0
    ycs = torch.stack(yc, 1)  # [B,9,3,H,W]
    lo, hi = ycs.min(1).values, ycs.max(1).values
    mots = torch.stack(mots, 1)  # [B,9,2,H,W]
    nears = torch.stack(nears, 1)  # [B,9,H,W]
    best_near, best = nears.max(1)  # the first of equal maxima, as taau.rs's strict comparison keeps it
    m = torch.gather(mots, 1, best.view(B, 1, 1, H, W).expand(B, 1, 2, H, W))[:, 0]  # [B,2,H,W]
    q = torch.exp(-d2min / (2.0 * prm["confidence_sigma"] ** 2)).clamp(1e-3, 1.0)
    thin = thin_feature(ycs[:, :, 0], prm["lock_threshold"]) if prm["lock_cap"] > 0 else torch.zeros_like(q)
    # The history, where there is one.
    px = xs + 0.5 + m[:, 0]
    py = ys + 0.5 + m[:, 1]
    ok = (state["valid"] & ~reset).view(B, 1, 1) & (px >= 0) & (py >= 0) & (px <= W) & (py <= H)
    prev_near = stages.sample_bilinear(state["near"], px, py)[:, 0]
    ok = ok & ((best_near - prev_near).abs() <= prm["depth_tolerance"] * torch.maximum(best_near, prev_near).clamp(min=1e-3))
    hc = stages.sample_keys(state["color"], px, py, prm["keys_a"]).clamp(0.0, stages.Y_MAX)
    if state["exposure"] != p["exposure"]:
        hc = stages.tonemap(stages.untonemap(hc) * (p["exposure"] / state["exposure"]))
    cnt = stages.sample_bilinear(state["count"], px, py)
    n_prev, lock_prev = cnt[:, 0].clamp(min=0.0), cnt[:, 1]
    lock = torch.maximum(lock_prev.clamp(0.0, 1.0) * prm["lock_decay"], thin)
    sd = (m2 - m1 * m1).clamp(min=0.0).sqrt()
    ext = torch.maximum(torch.maximum((prm["gamma"] * sd).clamp(min=prm["box_floor"]), hi - m1), m1 - lo)
    hy = ycocg(hc)
    # Clip toward the mean into the box: t the segment's share inside it, `outside` its inverse.
    d = (hy - m1).abs()
    t = torch.where(d > ext, ext / d.clamp(min=1e-30), torch.ones_like(d)).min(1).values
    clipped = m1 + (hy - m1) * t.unsqueeze(1)
    outside = torch.where(t < 1.0, 1.0 / t.clamp(min=1e-30), torch.ones_like(t))
    hist_rgb = rgb(clipped)
    frac = lambda v: 4.0 * (v - torch.floor(v)) * (1.0 - (v - torch.floor(v)))
    blur = 0.5 * (frac(m[:, 0]) + frac(m[:, 1]))
    cap = prm["cap_static"] + (prm["cap"] - prm["cap_static"]) * blur
    cap = cap + lock * (prm["lock_cap"] - cap).clamp(min=0.0)
    dm = mots - m.unsqueeze(1)
    edge = torch.hypot(dm[:, :, 0], dm[:, :, 1]).max(1).values
    z = (hy[:, 0] - ycocg(cur)[:, 0]).abs() / (sd[:, 0] + prm["disagree_floor"])
    shrink = (1.0 + prm["reactive"] * (outside - 1.0)) * (1.0 + prm["motion_edge"] * edge) * (1.0 + prm["disagree"] * (z - 1.0).clamp(min=0.0))
    n = torch.minimum(n_prev / shrink, cap)
    blended = ((n.unsqueeze(1) * hist_rgb + q.unsqueeze(1) * cur) / (n + q).unsqueeze(1)).clamp(0.0, stages.Y_MAX)
    okc = ok.unsqueeze(1)
    out = torch.where(okc, blended, cur)
    count = torch.stack([torch.where(ok, torch.minimum(n + q, cap), q), torch.where(ok, lock, thin)], 1)
    r = stages.round16 if round_f16 else (lambda x: x)
    new = dict(color=r(out), near=r(best_near.unsqueeze(1)), count=r(count), exposure=p["exposure"],
               valid=torch.ones(B, device=dev, dtype=torch.bool))
    return out, new
