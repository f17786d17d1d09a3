//! The network configuration and every number derived from it: token grid and padding, layer
//! order, tensor table, FLOPs. docs/NETWORK.md states the same contract in prose.

use serde::{Deserialize, Serialize};

/// Output pixels per token side (a token covers TOKEN x TOKEN output pixels).
pub const TOKEN: usize = 4;
/// Pixels per token.
pub const TOKEN_PIXELS: usize = TOKEN * TOKEN;
/// Window side, in tokens of the window's level.
pub const WINDOW: usize = 8;
/// Tokens per window.
pub const WINDOW_TOKENS: usize = WINDOW * WINDOW;
/// Channels per attention head.
pub const HEAD_DIM: usize = 16;
/// Raw features the input stage computes per output pixel.
pub const PIXEL_FEATURES: usize = 16;
/// Head channels per output pixel (reconstruction controls + feature memory).
pub const HEAD_CHANNELS: usize = 8;
/// Feature-memory channels per pixel (the last ones of the head).
pub const MEMORY_CHANNELS: usize = 2;
/// Window-shift phases: the evaluation counter mod PHASES selects the shift table row.
pub const PHASES: usize = 8;
/// Relative-position bias entries per head: (2*WINDOW-1)^2.
pub const RPB_ENTRIES: usize = (2 * WINDOW - 1) * (2 * WINDOW - 1);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    /// Channels per level, level 0 (finest, one token per 4x4 pixels) first. Multiples of 16.
    pub channels: Vec<usize>,
    /// Blocks per encoder level, for levels 0..L-2.
    pub encoder_depths: Vec<usize>,
    /// Blocks at the deepest level.
    pub bottleneck_depth: usize,
    /// Blocks per decoder level, for levels 0..L-2 (level 0 runs last).
    pub decoder_depths: Vec<usize>,
    /// MLP hidden width = mlp_ratio * C.
    pub mlp_ratio: usize,
    /// Channels per pixel after the per-pixel embedding of the input stage.
    pub pixel_embed: usize,
    /// A per-pixel head path: `pixel_head` (pixel_embed -> HEAD_CHANNELS) applied to each pixel's
    /// embedding (its slot of the token) and added to that pixel's head channels. Absent: false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pixel_head: bool,
    /// The reconstruction keeps a per-pixel accumulation count in the history and clips the
    /// history to the neighbourhood's mean and deviation (docs/NETWORK.md §6, "Accumulation").
    /// Absent: false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub accumulate: bool,
    /// The history colour's resampling kernel (docs/NETWORK.md §2): Keys' cubic with this `a`.
    /// Absent: −0.5, Catmull-Rom; below it the kernel is sharper. In [−1, 0].
    #[serde(default = "catmull_rom_a", skip_serializing_if = "is_catmull_rom_a")]
    pub history_a: f32,
}

/// Keys' `a` of Catmull-Rom: the history kernel of a package that does not name one.
pub const CATMULL_ROM_A: f32 = -0.5;

fn catmull_rom_a() -> f32 {
    CATMULL_ROM_A
}

fn is_catmull_rom_a(a: &f32) -> bool {
    *a == CATMULL_ROM_A
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            channels: vec![32, 48, 96],
            encoder_depths: vec![1, 2],
            bottleneck_depth: 2,
            decoder_depths: vec![1, 2],
            mlp_ratio: 2,
            pixel_embed: 8,
            pixel_head: false,
            accumulate: false,
            history_a: CATMULL_ROM_A,
        }
    }
}

/// One transformer block's place in the network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSpec {
    /// Tensor-name prefix, e.g. "enc0.0", "mid.1", "dec1.0".
    pub name: String,
    /// Level (0 = finest).
    pub level: usize,
    /// Channels.
    pub channels: usize,
    /// Index in execution order: selects the row of the window-shift table.
    pub layer: usize,
}

/// One step of the network in execution order (docs/NETWORK.md §4), the walk every backend
/// follows: the embedding, encoder blocks and merges, the bottleneck, expansions and decoder
/// blocks, the head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetOp {
    Embed,
    Block(BlockSpec),
    /// 2x2 merge from level l into level l + 1.
    Merge(usize),
    /// 2x2 expansion from level l + 1 back into level l (added to its skip).
    Expand(usize),
    Head,
}

/// Name and shape of one tensor of the package (row-major, PyTorch conventions: a linear layer's
/// weight is [out, in]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    pub name: String,
    pub shape: Vec<usize>,
}

impl NetworkConfig {
    pub fn levels(&self) -> usize {
        self.channels.len()
    }

    /// Checks the config against the fixed parts of the contract. Returns the offending field.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let l = self.channels.len();
        if l < 2 {
            return Err(("channels".into(), format!("need at least 2 levels, found {l}")));
        }
        for (i, &c) in self.channels.iter().enumerate() {
            if c == 0 || c % HEAD_DIM != 0 || c > 256 {
                return Err((format!("channels[{i}]"), format!("{c} is not a multiple of {HEAD_DIM} in 16..=256")));
            }
        }
        if self.encoder_depths.len() != l - 1 {
            return Err(("encoder_depths".into(), format!("need {} entries (levels - 1), found {}", l - 1, self.encoder_depths.len())));
        }
        if self.decoder_depths.len() != l - 1 {
            return Err(("decoder_depths".into(), format!("need {} entries (levels - 1), found {}", l - 1, self.decoder_depths.len())));
        }
        if !(1..=4).contains(&self.mlp_ratio) {
            return Err(("mlp_ratio".into(), format!("{} is outside 1..=4", self.mlp_ratio)));
        }
        if !(1..=PIXEL_FEATURES).contains(&self.pixel_embed) {
            return Err(("pixel_embed".into(), format!("{} is outside 1..={PIXEL_FEATURES}", self.pixel_embed)));
        }
        if !(-1.0..=0.0).contains(&self.history_a) {
            return Err(("history_a".into(), format!("{} is outside [-1, 0]", self.history_a)));
        }
        Ok(())
    }

    /// Channels of one token as the input stage writes it: 16 pixels x pixel_embed.
    pub fn token_channels(&self) -> usize {
        TOKEN_PIXELS * self.pixel_embed
    }

    /// Channels of one token of the head buffer: 16 pixels x HEAD_CHANNELS.
    pub fn head_token_channels(&self) -> usize {
        TOKEN_PIXELS * HEAD_CHANNELS
    }

    /// Token-grid alignment: every level's grid must divide into WINDOW x WINDOW windows.
    pub fn grid_alignment(&self) -> usize {
        WINDOW << (self.levels() - 1)
    }

    /// Blocks in execution order: encoder levels 0..L-2, bottleneck, decoder levels L-2..0.
    pub fn blocks(&self) -> Vec<BlockSpec> {
        let mut out = Vec::new();
        let push = |name: String, level: usize, out: &mut Vec<BlockSpec>| {
            let layer = out.len();
            out.push(BlockSpec { name, level, channels: self.channels[level], layer });
        };
        for (lvl, &d) in self.encoder_depths.iter().enumerate() {
            for i in 0..d {
                push(format!("enc{lvl}.{i}"), lvl, &mut out);
            }
        }
        let deep = self.levels() - 1;
        for i in 0..self.bottleneck_depth {
            push(format!("mid.{i}"), deep, &mut out);
        }
        for lvl in (0..deep).rev() {
            for i in 0..self.decoder_depths[lvl] {
                push(format!("dec{lvl}.{i}"), lvl, &mut out);
            }
        }
        out
    }

    /// The network's steps in execution order.
    pub fn ops(&self) -> Vec<NetOp> {
        let blocks = self.blocks();
        let level_blocks = |prefix: String| blocks.iter().filter(move |b| b.name.split('.').next() == Some(prefix.as_str())).cloned().map(NetOp::Block);
        let deep = self.levels() - 1;
        let mut ops = vec![NetOp::Embed];
        for l in 0..deep {
            ops.extend(level_blocks(format!("enc{l}")));
            ops.push(NetOp::Merge(l));
        }
        ops.extend(level_blocks("mid".into()));
        for l in (0..deep).rev() {
            ops.push(NetOp::Expand(l));
            ops.extend(level_blocks(format!("dec{l}")));
        }
        ops.push(NetOp::Head);
        ops
    }

    /// Every tensor of a package for this config, in a fixed order.
    pub fn tensor_specs(&self) -> Vec<TensorSpec> {
        let t = |name: String, shape: &[usize]| TensorSpec { name, shape: shape.to_vec() };
        let mut v = Vec::new();
        let p = self.pixel_embed;
        let c0 = self.channels[0];
        v.push(t("pixel_embed.weight".into(), &[p, PIXEL_FEATURES]));
        v.push(t("pixel_embed.bias".into(), &[p]));
        v.push(t("embed.weight".into(), &[c0, self.token_channels()]));
        v.push(t("embed.bias".into(), &[c0]));
        let deep = self.levels() - 1;
        for lvl in 1..=deep {
            let (ci, co) = (self.channels[lvl - 1], self.channels[lvl]);
            v.push(t(format!("merge{lvl}.weight"), &[co, 4 * ci]));
            v.push(t(format!("merge{lvl}.bias"), &[co]));
            v.push(t(format!("expand{lvl}.weight"), &[4 * ci, co]));
            v.push(t(format!("expand{lvl}.bias"), &[4 * ci]));
        }
        for b in self.blocks() {
            let c = b.channels;
            let h = c / HEAD_DIM;
            let m = self.mlp_ratio * c;
            let n = &b.name;
            v.push(t(format!("{n}.norm1.weight"), &[c]));
            v.push(t(format!("{n}.norm1.bias"), &[c]));
            v.push(t(format!("{n}.qkv.weight"), &[3 * c, c]));
            v.push(t(format!("{n}.qkv.bias"), &[3 * c]));
            v.push(t(format!("{n}.rpb"), &[h, RPB_ENTRIES]));
            v.push(t(format!("{n}.proj.weight"), &[c, c]));
            v.push(t(format!("{n}.proj.bias"), &[c]));
            v.push(t(format!("{n}.norm2.weight"), &[c]));
            v.push(t(format!("{n}.norm2.bias"), &[c]));
            v.push(t(format!("{n}.fc1.weight"), &[m, c]));
            v.push(t(format!("{n}.fc1.bias"), &[m]));
            v.push(t(format!("{n}.fc2.weight"), &[c, m]));
            v.push(t(format!("{n}.fc2.bias"), &[c]));
        }
        v.push(t("head_norm.weight".into(), &[c0]));
        v.push(t("head_norm.bias".into(), &[c0]));
        v.push(t("head.weight".into(), &[self.head_token_channels(), c0]));
        v.push(t("head.bias".into(), &[self.head_token_channels()]));
        if self.pixel_head {
            v.push(t("pixel_head.weight".into(), &[HEAD_CHANNELS, p]));
            v.push(t("pixel_head.bias".into(), &[HEAD_CHANNELS]));
        }
        v
    }

    pub fn parameter_count(&self) -> usize {
        self.tensor_specs().iter().map(|s| s.shape.iter().product::<usize>()).sum()
    }

    /// FLOPs of one evaluation at an output size (2 per multiply-add; matrix products only:
    /// norms, softmax and activations are not counted).
    pub fn flops(&self, out_w: usize, out_h: usize) -> FlopCount {
        let g = TokenGrid::new(self, out_w, out_h);
        let mut f = FlopCount::default();
        let pixels = g.padded_w * g.padded_h * TOKEN_PIXELS;
        f.input = 2 * pixels * PIXEL_FEATURES * self.pixel_embed;
        let t0 = g.level_tokens(0);
        f.embed = 2 * t0 * self.token_channels() * self.channels[0];
        f.head = 2 * t0 * self.channels[0] * self.head_token_channels();
        if self.pixel_head {
            f.head += 2 * pixels * self.pixel_embed * HEAD_CHANNELS;
        }
        for lvl in 1..self.levels() {
            let tl = g.level_tokens(lvl);
            let (ci, co) = (self.channels[lvl - 1], self.channels[lvl]);
            f.merge_expand += 2 * 2 * tl * 4 * ci * co;
        }
        for b in self.blocks() {
            let c = b.channels;
            let tl = g.level_tokens(b.level);
            let linear = 2 * tl * (3 * c * c + c * c + 2 * self.mlp_ratio * c * c);
            let attention = 2 * tl * 2 * WINDOW_TOKENS * c;
            f.blocks += linear + attention;
        }
        f
    }
}

/// FLOPs of one evaluation, by part.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct FlopCount {
    pub input: usize,
    pub embed: usize,
    pub blocks: usize,
    pub merge_expand: usize,
    pub head: usize,
}

impl FlopCount {
    pub fn total(&self) -> usize {
        self.input + self.embed + self.blocks + self.merge_expand + self.head
    }
}

/// The token grid of one output size: unpadded and padded sizes in tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenGrid {
    pub out_w: usize,
    pub out_h: usize,
    /// Tokens needed to cover the output: ceil(out / 4).
    pub tokens_w: usize,
    pub tokens_h: usize,
    /// Level-0 grid padded up to a multiple of the alignment (8 << (levels-1)).
    pub padded_w: usize,
    pub padded_h: usize,
    pub levels: usize,
}

impl TokenGrid {
    pub fn new(cfg: &NetworkConfig, out_w: usize, out_h: usize) -> Self {
        let a = cfg.grid_alignment();
        let tokens_w = out_w.div_ceil(TOKEN);
        let tokens_h = out_h.div_ceil(TOKEN);
        TokenGrid {
            out_w,
            out_h,
            tokens_w,
            tokens_h,
            padded_w: tokens_w.div_ceil(a) * a,
            padded_h: tokens_h.div_ceil(a) * a,
            levels: cfg.levels(),
        }
    }
    /// (width, height) in tokens of a level.
    pub fn level_dims(&self, level: usize) -> (usize, usize) {
        (self.padded_w >> level, self.padded_h >> level)
    }
    pub fn level_tokens(&self, level: usize) -> usize {
        let (w, h) = self.level_dims(level);
        w * h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_makes_every_level_divide_into_windows() {
        let cfg = NetworkConfig::default();
        for &(w, h) in &[(1920, 1080), (2560, 1440), (3840, 2160), (641, 359), (64, 64)] {
            let g = TokenGrid::new(&cfg, w, h);
            assert!(g.padded_w * TOKEN >= w && g.padded_h * TOKEN >= h);
            for l in 0..cfg.levels() {
                let (lw, lh) = g.level_dims(l);
                assert_eq!(lw % WINDOW, 0, "{w}x{h} level {l}");
                assert_eq!(lh % WINDOW, 0, "{w}x{h} level {l}");
            }
        }
        let g = TokenGrid::new(&cfg, 3840, 2160);
        assert_eq!((g.tokens_w, g.tokens_h, g.padded_w, g.padded_h), (960, 540, 960, 544));
    }

    #[test]
    fn default_network_fits_the_flop_budget_at_4k() {
        let cfg = NetworkConfig::default();
        let f = cfg.flops(3840, 2160).total() as f64 / 1e9;
        assert!(f <= 80.0, "{f} GFLOP at 4K");
        assert!(f > 60.0, "{f} GFLOP at 4K: counting lost a part");
    }

    #[test]
    fn pixel_head_adds_two_tensors_and_fits_the_budget() {
        let cfg = NetworkConfig { pixel_head: true, ..NetworkConfig::default() };
        let base = NetworkConfig::default();
        let extra: Vec<_> = cfg.tensor_specs().into_iter().skip(base.tensor_specs().len()).collect();
        assert_eq!(extra.len(), 2);
        assert_eq!((extra[0].name.as_str(), extra[0].shape.as_slice()), ("pixel_head.weight", &[HEAD_CHANNELS, 8][..]));
        assert_eq!((extra[1].name.as_str(), extra[1].shape.as_slice()), ("pixel_head.bias", &[HEAD_CHANNELS][..]));
        // 2 FLOPs x padded pixels x P x 8 on top of the same network.
        let (a, b) = (cfg.flops(3840, 2160).total(), base.flops(3840, 2160).total());
        assert_eq!(a - b, 2 * 960 * 544 * 16 * 8 * HEAD_CHANNELS);
        assert!(a as f64 / 1e9 <= 80.0, "{} GFLOP at 4K", a as f64 / 1e9);
    }

    #[test]
    fn pixel_head_and_accumulate_are_absent_from_json_when_false() {
        let base = NetworkConfig::default();
        let json = serde_json::to_string(&base).unwrap();
        assert!(!json.contains("pixel_head") && !json.contains("accumulate"), "{json}");
        assert_eq!(serde_json::from_str::<NetworkConfig>(&json).unwrap(), base);
        for (on, key) in [(NetworkConfig { pixel_head: true, ..base.clone() }, "pixel_head"), (NetworkConfig { accumulate: true, ..base.clone() }, "accumulate")] {
            let json = serde_json::to_string(&on).unwrap();
            assert!(json.contains(&format!("\"{key}\":true")), "{json}");
            assert_eq!(serde_json::from_str::<NetworkConfig>(&json).unwrap(), on);
        }
        // Accumulating adds no tensors.
        assert_eq!(NetworkConfig { accumulate: true, ..base.clone() }.tensor_specs().len(), base.tensor_specs().len());
    }

    #[test]
    fn history_a_is_absent_for_catmull_rom_and_checked_when_present() {
        let base = NetworkConfig::default();
        assert!(!serde_json::to_string(&base).unwrap().contains("history_a"));
        let sharp = NetworkConfig { history_a: -0.75, ..base.clone() };
        let json = serde_json::to_string(&sharp).unwrap();
        assert!(json.contains("\"history_a\":-0.75"), "{json}");
        assert_eq!(serde_json::from_str::<NetworkConfig>(&json).unwrap(), sharp);
        assert_eq!(sharp.tensor_specs().len(), base.tensor_specs().len());
        assert!(sharp.validate().is_ok());
        for bad in [-1.5, 0.25, f32::NAN] {
            let (field, msg) = NetworkConfig { history_a: bad, ..base.clone() }.validate().unwrap_err();
            assert_eq!(field, "history_a", "{msg}");
        }
    }

    #[test]
    fn the_walk_visits_every_block_once_between_its_merges() {
        let ops = NetworkConfig::default().ops();
        let names: Vec<String> = ops
            .iter()
            .map(|o| match o {
                NetOp::Embed => "embed".into(),
                NetOp::Block(b) => b.name.clone(),
                NetOp::Merge(l) => format!("merge{}", l + 1),
                NetOp::Expand(l) => format!("expand{}", l + 1),
                NetOp::Head => "head".into(),
            })
            .collect();
        let expect = ["embed", "enc0.0", "merge1", "enc1.0", "enc1.1", "merge2", "mid.0", "mid.1", "expand2", "dec1.0", "dec1.1", "expand1", "dec0.0", "head"];
        assert_eq!(names, expect);
    }

    #[test]
    fn block_order_and_layers() {
        let names: Vec<String> = NetworkConfig::default().blocks().iter().map(|b| b.name.clone()).collect();
        assert_eq!(names, ["enc0.0", "enc1.0", "enc1.1", "mid.0", "mid.1", "dec1.0", "dec1.1", "dec0.0"]);
    }

    #[test]
    fn validation_names_the_field() {
        let mut cfg = NetworkConfig::default();
        cfg.channels[1] = 40;
        assert_eq!(cfg.validate().unwrap_err().0, "channels[1]");
        let mut cfg = NetworkConfig::default();
        cfg.decoder_depths.pop();
        assert_eq!(cfg.validate().unwrap_err().0, "decoder_depths");
    }
}
