"""Training scenes generated on the GPU, in the spirit of `tessel scene` and broader: a textured plane
under a panning, zooming camera, moving and spinning objects and particles (disocclusion), thin
lines, fine periodic texture, glyphs, HDR sparkles, lighting changes. Exact motion and depth; ground
truth supersampled at output size. Its hashing differs from the Rust generator's, so no sequence of
`tessel scene` is ever seen in training."""
import functools
import math

import torch

M32 = 0xFFFFFFFF
FAMILIES = 7  # stripes, checker, lines, text, noise, sparkles, rings
# Issue 13's hazards (SceneBatch._draw_hazards): a moving light with blinds, translucent layers,
# scrolling screens, thin wires and fences, photo-like textures. tessel-v8 trained on the first
# three, tessel-v9 on all five.
HAZARD_KINDS = ("light", "veil", "screen", "thin", "photo")


def _i32(x):
    """A 32-bit pattern as an int32 value (a Python int or an integer tensor, wrapped)."""
    if torch.is_tensor(x):
        return x if x.dtype == torch.int32 else x.to(torch.int32)
    x &= M32
    return x - (1 << 32) if x >= (1 << 31) else x


def _srl(h, s):
    """Logical right shift of int32 bit patterns."""
    return (h >> s) & ((1 << (32 - s)) - 1)


def hash2(a, b, seed):
    """A 32-bit integer hash of a, b and seed (integer tensors or ints; only their low 32 bits
    count) -> int64 values in [0, 2^32). Computed in int32, whose products wrap modulo 2^32: the
    same bits as the int64 arithmetic masked to 32 bits, at a fraction of its cost (64-bit
    integer products are emulated on GPUs)."""
    bh = _i32(b) * _i32(0x165667B1) if torch.is_tensor(b) else _i32(b * 0x165667B1)
    h = (_i32(a) * _i32(0x27D4EB2D)) ^ bh ^ _i32(seed)
    h = h ^ _srl(h, 15)
    h = h * _i32(0x2C1B3C6D)
    h = h ^ _srl(h, 12)
    h = h * _i32(0x297A2D39)
    return (h ^ _srl(h, 15)).to(torch.int64) & M32


def unit(h, k):
    return (hash2(h, k, 0x5BD1E995) >> 8).float() / float(1 << 24)


def colour(h, k):
    return torch.stack([0.02 + 0.88 * unit(h, k + i) ** 2 for i in range(3)], -1)


def value_noise(x, y, seed):
    fx0, fy0 = torch.floor(x), torch.floor(y)
    fx, fy = x - fx0, y - fy0
    sx, sy = fx * fx * (3 - 2 * fx), fy * fy * (3 - 2 * fy)
    ix, iy = fx0.long(), fy0.long()
    v = lambda dx, dy: unit(hash2(ix + dx, iy + dy, seed), 0)
    v00, v01 = v(0, 0), v(0, 1)
    top = v00 + (v(1, 0) - v00) * sx
    bot = v01 + (v(1, 1) - v01) * sx
    return top + (bot - top) * sy


# The seven families, each a function of one family's points (h: [M] long, x, y: [M] float;
# a, b its two colours; u(k) its k-th parameter) -> [M, 3] linear colour.
def _stripes(h, x, y, a, b, u):
    per, ang = 1.1 + 3.2 * u(0), math.pi * u(1)
    s = torch.remainder((x * torch.cos(ang) + y * torch.sin(ang)) / per, 1.0) < 0.5
    return torch.where(s.unsqueeze(-1), a, b)


def _checker(h, x, y, a, b, u):
    size = 0.8 + 4.5 * u(0) * u(1)
    s = torch.remainder(torch.floor(x / size) + torch.floor(y / size), 2.0) < 0.5
    return torch.where(s.unsqueeze(-1), a, b)


def _lines(h, x, y, a, b, u):
    sp, wd = 4.0 + 12.0 * u(0), 0.2 + 0.5 * u(1)
    s = (torch.remainder(x, sp) < wd) | (torch.remainder(y, sp) < wd)
    line = a * 0.4 + 0.55 * (0.3 + 1.7 * u(2)).unsqueeze(-1)  # some lines are HDR-bright
    return torch.where(s.unsqueeze(-1), line, b * 0.5)


def _glyphs(h, x, y, a, b, u):
    """5x7 bitmaps in 6x9 cells."""
    sc = 0.6 + 1.0 * u(0)
    gu, gv = x / sc, y / sc
    cx, cy = torch.floor(gu / 6), torch.floor(gv / 9)
    px, py = torch.floor(gu - cx * 6).long(), torch.floor(gv - cy * 9).long() - 1
    gh = hash2(cx.long(), cy.long(), h)
    col = torch.minimum(px, 4 - px).clamp(min=0)
    bit = (hash2(cx.long() * 31, cy.long(), h ^ 0xABCD) >> ((py.clamp(min=0) * 3 + col) % 32)) & 1
    ink = (gh % 6 != 0) & (px >= 0) & (px < 5) & (py >= 0) & (py < 7) & (bit == 1)
    return torch.where(ink.unsqueeze(-1), a * 0.2, b * 0.4 + 0.5)


def _noise(h, x, y, a, b, u):
    ns = 2.5 + 22.0 * u(0)
    n = 0.65 * value_noise(x / ns, y / ns, h) + 0.35 * value_noise(2.03 * x / ns + 17, 2.03 * y / ns - 9, h ^ 0x5BD1)
    return a + (b - a) * n.unsqueeze(-1)


def _sparkles(h, x, y, a, b, u):
    """A dark base with small HDR discs."""
    cell, rad, peak = 5.0 + 11.0 * u(0), 0.5 + 1.4 * u(1), 4.0 + 60.0 * u(2)
    qx, qy = torch.floor(x / cell), torch.floor(y / cell)
    sh = hash2(qx.long(), qy.long(), h)
    ox = (qx + 0.2 + 0.6 * unit(sh, 1)) * cell
    oy = (qy + 0.2 + 0.6 * unit(sh, 2)) * cell
    on = ((x - ox) ** 2 + (y - oy) ** 2 < rad * rad) & (sh % 3 != 0)
    spark = (peak * (0.2 + 0.8 * unit(sh, 3))).unsqueeze(-1) * (0.5 + colour(sh, 4))
    base = a * 0.1 * (0.5 + value_noise(x / 24, y / 24, h)).unsqueeze(-1)
    return torch.where(on.unsqueeze(-1), spark, base)


def _rings(h, x, y, a, b, u):
    rp = 1.4 + 2.6 * u(0)
    s = torch.remainder(torch.sqrt(x * x + y * y) / rp, 1.0) < 0.5
    return torch.where(s.unsqueeze(-1), a, b)


FAMILY_FNS = (_stripes, _checker, _lines, _glyphs, _noise, _sparkles, _rings)
assert len(FAMILY_FNS) == FAMILIES


def material(fam, h, x, y, cull=True):
    """fam, h: [...] long; x, y: [...] float (local units) -> [..., 3] linear colour. Each family
    is evaluated only at its own points (elementwise, so the values are those of evaluating every
    family everywhere and selecting, bit for bit, at a seventh of the work); cull=False does the
    latter (train/check_hazards.py compares the two)."""
    out = torch.zeros(*x.shape, 3, device=x.device)
    for k, fn in enumerate(FAMILY_FNS):
        sel = (fam == k).nonzero(as_tuple=True) if cull else (slice(None),)
        if cull and sel[0].numel() == 0:
            continue
        hk, xk, yk = h[sel], x[sel], y[sel]
        u = functools.cache(lambda i, hk=hk: unit(hk, 20 + i))  # a family reads some parameters twice
        val = fn(hk, xk, yk, colour(hk, 1), colour(hk, 11), u)
        out = out.index_put(sel, val) if cull else torch.where((fam == k).unsqueeze(-1), val, out)
    return out


def photo_material(h, x, y):
    """A photo-like texture (h: [...] long, x, y: [...] float, local units -> [..., 3] linear):
    fractal noise whose spectrum falls off roughly as natural images' do, warped by a second one
    (rock, bark, foliage, plaster), coloured along a two-colour ramp with a hue drift, and cut by
    soft cracks where a third noise crosses a level. Procedural, but with the statistics the other
    families lack: detail at every scale rather than one period."""
    u = lambda k: unit(h, 40 + k)
    scale = 6.0 + 30.0 * u(0)
    gain = 0.45 + 0.2 * u(1)

    def fbm(px, py, seed, octaves):
        v, amp, f, norm = torch.zeros_like(px), 1.0, 1.0, 0.0
        for o in range(octaves):
            v = v + amp * value_noise(px * f + 13.7 * o, py * f - 7.3 * o, seed + 977 * o)
            norm += amp
            amp, f = amp * gain, f * 2.03
        return v / norm

    px, py = x / scale, y / scale
    wx = fbm(px + 3.1, py, h ^ 0x1F2E, 3)
    wy = fbm(px, py - 5.7, h ^ 0x3C4D, 3)
    warp = 1.0 + 2.5 * u(2)
    n = fbm(px + warp * wx, py + warp * wy, h, 5)
    hue = fbm(px * 0.37 + 11.0, py * 0.37 - 3.0, h ^ 0x5E6F, 2)
    a, b, c = colour(h, 51), colour(h, 61), colour(h, 71)
    ramp = ((n - 0.25) / 0.5).clamp(0, 1).unsqueeze(-1)
    col = a + (b - a) * ramp
    col = col + (c - col) * (0.5 * hue.unsqueeze(-1))
    crack = fbm(px * 1.7 - 2.0, py * 1.7 + 9.0, h ^ 0x7A8B, 3)
    edge = ((crack - 0.5).abs() / (0.012 + 0.03 * u(3))).clamp(0, 1).unsqueeze(-1)
    return col * (0.35 + 0.65 * edge)


class SceneBatch:
    """S independent sequences, evaluated together. All parameters come from one seed."""

    def __init__(self, S, seed, device, out_size=(128, 128), objects=10, hazards=0.0, hazard_kinds=HAZARD_KINDS, cull=True):
        # cull: evaluate objects, materials, the light and the layers only where they can show
        # (the same values bit for bit, several times faster); False evaluates each everywhere and
        # selects, the straightforward form that train/check_hazards.py compares the culled one with.
        self.cull = cull
        g = torch.Generator().manual_seed(seed)
        r = lambda *shape: torch.rand(*shape, generator=g).to(device)
        self.S, self.device, self.out = S, device, out_size
        # Frames larger than 256 px hold proportionally more of the scene: objects and veils keep
        # their density per pixel (their count grows with the area, their offsets from the camera
        # with the side). At 256 px and below nothing changes (and no draw moves).
        self.spread = spread = max(1.0, min(out_size) / 256.0)
        objects = objects if spread == 1.0 else int(round(objects * spread * spread))
        self.seed = torch.randint(0, 2**31 - 1, (S,), generator=g).to(device)
        # camera: pan (sub-pixel to fast), wobble, zoom
        speed = torch.where(r(S) < 0.85, 0.05 + 1.8 * r(S), 1.8 + 2.5 * r(S))
        ang = 2 * math.pi * r(S)
        self.cam_start = 5000 * r(S, 2)
        self.cam_vel = torch.stack([speed * torch.cos(ang), speed * torch.sin(ang)], -1)
        self.wobble, self.wob_f = 2.5 * r(S, 2), 0.03 + 0.25 * r(S)
        self.zoom0 = 0.6 + 0.9 * r(S)
        self.zoom_rate = torch.where(r(S) < 0.5, 0.016 * (r(S) - 0.5), torch.zeros(S, device=device))
        # palette: a random non-empty subset of families per sequence
        pal = r(S, FAMILIES) < 0.55
        pal[torch.arange(S), (r(S) * FAMILIES).long().clamp(max=FAMILIES - 1)] = True
        self.palette = pal
        self.tile = 20 + 90 * r(S)
        # lighting change
        self.light_amp = torch.where(r(S) < 0.3, 0.35 * r(S), torch.zeros(S, device=device))
        self.light_w, self.light_ph = 0.05 + 0.3 * r(S), 2 * math.pi * r(S)
        # objects and particles (inactive slots have size 0)
        K = objects
        count = (r(S) * (K + 1)).long()
        active = torch.arange(K, device=device)[None, :] < count[:, None]
        small = r(S, K) < 0.3
        size = torch.where(small, 0.6 + 2.0 * r(S, K), 6 + 55 * r(S, K) ** 1.5) * active
        self.obj_size, self.obj_aspect, self.obj_disc = size, 0.35 + 0.9 * r(S, K), r(S, K) < 0.5
        self.obj_off = (r(S, K, 2) - 0.5) * torch.tensor([160.0, 160.0], device=device) * spread
        fast = torch.where(small, 4.0, 2.6)
        self.obj_vel = self.cam_vel[:, None, :] + fast[..., None] * (r(S, K, 2) - 0.5)
        self.obj_orbit, self.obj_orbit_f = 8 * r(S, K), 0.02 + 0.15 * r(S, K)
        self.obj_angle, self.obj_spin = 2 * math.pi * r(S, K), 0.06 * (r(S, K) - 0.5)
        self.obj_near = 0.2 + 0.75 * r(S, K)
        self.obj_fam = (r(S, K) * FAMILIES).long().clamp(max=FAMILIES - 1)
        self.obj_hash = torch.randint(0, 2**31 - 1, (S, K), generator=g).to(device)
        self.bg_near = 0.02 + 0.08 * r(S)
        # What motion vectors cannot describe (issue 13), each in a `hazards` fraction of the
        # sequences: a moving light with drifting blinds over the surfaces, translucent layers on
        # their own paths, objects that are screens whose pictures scroll (motion and depth stay
        # the opaque surface's); thin wires and fences in motion (geometry of their own); and
        # photo-like textures on some tiles and objects.
        # Drawn after everything above, so hazards=0 leaves every other value (and the golden
        # vectors' scenes) as they were.
        self.hazards = hazards
        if hazards > 0:
            self._draw_hazards(r, S, K, hazards)
            unknown = set(hazard_kinds) - set(HAZARD_KINDS)
            if unknown:
                raise ValueError(f"unknown hazard kinds {sorted(unknown)} (known: {', '.join(HAZARD_KINDS)})")
            # A kind left out is masked after every draw, so the others stay as they were.
            for kind, mask in (("light", self.hz_light), ("veil", self.hz_veil), ("screen", self.hz_screen), ("thin", self.hz_thin), ("photo", self.hz_photo)):
                if kind not in hazard_kinds:
                    mask[:] = False

    def _draw_hazards(self, r, S, K, frac):
        dev = self.device
        self.hz_light = r(S) < frac
        self.light_radius = torch.stack([20 + 15 * r(S), 12 + 12 * r(S)], -1)
        self.light_freq = (2.0 + 4.0 * r(S)) / self.light_radius[:, 0]
        self.light_phase = 2 * math.pi * r(S)
        self.light_sigma = 8 + 8 * r(S)
        self.light_peak = 3.0 + 7.0 * r(S)
        self.light_tint = 0.6 + 0.4 * r(S, 3)
        self.light_ambient = 0.25 + 0.15 * r(S)
        ba = math.pi * r(S)
        self.blind_dir = torch.stack([torch.cos(ba), torch.sin(ba)], -1)
        self.blind_period = 10 + 15 * r(S)
        self.blind_speed = 0.5 + 1.5 * r(S)
        self.blind_soft = 1.0 + 3.0 * r(S)
        self.blind_depth = torch.where(r(S) < 0.6, 0.6 + 0.3 * r(S), torch.zeros(S, device=dev))
        L = 2 if self.spread == 1.0 else int(round(2 * self.spread * self.spread))
        self.hz_veil = r(S) < frac
        self.veil_smoke = r(S, L) < 0.5
        self.veil_size = torch.stack([10 + 15 * r(S, L), 8 + 12 * r(S, L)], -1)
        self.veil_soft = 1.5 + 6.0 * r(S, L)
        self.veil_scale = 5 + 8 * r(S, L)
        self.veil_seed = (r(S, L) * (2**31 - 1)).long()
        self.veil_origin = self.cam_start[:, None, :] + (r(S, L, 2) - 0.5) * torch.tensor([80.0, 50.0], device=dev) * self.spread
        self.veil_vel = self.cam_vel[:, None, :] + 3.0 * (r(S, L, 2) - 0.5)
        self.veil_orbit, self.veil_orbit_f = 10 * r(S, L), 0.05 + 0.1 * r(S, L)
        self.veil_colour = 0.2 + 0.9 * r(S, L, 3)
        self.veil_alpha = 0.3 + 0.3 * r(S, L)
        self.hz_screen = (r(S) < frac)[:, None] & (r(S, K) < 0.5) & ~self.obj_disc
        speed, ang = 0.5 + 2.5 * r(S, K), 2 * math.pi * r(S, K)
        self.screen_scroll = torch.stack([speed * torch.cos(ang), speed * torch.sin(ang)], -1)
        self.screen_gain = 1.0 + 1.5 * r(S, K)
        # Thin features in motion: some object slots become wires (a bar narrower than an output
        # pixel) or fences (a grid of such bars), a third of them HDR, each with the slot's own
        # motion and depth, like the held-out `thin` kind. Unlike the hazards above they are
        # geometry: the motion vectors and the depth describe them.
        self.hz_thin = (r(S) < frac)[:, None] & (r(S, K) < 0.4) & ~self.hz_screen
        px = 1.0 / self.zoom0[:, None]  # world units per output pixel at the start
        self.thin_fence = r(S, K) < 0.3
        self.thin_bar = px * (0.2 + 0.6 * r(S, K))
        self.thin_len = px * (20 + 40 * r(S, K))
        self.thin_spacing = px * (3 + 6 * r(S, K))
        hdr = r(S, K) < 1 / 3
        bright = (4 + 16 * r(S, K))[..., None] * (0.5 + 0.5 * r(S, K, 3))
        dim = 0.02 + 0.6 * r(S, K, 3) ** 2
        self.thin_colour = torch.where(hdr[..., None], bright, dim)
        # Photo-like textures: in these sequences a half of the background tiles and of the
        # objects wear photo_material instead of their family's.
        self.hz_photo = r(S) < frac
        self.photo_obj = r(S, K) < 0.5

    def _thin_shape(self, at, ox, oy, shape):
        """An object slot's shape where it is a thin object: a wire along its local x, or a fence of
        bars; returns the shape and where the slot is thin (each like ox). at(param) gives the
        slot's parameter at each point."""
        thin = at(self.hz_thin)
        bar, ln = at(self.thin_bar), at(self.thin_len)
        wire = (ox.abs() < ln) & (oy.abs() < bar / 2)
        hw, hh, sp = 0.6 * ln, 0.4 * ln, at(self.thin_spacing)
        grid = (torch.remainder(ox + hw, sp) < bar) | (torch.remainder(oy + hh, sp) < bar)
        fence = (ox.abs() < hw) & (oy.abs() < hh) & grid
        return torch.where(thin, torch.where(at(self.thin_fence), fence, wire), shape), thin

    def _bound(self):
        """[S,K]: a radius around each object slot's centre (world units) outside which no point
        is inside it: a rectangle's corner (a disc's radius is smaller), a thin slot's wire or
        fence corner, with a margin for rounding. Inactive slots have size 0 (but may be thin)."""
        r = self.obj_size * torch.sqrt(1 + self.obj_aspect**2)
        if self.hazards > 0:
            r = torch.where(self.hz_thin, torch.maximum(r, torch.sqrt(self.thin_len**2 + self.thin_bar**2)), r)
        return r * 1.001 + 1e-3

    def _shade(self, color, w, t):
        """The light and the layers over the opaque colour [S,N,3] at world points w [S,N,2].
        Each is evaluated only in the sequences that have it (elementwise, and where a sequence
        has no layers their zero cover leaves its finite colour exactly as it was), so the values
        are those of evaluating both over every sequence, bit for bit."""
        smooth = lambda a, b, x: ((x - a) / (b - a)).clamp(0, 1) ** 2 * (3 - 2 * ((x - a) / (b - a)).clamp(0, 1))
        color = color.clone()
        pos, _ = self._cam(t)
        a = self.light_freq * t + self.light_phase
        lp = pos + self.light_radius * torch.stack([torch.cos(a), torch.sin(1.3 * a)], -1)
        every = torch.arange(self.S, device=self.device)
        ls = self.hz_light.nonzero(as_tuple=True)[0] if self.cull else every
        if ls.numel():
            g = lambda x: x[ls]  # a sequence parameter [S,...] for the lit sequences
            lw = w[ls]
            d2 = ((lw - g(lp)[:, None, :]) ** 2).sum(-1)
            spot = g(self.light_peak)[:, None] * torch.exp(-d2 / (2 * g(self.light_sigma)[:, None] ** 2))
            x = torch.remainder((lw * g(self.blind_dir)[:, None, :]).sum(-1) - g(self.blind_speed * t)[:, None], g(self.blind_period)[:, None])
            edge = (x - g(self.blind_period)[:, None] / 2).abs() - g(self.blind_period)[:, None] / 4
            soft = g(self.blind_soft)[:, None]
            blinds = 1 - g(self.blind_depth)[:, None] * (1 - smooth(-soft, soft, edge))
            lit = color[ls] * (g(self.light_ambient)[:, None, None] + (spot * blinds)[..., None] * g(self.light_tint)[:, None, :])
            color[ls] = torch.where(g(self.hz_light)[:, None, None], lit, color[ls])
        vs = self.hz_veil.nonzero(as_tuple=True)[0] if self.cull else every
        if vs.numel() == 0:
            return color
        g = lambda x: x[vs]  # a sequence parameter [S,...] for the sequences with layers
        vw, vc = w[vs], color[vs]
        for v in range(self.veil_alpha.shape[1]):
            a = self.veil_orbit_f[:, v] * t
            c = self.veil_origin[:, v] + self.veil_vel[:, v] * t + self.veil_orbit[:, v, None] * torch.stack([torch.cos(a), torch.sin(a)], -1)
            l = vw - g(c)[:, None, :]
            sz, sf = g(self.veil_size[:, v]), g(self.veil_soft[:, v, None])
            pane = 1 - smooth(-sf, sf, torch.maximum(l[..., 0].abs() - sz[:, None, 0], l[..., 1].abs() - sz[:, None, 1]))
            sc = g(self.veil_scale[:, v, None])
            n = value_noise(l[..., 0] / sc, l[..., 1] / sc, g(self.veil_seed[:, v, None]))
            smoke = smooth(0.5, 0.75, n)
            cover = torch.where(g(self.veil_smoke[:, v, None]), smoke, pane)
            alpha = (g(self.veil_alpha[:, v, None]) * cover * g(self.hz_veil)[:, None])[..., None]
            vc = vc + (g(self.veil_colour[:, v, None, :]) - vc) * alpha
        color[vs] = vc
        return color

    def _cam(self, t):
        w = torch.sin(self.wob_f * t)
        c = torch.cos(0.7 * self.wob_f * t)
        pos = self.cam_start + self.cam_vel * t + self.wobble * torch.stack([w, c], -1)
        return pos, self.zoom0 * torch.exp(self.zoom_rate * t)

    def _obj_pos(self, t):
        a = self.obj_orbit_f * t
        return self.cam_start[:, None, :] + self.obj_off + self.obj_vel * t + self.obj_orbit[..., None] * torch.stack([torch.cos(a), torch.sin(a)], -1)

    def hit(self, p, t):
        """p [S,N,2] screen (output px) at frame t -> colour [S,N,3], near [S,N], prev [S,N,2].
        Geometry first (which surface covers each point), then one material evaluation per point."""
        W, H = self.out
        centre = torch.tensor([W / 2, H / 2], device=self.device)
        pos, zoom = self._cam(t)
        w = (p - centre) / zoom[:, None, None] + pos[:, None, :]
        ppos, pzoom = self._cam(t - 1)

        def to_prev(q, idx=None):
            """World points -> their screen positions a frame earlier: q [S,N,2], or points [M,2]
            gathered from sequences idx [M]."""
            if idx is None:
                return (q - ppos[:, None, :]) * pzoom[:, None, None] + centre
            return (q - ppos[idx]) * pzoom[idx, None] + centre

        # background tiles
        tx, ty = torch.floor(w[..., 0] / self.tile[:, None]).long(), torch.floor(w[..., 1] / self.tile[:, None]).long()
        mh = hash2(tx, ty, self.seed[:, None])
        allowed = self.palette.long().cumsum(1)  # k-th allowed family
        k = (mh % allowed[:, -1:]) + 1
        fam = torch.searchsorted(allowed.contiguous(), k.contiguous())
        lx, ly = w[..., 0].clone(), w[..., 1].clone()  # (written in place below)
        near = self.bg_near[:, None].expand_as(lx).clone()
        prev = to_prev(w)
        gain = torch.ones_like(lx)
        solid = torch.full((*lx.shape, 3), -1.0, device=self.device)  # a thin object's colour where >= 0
        if self.hazards > 0:
            photo = self.hz_photo[:, None] & (mh % 2 == 0)  # background tiles
        # objects: the nearest one containing the point wins. Each is evaluated only at the points
        # within its bounding square (a few per cent of a frame; the rest cannot be inside it), by
        # the same elementwise operations as over the whole frame, so every value is the one the
        # whole-frame evaluation gives, bit for bit (at 512 px a frame holds 40 object slots).
        op, opp = self._obj_pos(t), self._obj_pos(t - 1)
        rot, prot = self.obj_angle + self.obj_spin * t, self.obj_angle + self.obj_spin * (t - 1)
        bound = self._bound() if self.cull else torch.full_like(self.obj_size, math.inf)
        for o in range(self.obj_size.shape[1]):
            d = w - op[:, None, o]
            si, ni = ((d.abs() <= bound[:, o, None, None]).all(-1)).nonzero(as_tuple=True)
            if si.numel() == 0:
                continue
            at = lambda x: x[si, o]  # slot o's parameter [S,K,...] at each of those points
            d = d[si, ni]
            cs, sn = torch.cos(-rot[:, o])[si], torch.sin(-rot[:, o])[si]
            ox, oy = cs * d[..., 0] - sn * d[..., 1], sn * d[..., 0] + cs * d[..., 1]
            sz = at(self.obj_size)
            disc = (ox * ox + oy * oy) < sz * sz
            rect = (ox.abs() < sz) & (oy.abs() < sz * at(self.obj_aspect))
            shape = torch.where(at(self.obj_disc), disc, rect)
            if self.hazards > 0:
                shape, thin = self._thin_shape(at, ox, oy, shape)
            inside = shape & (at(self.obj_near) > near[si, ni])
            cp, sp = torch.cos(prot[:, o])[si], torch.sin(prot[:, o])[si]
            wp = at(opp) + torch.stack([cp * ox - sp * oy, sp * ox + cp * oy], -1)
            fam[si, ni] = torch.where(inside, at(self.obj_fam), fam[si, ni])
            mh[si, ni] = torch.where(inside, at(self.obj_hash), mh[si, ni])
            if self.hazards > 0:
                # A screen's picture scrolls in its own coordinates; its motion is the object's.
                scr = at(self.hz_screen)
                scroll = at(self.screen_scroll)
                ox = torch.where(scr, ox + scroll[:, 0] * t, ox)
                oy = torch.where(scr, oy + scroll[:, 1] * t, oy)
                gain[si, ni] = torch.where(inside & scr, at(self.screen_gain), torch.where(inside, 1.0, gain[si, ni]))
                solid[si, ni] = torch.where((inside & thin)[..., None], at(self.thin_colour), torch.where(inside[..., None], -1.0, solid[si, ni]))
                photo[si, ni] = torch.where(inside, self.hz_photo[si] & at(self.photo_obj), photo[si, ni])
            lx[si, ni], ly[si, ni] = torch.where(inside, ox, lx[si, ni]), torch.where(inside, oy, ly[si, ni])
            near[si, ni] = torch.where(inside, at(self.obj_near), near[si, ni])
            prev[si, ni] = torch.where(inside[..., None], to_prev(wp, si), prev[si, ni])
        color = material(fam, mh, lx, ly, self.cull)
        if self.hazards > 0:
            if bool(photo.any()):
                # Only where it shows (a few per cent of the points): its 16 noise octaves over
                # every point made the hazard data 2.6x slower to generate. Elementwise, so the
                # values are those of the whole-tensor evaluation, bit for bit.
                sel = photo.nonzero(as_tuple=True)
                color = color.index_put(sel, photo_material(mh[sel], lx[sel], ly[sel]))
            color = torch.where(solid[..., :1] >= 0, solid, color)
        light = 1 + self.light_amp * torch.sin(self.light_w * t + self.light_ph)
        color = color * light[:, None, None]
        if self.hazards > 0:
            color = self._shade(color * gain[..., None], w, t)
        return color, near, prev


def halton(i, b):
    f, r = 1.0, 0.0
    while i > 0:
        f /= b
        r += f * (i % b)
        i //= b
    return r


def jitter(t, period):
    i = t % period + 1
    return halton(i, 2) - 0.5, halton(i, 3) - 0.5


def render_sequence(scenes: SceneBatch, ratio, frames, spp=16, t0=0, jitter_phase=0):
    """-> dict of stacked frames: color [T,S,4,rh,rw], motion [T,S,2,rh,rw], depth [T,S,1,rh,rw],
    jitter [T,S,2], reference [T,S,4,H,W] (all float32 on the scenes' device). jitter_phase: where in
    the jitter period frame 0 falls, one int for the batch or one per sequence ([S] ints)."""
    W, H = scenes.out
    rw, rh = max(1, round(W / ratio)), max(1, round(H / ratio))
    period = max(8, math.ceil(8 * ratio * ratio))
    dev, S = scenes.device, scenes.S
    ys, xs = torch.meshgrid(torch.arange(rh, device=dev, dtype=torch.float32), torch.arange(rw, device=dev, dtype=torch.float32), indexing="ij")
    n = math.ceil(math.sqrt(spp))
    gy, gx = torch.meshgrid(torch.arange(H, device=dev, dtype=torch.float32), torch.arange(W, device=dev, dtype=torch.float32), indexing="ij")
    sidx = torch.arange(n * n, device=dev, dtype=torch.float32).view(-1, 1, 1)
    out = dict(color=[], motion=[], depth=[], jitter=[], reference=[])
    g = torch.Generator(device=dev).manual_seed(1234 + t0)
    table = torch.tensor([jitter(i, period) for i in range(period)], device=dev)  # [period, 2]
    phase = torch.as_tensor(jitter_phase, device=dev).long().expand(S)
    for ti in range(frames):
        t = float(t0 + ti)
        j = table[(ti + phase) % period]  # [S, 2]
        jx, jy = j[:, 0].view(S, 1, 1), j[:, 1].view(S, 1, 1)
        p = torch.stack([(xs + 0.5 + jx) * (W / rw), (ys + 0.5 + jy) * (H / rh)], -1).view(S, -1, 2)
        c, near, prev = scenes.hit(p, torch.tensor(t, device=dev))
        mot = (prev - p) * torch.tensor([rw / W, rh / H], device=dev)
        out["color"].append(torch.cat([c, torch.ones_like(c[..., :1])], -1).view(S, rh, rw, 4).permute(0, 3, 1, 2))
        out["motion"].append(mot.view(S, rh, rw, 2).permute(0, 3, 1, 2))
        out["depth"].append(near.view(S, 1, rh, rw))
        out["jitter"].append(j)
        o = torch.rand(n * n, 2, H, W, device=dev, generator=g)
        q = torch.stack([gx + (torch.remainder(sidx, n) + o[:, 0]) / n, gy + (torch.floor(sidx / n) + o[:, 1]) / n], -1)
        cs = scenes.hit(q.view(1, -1, 2).expand(S, -1, -1), torch.tensor(t, device=dev))[0]
        acc = cs.view(S, n * n, H * W, 3).sum(1)
        ref = (acc / (n * n)).view(S, H, W, 3).permute(0, 3, 1, 2)
        out["reference"].append(torch.cat([ref, torch.ones_like(ref[:, :1])], 1))
    return {k: torch.stack(v) for k, v in out.items()}
