"""Training scenes generated on the GPU, in the spirit of `tessel scene` and broader: a textured plane
under a panning, zooming camera, moving and spinning objects and particles (disocclusion), thin
lines, fine periodic texture, glyphs, HDR sparkles, lighting changes. Exact motion and depth; ground
truth supersampled at output size. Its hashing differs from the Rust generator's, so no sequence of
`tessel scene` is ever seen in training."""
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
    top = v(0, 0) + (v(1, 0) - v(0, 0)) * sx
    bot = v(0, 1) + (v(1, 1) - v(0, 1)) * sx
    return top + (bot - top) * sy


def material(fam, h, x, y):
    """fam, h: [...] long; x, y: [...] float (local units) -> [..., 3] linear colour."""
    a, b = colour(h, 1), colour(h, 11)
    u = lambda k: unit(h, 20 + k)
    sel = lambda m, p, q: torch.where(m.unsqueeze(-1), p, q)
    out = torch.zeros(*x.shape, 3, device=x.device)
    # 0 stripes
    per, ang = 1.1 + 3.2 * u(0), math.pi * u(1)
    s = torch.remainder((x * torch.cos(ang) + y * torch.sin(ang)) / per, 1.0) < 0.5
    out = torch.where((fam == 0).unsqueeze(-1), sel(s, a, b), out)
    # 1 checker
    size = 0.8 + 4.5 * u(0) * u(1)
    s = torch.remainder(torch.floor(x / size) + torch.floor(y / size), 2.0) < 0.5
    out = torch.where((fam == 1).unsqueeze(-1), sel(s, a, b), out)
    # 2 thin lines
    sp, wd = 4.0 + 12.0 * u(0), 0.2 + 0.5 * u(1)
    s = (torch.remainder(x, sp) < wd) | (torch.remainder(y, sp) < wd)
    line = a * 0.4 + 0.55 * (0.3 + 1.7 * u(2)).unsqueeze(-1)  # some lines are HDR-bright
    out = torch.where((fam == 2).unsqueeze(-1), sel(s, line, b * 0.5), out)
    # 3 glyphs: 5x7 bitmaps in 6x9 cells
    sc = 0.6 + 1.0 * u(0)
    gu, gv = x / sc, y / sc
    cx, cy = torch.floor(gu / 6), torch.floor(gv / 9)
    px, py = torch.floor(gu - cx * 6).long(), torch.floor(gv - cy * 9).long() - 1
    gh = hash2(cx.long(), cy.long(), h)
    col = torch.minimum(px, 4 - px).clamp(min=0)
    bit = (hash2(cx.long() * 31, cy.long(), h ^ 0xABCD) >> ((py.clamp(min=0) * 3 + col) % 32)) & 1
    ink = (gh % 6 != 0) & (px >= 0) & (px < 5) & (py >= 0) & (py < 7) & (bit == 1)
    out = torch.where((fam == 3).unsqueeze(-1), sel(ink, a * 0.2, b * 0.4 + 0.5), out)
    # 4 noise
    ns = 2.5 + 22.0 * u(0)
    n = 0.65 * value_noise(x / ns, y / ns, h) + 0.35 * value_noise(2.03 * x / ns + 17, 2.03 * y / ns - 9, h ^ 0x5BD1)
    out = torch.where((fam == 4).unsqueeze(-1), a + (b - a) * n.unsqueeze(-1), out)
    # 5 sparkles: dark base, small HDR discs
    cell, rad, peak = 5.0 + 11.0 * u(0), 0.5 + 1.4 * u(1), 4.0 + 60.0 * u(2)
    qx, qy = torch.floor(x / cell), torch.floor(y / cell)
    sh = hash2(qx.long(), qy.long(), h)
    ox = (qx + 0.2 + 0.6 * unit(sh, 1)) * cell
    oy = (qy + 0.2 + 0.6 * unit(sh, 2)) * cell
    on = ((x - ox) ** 2 + (y - oy) ** 2 < rad * rad) & (sh % 3 != 0)
    spark = (peak * (0.2 + 0.8 * unit(sh, 3))).unsqueeze(-1) * (0.5 + colour(sh, 4))
    base = a * 0.1 * (0.5 + value_noise(x / 24, y / 24, h)).unsqueeze(-1)
    out = torch.where((fam == 5).unsqueeze(-1), sel(on, spark, base), out)
    # 6 rings
    rp = 1.4 + 2.6 * u(0)
    s = torch.remainder(torch.sqrt(x * x + y * y) / rp, 1.0) < 0.5
    out = torch.where((fam == 6).unsqueeze(-1), sel(s, a, b), out)
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

    def __init__(self, S, seed, device, out_size=(128, 128), objects=10, hazards=0.0, hazard_kinds=HAZARD_KINDS):
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

    def _thin_shape(self, o, ox, oy, shape):
        """Object slot o's shape where it is a thin object: a wire along its local x, or a fence of
        bars; returns the shape and where the slot is thin ([S, N] each)."""
        thin = self.hz_thin[:, o, None].expand_as(shape)
        bar, ln = self.thin_bar[:, o, None], self.thin_len[:, o, None]
        wire = (ox.abs() < ln) & (oy.abs() < bar / 2)
        hw, hh, sp = 0.6 * ln, 0.4 * ln, self.thin_spacing[:, o, None]
        grid = (torch.remainder(ox + hw, sp) < bar) | (torch.remainder(oy + hh, sp) < bar)
        fence = (ox.abs() < hw) & (oy.abs() < hh) & grid
        return torch.where(thin, torch.where(self.thin_fence[:, o, None], fence, wire), shape), thin

    def _shade(self, color, w, t):
        """The light and the layers over the opaque colour [S,N,3] at world points w [S,N,2]."""
        smooth = lambda a, b, x: ((x - a) / (b - a)).clamp(0, 1) ** 2 * (3 - 2 * ((x - a) / (b - a)).clamp(0, 1))
        pos, _ = self._cam(t)
        a = self.light_freq * t + self.light_phase
        lp = pos + self.light_radius * torch.stack([torch.cos(a), torch.sin(1.3 * a)], -1)
        d2 = ((w - lp[:, None, :]) ** 2).sum(-1)
        spot = self.light_peak[:, None] * torch.exp(-d2 / (2 * self.light_sigma[:, None] ** 2))
        x = torch.remainder((w * self.blind_dir[:, None, :]).sum(-1) - (self.blind_speed * t)[:, None], self.blind_period[:, None])
        edge = (x - self.blind_period[:, None] / 2).abs() - self.blind_period[:, None] / 4
        soft = self.blind_soft[:, None]
        blinds = 1 - self.blind_depth[:, None] * (1 - smooth(-soft, soft, edge))
        lit = color * (self.light_ambient[:, None, None] + (spot * blinds)[..., None] * self.light_tint[:, None, :])
        color = torch.where(self.hz_light[:, None, None], lit, color)
        for v in range(self.veil_alpha.shape[1]):
            a = self.veil_orbit_f[:, v] * t
            c = self.veil_origin[:, v] + self.veil_vel[:, v] * t + self.veil_orbit[:, v, None] * torch.stack([torch.cos(a), torch.sin(a)], -1)
            l = w - c[:, None, :]
            sz, sf = self.veil_size[:, v], self.veil_soft[:, v, None]
            pane = 1 - smooth(-sf, sf, torch.maximum(l[..., 0].abs() - sz[:, None, 0], l[..., 1].abs() - sz[:, None, 1]))
            sc = self.veil_scale[:, v, None]
            n = value_noise(l[..., 0] / sc, l[..., 1] / sc, self.veil_seed[:, v, None])
            smoke = smooth(0.5, 0.75, n)
            cover = torch.where(self.veil_smoke[:, v, None], smoke, pane)
            alpha = (self.veil_alpha[:, v, None] * cover * self.hz_veil[:, None])[..., None]
            color = color + (self.veil_colour[:, v, None, :] - color) * alpha
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
        to_prev = lambda q: (q - ppos[:, None, :]) * pzoom[:, None, None] + centre
        # background tiles
        tx, ty = torch.floor(w[..., 0] / self.tile[:, None]).long(), torch.floor(w[..., 1] / self.tile[:, None]).long()
        mh = hash2(tx, ty, self.seed[:, None])
        allowed = self.palette.long().cumsum(1)  # k-th allowed family
        k = (mh % allowed[:, -1:]) + 1
        fam = torch.searchsorted(allowed.contiguous(), k.contiguous())
        lx, ly = w[..., 0], w[..., 1]
        near = self.bg_near[:, None].expand_as(lx).clone()
        prev = to_prev(w)
        gain = torch.ones_like(lx)
        solid = torch.full((*lx.shape, 3), -1.0, device=self.device)  # a thin object's colour where >= 0
        if self.hazards > 0:
            photo = self.hz_photo[:, None] & (mh % 2 == 0)  # background tiles
        # objects: the nearest one containing the point wins
        op, opp = self._obj_pos(t), self._obj_pos(t - 1)
        rot, prot = self.obj_angle + self.obj_spin * t, self.obj_angle + self.obj_spin * (t - 1)
        for o in range(self.obj_size.shape[1]):
            d = w - op[:, None, o]
            cs, sn = torch.cos(-rot[:, o])[:, None], torch.sin(-rot[:, o])[:, None]
            ox, oy = cs * d[..., 0] - sn * d[..., 1], sn * d[..., 0] + cs * d[..., 1]
            sz = self.obj_size[:, o, None]
            disc = (ox * ox + oy * oy) < sz * sz
            rect = (ox.abs() < sz) & (oy.abs() < sz * self.obj_aspect[:, o, None])
            shape = torch.where(self.obj_disc[:, o, None], disc, rect)
            if self.hazards > 0:
                shape, thin = self._thin_shape(o, ox, oy, shape)
            inside = shape & (self.obj_near[:, o, None] > near)
            cp, sp = torch.cos(prot[:, o])[:, None], torch.sin(prot[:, o])[:, None]
            wp = opp[:, None, o] + torch.stack([cp * ox - sp * oy, sp * ox + cp * oy], -1)
            fam = torch.where(inside, self.obj_fam[:, o, None], fam)
            mh = torch.where(inside, self.obj_hash[:, o, None], mh)
            if self.hazards > 0:
                # A screen's picture scrolls in its own coordinates; its motion is the object's.
                scr = self.hz_screen[:, o, None]
                ox = torch.where(scr, ox + self.screen_scroll[:, o, 0, None] * t, ox)
                oy = torch.where(scr, oy + self.screen_scroll[:, o, 1, None] * t, oy)
                gain = torch.where(inside & scr, self.screen_gain[:, o, None], torch.where(inside, 1.0, gain))
                solid = torch.where((inside & thin)[..., None], self.thin_colour[:, o, None, :], torch.where(inside[..., None], -1.0, solid))
                photo = torch.where(inside, self.hz_photo[:, None] & self.photo_obj[:, o, None], photo)
            lx, ly = torch.where(inside, ox, lx), torch.where(inside, oy, ly)
            near = torch.where(inside, self.obj_near[:, o, None].expand_as(near), near)
            prev = torch.where(inside[..., None], to_prev(wp), prev)
        color = material(fam, mh, lx, ly)
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
