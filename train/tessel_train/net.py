"""The network of docs/NETWORK.md §4 with the package's tensor names (state_dict keys)."""
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKEN = 4
WINDOW = 8
HEAD_DIM = 16
PIXEL_FEATURES = 16
HEAD_CHANNELS = 8
PHASES = 8

# Head layouts: which of the 8 head channels carry the residual, a per-pixel choice of the dilated
# history and the feature memory. "rgb" is the contract's (docs/NETWORK.md §5); the others are a
# training experiment (train.py --exp-layout; no backend computes them): a luma residual (one
# channel scaling the local range of all three) frees two channels for a reprojection choice and
# more memory. Every feature but the memory is the contract's, so a layout with m memory channels
# has 14 + m pixel features.
# The thirty-third session's two spend the freed channels on the current frame's gather instead
# (stages.gather_weights): "luma_shift" moves the Gaussian's centre by up to GATHER_SHIFT render px
# per axis (channels 4, 5), "luma_aniso" stretches it along any direction (its inverse covariance
# I + [[u, v], [v, -u]] over 2 sigma^2, u and v up to GATHER_ANISO), so that at an edge the gather
# can keep to one side or run along it. Their rows start at zero and barely moved in training (the
# same shift or stretch is right on both sides of an edge with opposite signs, which no token feature
# tells yet), so "luma_edge" takes the direction from the 3 x 3 itself: channel 4 stretches the
# Gaussian along the local luma edge by up to GATHER_ANISO, channel 5 moves its centre along the luma
# gradient by up to GATHER_SHIFT render px (both scaled by the gradient's strength, so nothing moves
# in a flat region); "luma_edge_stretch" has the stretch alone.
LAYOUTS = {
    "rgb": dict(residual=(3, 4, 5), choice=None, memory=(6, 7)),
    "luma_choice": dict(residual=(3,), choice=4, memory=(6, 7)),
    "luma_mem4": dict(residual=(3,), choice=None, memory=(6, 7, 4, 5)),
    "luma_choice_mem3": dict(residual=(3,), choice=4, memory=(6, 7, 5)),
    "luma_shift": dict(residual=(3,), choice=None, memory=(6, 7), gather="shift"),
    "luma_aniso": dict(residual=(3,), choice=None, memory=(6, 7), gather="aniso"),
    "luma_edge": dict(residual=(3,), choice=None, memory=(6, 7), gather="edge"),
    "luma_edge_stretch": dict(residual=(3,), choice=None, memory=(6, 7), gather="edge_stretch"),
}
GATHER_EDGE_EPS = 0.02  # the luma gradient (tonemapped luma per render px) at which the edge's weight is 1/sqrt(2)
GATHER_SHIFT = 1.0
GATHER_ANISO = 0.9


# Pixel features beyond the contract's (an experiment: stages.extra_features computes them, after
# the contract's and the memory), with how many channels each adds:
# - phase: how far the history sample falls from the history's pixel centres, per axis,
#   0.5 - |t - 0.5| for t the fractional part of p' - 0.5 (0 on a centre, 0.5 midway: where the
#   cubic resampling blurs most);
# - motion: |m| / (1 + |m|), the nearest sample's motion in output px;
# - spread: the luma deviation over the 3 x 3 (what the classical TAAU clips with);
# - taau: the classical TAAU's output for the pixel this frame (tessel_train/taau.py, run beside the
#   network on the same frames), tonemapped;
# - taau_state: its accumulated sample count and thin-feature lock after this frame.
EXTRA_FEATURES = {"phase": 2, "motion": 1, "spread": 1, "taau": 3, "taau_state": 2}
TAAU_FEATURES = ("taau", "taau_state")

# Issue 13's cost budget: FLOPs per evaluation at 3840 x 2160 (docs/NETWORK.md §9).
FLOP_BUDGET_4K = 80e9
# The fields of a network's shape (train.py --arch; the rest of a Config are its flags).
SHAPE_FIELDS = ("channels", "encoder_depths", "bottleneck_depth", "decoder_depths", "mlp_ratio")


@dataclass
class Config:
    channels: list = field(default_factory=lambda: [32, 48, 96])
    encoder_depths: list = field(default_factory=lambda: [1, 2])
    bottleneck_depth: int = 2
    decoder_depths: list = field(default_factory=lambda: [1, 2])
    mlp_ratio: int = 2
    pixel_embed: int = 8
    pixel_head: bool = False  # a per-pixel linear map of the pixel embedding added to the head (docs/NETWORK.md)
    accumulate: bool = False  # the reconstruction keeps an accumulation count and clips to mean +- deviation (§6)
    history_a: float = -0.5  # Keys' a of the history kernel (§2): -0.5 is Catmull-Rom, lower is sharper
    layout: str = "rgb"  # the head layout (LAYOUTS); anything but "rgb" is an experiment
    pixel_mlp: int = 0  # experiment (no backend computes it): hidden width of a per-pixel MLP refining the head
    extra_features: tuple = ()  # experiment (no backend computes them): EXTRA_FEATURES appended to the pixel features
    # Experiment (no backend computes it): a ninth head channel per pixel mixes the classical TAAU's
    # output into the reconstruction's, out + sigmoid(h8) (taau - out), before the history is written.
    taau_mix: bool = False

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise ValueError(f"config layout {self.layout!r} is not one of {', '.join(LAYOUTS)}")
        self.extra_features = tuple(self.extra_features)
        bad = [f for f in self.extra_features if f not in EXTRA_FEATURES]
        if bad:
            raise ValueError(f"config extra_features {bad} are not among {', '.join(EXTRA_FEATURES)}")

    @property
    def memory_channels(self):
        return len(LAYOUTS[self.layout]["memory"])

    @property
    def pixel_features(self):
        return PIXEL_FEATURES - 2 + self.memory_channels + sum(EXTRA_FEATURES[f] for f in self.extra_features)

    @property
    def in_contract(self):
        """Whether every backend computes this network (no training-only head layout or part)."""
        return self.layout == "rgb" and not self.pixel_mlp and not self.extra_features and not self.taau_mix

    @property
    def uses_taau(self):
        """Whether a step runs the classical TAAU beside the network (its output mixed in or seen)."""
        return self.taau_mix or any(f in TAAU_FEATURES for f in self.extra_features)

    @property
    def levels(self):
        return len(self.channels)

    @property
    def alignment(self):
        return WINDOW << (self.levels - 1)

    def to_json(self):
        d = dict(channels=self.channels, encoder_depths=self.encoder_depths, bottleneck_depth=self.bottleneck_depth,
                 decoder_depths=self.decoder_depths, mlp_ratio=self.mlp_ratio, pixel_embed=self.pixel_embed)
        if self.pixel_head:  # absent means false (docs/FORMATS.md)
            d["pixel_head"] = True
        if self.accumulate:
            d["accumulate"] = True
        if self.history_a != -0.5:  # absent means Catmull-Rom
            d["history_a"] = self.history_a
        if self.layout != "rgb":  # an experiment: no backend loads such a package
            d["layout"] = self.layout
        if self.pixel_mlp:  # an experiment: no backend loads such a package
            d["pixel_mlp"] = self.pixel_mlp
        if self.extra_features:  # an experiment: no backend loads such a package
            d["extra_features"] = list(self.extra_features)
        if self.taau_mix:  # an experiment: no backend loads such a package
            d["taau_mix"] = True
        return d

    @staticmethod
    def from_json(d):
        return Config(**d)

    def blocks(self):
        """(name prefix, level, index) in execution order; the layer number is the position."""
        out = []
        for lvl, d in enumerate(self.encoder_depths):
            out += [(f"enc{lvl}", lvl, i) for i in range(d)]
        out += [("mid", self.levels - 1, i) for i in range(self.bottleneck_depth)]
        for lvl in reversed(range(self.levels - 1)):
            out += [(f"dec{lvl}", lvl, i) for i in range(self.decoder_depths[lvl])]
        return out

    def flops(self, w, h):
        pw, ph = padded_grid(w, h, self.alignment)
        t = lambda l: (pw >> l) * (ph >> l)
        f = 2 * pw * ph * 16 * self.pixel_features * self.pixel_embed
        f += 2 * t(0) * 16 * self.pixel_embed * self.channels[0] + 2 * t(0) * self.channels[0] * 16 * HEAD_CHANNELS
        if self.pixel_head:
            f += 2 * pw * ph * 16 * self.pixel_embed * HEAD_CHANNELS
        if self.pixel_mlp:
            f += 2 * pw * ph * 16 * ((self.pixel_embed + HEAD_CHANNELS) * self.pixel_mlp + self.pixel_mlp * HEAD_CHANNELS)
        if self.taau_mix:  # the mix channel from the head's input and from each pixel's embedding
            f += 2 * t(0) * self.channels[0] * 16 + 2 * pw * ph * 16 * self.pixel_embed
        for l in range(1, self.levels):
            f += 2 * 2 * t(l) * 4 * self.channels[l - 1] * self.channels[l]
        for _, lvl, _ in self.blocks():
            c = self.channels[lvl]
            f += 2 * t(lvl) * (4 * c * c + 2 * self.mlp_ratio * c * c) + 2 * t(lvl) * 2 * 64 * c
        return f


def shaped_config(shape, over_budget=False, **flags):
    """A Config of `shape` (SHAPE_FIELDS; those absent keep the default's) with `flags`. ValueError
    names what the kernels cannot compute or the budget does not allow: each width a multiple of
    HEAD_DIM with at most 8 heads, at least one block in every encoder level, decoder level and the
    bottleneck (the fused kernels carry the merges, the embedding and the head in a level's first or
    last block), and at most FLOP_BUDGET_4K unless `over_budget` (train.py --exp-over-budget: a
    capacity test, not a model to ship)."""
    unknown = sorted(set(shape) - set(SHAPE_FIELDS))
    if unknown:
        raise ValueError(f"unknown shape fields {unknown} (the fields are {', '.join(SHAPE_FIELDS)})")
    cfg = Config(**shape, **flags)
    ch, levels = cfg.channels, len(cfg.channels)
    if levels < 2 or any(not isinstance(c, int) or c % HEAD_DIM or not HEAD_DIM <= c <= 8 * HEAD_DIM for c in ch):
        raise ValueError(f"channels {ch}: two levels or more, each a multiple of {HEAD_DIM} from {HEAD_DIM} to {8 * HEAD_DIM}")
    if len(cfg.encoder_depths) != levels - 1 or len(cfg.decoder_depths) != levels - 1:
        raise ValueError(f"encoder_depths and decoder_depths need {levels - 1} entries for {levels} levels")
    depths = list(cfg.encoder_depths) + list(cfg.decoder_depths) + [cfg.bottleneck_depth]
    if any(not isinstance(d, int) or d < 1 for d in depths):
        raise ValueError(f"depths {cfg.encoder_depths} / {cfg.bottleneck_depth} / {cfg.decoder_depths}: every one a whole number from 1")
    if not isinstance(cfg.mlp_ratio, int) or not 1 <= cfg.mlp_ratio <= 4:
        raise ValueError(f"mlp_ratio {cfg.mlp_ratio}: a whole number from 1 to 4")
    f = cfg.flops(3840, 2160)
    if f > FLOP_BUDGET_4K and not over_budget:
        raise ValueError(f"{f / 1e9:.2f} GFLOP at 3840x2160, over the budget of {FLOP_BUDGET_4K / 1e9:.0f}")
    return cfg


def is_named(name, prefixes):
    """Whether a tensor name is one of `prefixes` or lies under one (`enc0.0` holds `enc0.0.qkv.weight`)."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def take_matching(net, src, keep_fresh=()):
    """train.py --arch-from: copies into `net` every tensor of `src` (another network, of another
    shape) whose name and shape it shares, but those named by `keep_fresh` (--arch-fresh); the
    others keep their values (a narrower level's blocks, its embedding and head). Returns the names
    of the tensors not copied."""
    theirs = src.state_dict()
    fresh = []
    with torch.no_grad():
        for name, t in net.state_dict().items():
            if name in theirs and theirs[name].shape == t.shape and not is_named(name, keep_fresh):
                t.copy_(theirs[name])
            else:
                fresh.append(name)
    return fresh


def padded_grid(W, H, alignment):
    """Level-0 token grid (width, height): ceil(size / 4) rounded up to the alignment."""
    tw, th = -(-W // TOKEN), -(-H // TOKEN)
    return -(-tw // alignment) * alignment, -(-th // alignment) * alignment


def window_shift(layer, phase):
    p = phase % PHASES
    return (3 * p + 4 * layer) % WINDOW, (5 * p + 4 * layer) % WINDOW


def rpb_index():
    i = torch.arange(64)
    yi, xi = i // 8, i % 8
    return (yi[:, None] - yi[None, :] + 7) * 15 + (xi[:, None] - xi[None, :] + 7)


class Block(nn.Module):
    def __init__(self, c, mlp_ratio, layer):
        super().__init__()
        self.c, self.heads, self.layer = c, c // HEAD_DIM, layer
        self.norm1 = nn.LayerNorm(c, eps=1e-5)
        self.qkv = nn.Linear(c, 3 * c)
        self.rpb = nn.Parameter(torch.zeros(self.heads, 225))
        self.proj = nn.Linear(c, c)
        self.norm2 = nn.LayerNorm(c, eps=1e-5)
        self.fc1 = nn.Linear(c, mlp_ratio * c)
        self.fc2 = nn.Linear(mlp_ratio * c, c)
        self.register_buffer("rpb_idx", rpb_index(), persistent=False)

    def attention(self, x, phase):
        b, h, w, c = x.shape
        sx, sy = window_shift(self.layer, phase)
        qkv = torch.roll(self.qkv(x), shifts=(sy, sx), dims=(1, 2))
        qkv = qkv.view(b, h // 8, 8, w // 8, 8, 3, self.heads, HEAD_DIM)
        qkv = qkv.permute(5, 0, 1, 3, 6, 2, 4, 7).reshape(3, -1, self.heads, 64, HEAD_DIM)
        bias = self.rpb[:, self.rpb_idx].to(qkv.dtype)  # [heads, 64, 64]
        o = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=bias)
        o = o.view(b, h // 8, w // 8, self.heads, 8, 8, HEAD_DIM).permute(0, 1, 4, 2, 5, 3, 6).reshape(b, h, w, c)
        return torch.roll(o, shifts=(-sy, -sx), dims=(1, 2))

    def forward(self, x, phase):
        x = x + self.proj(self.attention(self.norm1(x), phase))
        return x + self.fc2(F.silu(self.fc1(self.norm2(x))))


def space_to_depth2(x):
    b, h, w, c = x.shape
    return x.view(b, h // 2, 2, w // 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h // 2, w // 2, 4 * c)


def depth_to_space2(x, c):
    b, h, w, _ = x.shape
    return x.view(b, h, w, 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(b, 2 * h, 2 * w, c)


class TesselNet(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        ch = cfg.channels
        extra = sum(EXTRA_FEATURES[f] for f in cfg.extra_features)
        self.pixel_embed = nn.Linear(cfg.pixel_features - extra, cfg.pixel_embed)
        if extra:  # experiment: the extra features' columns of the pixel embedding, a tensor of their own (so they can learn at their own rate)
            self.pixel_embed_extra = nn.Linear(extra, cfg.pixel_embed, bias=False)
        self.embed = nn.Linear(16 * cfg.pixel_embed, ch[0])
        for l in range(1, cfg.levels):
            setattr(self, f"merge{l}", nn.Linear(4 * ch[l - 1], ch[l]))
            setattr(self, f"expand{l}", nn.Linear(ch[l], 4 * ch[l - 1]))
        groups = {}
        for layer, (name, lvl, _) in enumerate(cfg.blocks()):
            groups.setdefault(name, []).append(Block(ch[lvl], cfg.mlp_ratio, layer))
        for name, blocks in groups.items():
            setattr(self, name, nn.ModuleList(blocks))
        self.head_norm = nn.LayerNorm(ch[0], eps=1e-5)
        self.head = nn.Linear(ch[0], 16 * HEAD_CHANNELS)
        if cfg.pixel_head:
            self.pixel_head = nn.Linear(cfg.pixel_embed, HEAD_CHANNELS)
        if cfg.pixel_mlp:  # experiment: [pixel embedding, its head channels] -> hidden -> a head correction
            self.pixel_mlp1 = nn.Linear(cfg.pixel_embed + HEAD_CHANNELS, cfg.pixel_mlp)
            self.pixel_mlp2 = nn.Linear(cfg.pixel_mlp, HEAD_CHANNELS)
        if cfg.taau_mix:  # experiment: the mix channel, one per pixel of the token (and from its embedding)
            self.taau_head = nn.Linear(ch[0], 16)
            self.taau_pixel = nn.Linear(cfg.pixel_embed, 1)

    def run(self, name, x, phase):
        for blk in getattr(self, name, []):
            x = blk(x, phase)
        return x

    def forward(self, tokens, phase):
        """tokens [B, Th, Tw, 16P] (padded grid) -> head tokens [B, Th, Tw, 128]."""
        cfg = self.cfg
        x = self.embed(tokens)
        skips = []
        for l in range(cfg.levels - 1):
            x = self.run(f"enc{l}", x, phase)
            skips.append(x)
            x = getattr(self, f"merge{l + 1}")(space_to_depth2(x))
        x = self.run("mid", x, phase)
        for l in reversed(range(cfg.levels - 1)):
            x = depth_to_space2(getattr(self, f"expand{l + 1}")(x), cfg.channels[l]) + skips[l]
            x = self.run(f"dec{l}", x, phase)
        hn = self.head_norm(x)
        head = self.head(hn)
        if cfg.pixel_head:  # each pixel's embedding (its P channels of the token) -> its 8 head channels
            b, th, tw, _ = tokens.shape
            head = head + self.pixel_head(tokens.view(b, th, tw, 16, cfg.pixel_embed)).reshape(b, th, tw, 16 * HEAD_CHANNELS)
        if cfg.pixel_mlp:
            b, th, tw, _ = tokens.shape
            h = head.view(b, th, tw, 16, HEAD_CHANNELS)
            u = torch.cat([tokens.view(b, th, tw, 16, cfg.pixel_embed), h], -1)
            head = (h + self.pixel_mlp2(F.silu(self.pixel_mlp1(u)))).reshape(b, th, tw, 16 * HEAD_CHANNELS)
        if cfg.taau_mix:  # a ninth channel per pixel: [B, Th, Tw, 16 * 9]
            b, th, tw, _ = tokens.shape
            mix = self.taau_head(hn).unsqueeze(-1) + self.taau_pixel(tokens.view(b, th, tw, 16, cfg.pixel_embed))
            head = torch.cat([head.view(b, th, tw, 16, HEAD_CHANNELS), mix], -1).reshape(b, th, tw, 16 * (HEAD_CHANNELS + 1))
        return head


def raw_controls(blend, sigma, clamp):
    """Head channels 0..2 (pre-activation) that decode to these fixed controls (docs/NETWORK.md §5)."""
    logit = lambda q: math.log(min(max(q, 1e-3), 0.999) / (1 - min(max(q, 1e-3), 0.999)))
    return logit(blend), math.log(sigma), logit(clamp)


def init_like_reference(net: TesselNet, baseline=(0.9, 0.5, 1.0), seed=0):
    """Initial weights in the spirit of the reference's untrained package: uniform with variance
    1/fan_in (half on residual outputs, a tenth on the head), zero biases and position biases, the
    head bias at the baseline's raw values."""
    g = torch.Generator().manual_seed(seed)
    for name, p in net.named_parameters():
        with torch.no_grad():
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name == "head_norm.weight":
                p.fill_(1.0)
            elif name.endswith(".bias") or name.endswith(".rpb"):
                p.zero_()
            else:
                gain = 0.5 if (name.endswith("proj.weight") or name.endswith("fc2.weight")) else (0.1 if name in ("head.weight", "pixel_head.weight") else 1.0)
                a = gain * math.sqrt(3.0 / p.shape[1])
                p.copy_((torch.rand(p.shape, generator=g) * 2 - 1) * a)
    blend, sigma, clamp = baseline
    raw = torch.tensor([*raw_controls(blend, sigma, clamp), 0, 0, 0, 0, 0], dtype=torch.float32)
    with torch.no_grad():
        net.head.bias.copy_(raw.repeat(16))
