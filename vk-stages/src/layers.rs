//! The network's linear layers as the Vulkan shaders run them: each layer's spec (widths, mode,
//! fused LayerNorm, activation, residual, f16 sides), the table of a config's layers, and the check
//! that the shaders can run a config at all. hip-net's plan walks the same table.

use tessel_model::config::{NetworkConfig, HEAD_CHANNELS, PIXEL_FEATURES, TOKEN_PIXELS};

use crate::bindings as b;
use crate::error::{Result, VkError};
use crate::pipelines::Variant;
use crate::tiles::DirectTile;

/// Which linear-layer variant (docs: shaders/linear.comp).
#[derive(Clone, Copy, Debug)]
pub struct LinearSpec {
    pub inp: u32,
    pub out: u32,
    pub act: u32,
    pub mode: u32,
    pub residual: u32,
    pub in_f16: u32,
    pub out_f16: u32,
    /// A LayerNorm of the input rows first (its tensors named by the plan).
    pub ln: u32,
    /// The level whose tokens the dispatch runs over (a merge and an expansion: the coarser).
    pub level: u32,
    /// 1: every grid row of that level is whole 16s of tokens, whatever the frame's size (the
    /// padded grid, docs/NETWORK.md §3): an expansion's 16 consecutive rows then go to tokens of
    /// the level below a fixed distance apart, which linear_direct_coop.comp needs.
    pub rows16: u32,
}

impl LinearSpec {
    pub fn plain(inp: usize, out: usize) -> LinearSpec {
        LinearSpec { inp: inp as u32, out: out as u32, act: 0, mode: b::MODE_PLAIN, residual: 0, in_f16: 0, out_f16: 0, ln: 0, level: 0, rows16: 0 }
    }
    pub fn variant(&self, p: u32) -> Variant {
        Variant::new("linear", &self.spec(p, b::COOP_ROWS, b::COOP_COLS))
    }
    /// The cooperative-matrix variant with `rows` tokens a workgroup and `cols` outputs per chunk
    /// (`NetTiles`).
    pub fn coop_variant(&self, p: u32, rows: u32, cols: u32) -> Variant {
        Variant::new("linear_coop", &self.spec(p, rows, cols))
    }
    /// The cooperative-matrix variant that keeps its results in the accumulators
    /// (linear_direct_coop.comp; plain and merge layers): `rows` tokens a workgroup, up to `cols`
    /// outputs (four accumulators of 16) per chunk.
    /// `weights_shared`: its weights copied into shared memory (linear_direct_w_coop,
    /// [`LinearSpec::direct_weight_bytes`] more).
    /// `regs`: the rows it would stage go into registers instead (linear_regs_coop,
    /// linear_regs_w_coop; [`LinearSpec::in_regs_fits`]).
    pub fn direct_variant(&self, p: u32, tile: &DirectTile, weights_shared: bool, regs: bool) -> Variant {
        let shader = match (regs && self.in_regs_fits(), weights_shared) {
            (false, false) => "linear_direct_coop",
            (false, true) => "linear_direct_w_coop",
            (true, false) => "linear_regs_coop",
            (true, true) => "linear_regs_w_coop",
        };
        Variant::new(shader, &self.spec(p, tile.rows, tile.cols))
    }
    /// Whether linear_direct_coop.comp stages this layer's input rows (a LayerNorm first, the
    /// merge's gather, f32 rows) and its variants with TS_IN_REGS may take them in registers
    /// instead: inputs of up to eight tiles of 16 (the merge out of a level of 32).
    pub fn in_regs_fits(&self) -> bool {
        self.direct_staged() && self.inp % 16 == 0 && self.inp <= 128
    }
    /// Whether linear_direct_coop.comp stages this layer's input rows (its STAGED): a LayerNorm
    /// first, the merge's gather, f32 rows. Plain f16 rows (a plain layer's, an expansion's) are
    /// read as matrices from the buffer.
    pub fn direct_staged(&self) -> bool {
        self.ln == 1 || self.mode == b::MODE_MERGE || self.in_f16 == 0
    }
    /// Shared memory that the weights take in linear_direct_w_coop (rows padded, bindings.h's
    /// TS_SHARED_PAD).
    pub fn direct_weight_bytes(&self) -> u32 {
        self.out * (self.inp + b::SHARED_PAD) * 2
    }
    /// Shared memory of linear_direct_coop.comp with `rows` tokens a workgroup: the input rows
    /// where they are staged (a LayerNorm, the merge gather, f32 rows; rows padded),
    /// the bias in 16 rows (f32 for the head, with its per-pixel path's 16 x 16 matrix).
    pub fn direct_shared_bytes(&self, rows: u32) -> u32 {
        let staged = self.direct_staged();
        let bias = if self.mode == b::MODE_HEAD { 16 * self.out * 4 + 512 } else { 16 * self.out * 2 };
        (if staged { rows * (self.inp + b::SHARED_PAD) * 2 } else { 32 }) + bias
    }
    /// A block's MLP in one dispatch (mlp_direct_coop.comp): `self` is its fc1 (IN the level's
    /// width, OUT the hidden width), `rows` tokens a workgroup.
    /// `weights`: from the buffer, copied into shared memory (mlp_direct_w_coop,
    /// [`LinearSpec::mlp_weight_bytes`] more) or, in registers only, a half of the hidden at a
    /// time (mlp_regs_wh_coop, [`LinearSpec::mlp_weight_half_bytes`]); `proj`: the block's
    /// attention projection taken first (mlp_proj_coop, mlp_proj_w_coop;
    /// [`LinearSpec::mlp_proj_bytes`] more).
    /// `regs`: its activations in registers (mlp_regs_coop.comp, [`LinearSpec::mlp_regs_fits`]).
    pub fn mlp_variant(&self, p: u32, tile: &DirectTile, weights: MlpWeights, proj: bool, regs: bool) -> Variant {
        use MlpWeights::*;
        // Halves exist only in registers: elsewhere the weights stay in the buffer.
        let shader = match (regs, proj, weights) {
            (false, false, Shared) => "mlp_direct_w_coop",
            (false, false, _) => "mlp_direct_coop",
            (false, true, Shared) => "mlp_proj_w_coop",
            (false, true, _) => "mlp_proj_coop",
            (true, false, Buffer) => "mlp_regs_coop",
            (true, false, Shared) => "mlp_regs_w_coop",
            (true, false, Halves) => "mlp_regs_wh_coop",
            (true, true, Buffer) => "mlp_proj_regs_coop",
            (true, true, Shared) => "mlp_proj_regs_w_coop",
            (true, true, Halves) => "mlp_proj_regs_wh_coop",
        };
        Variant::new(shader, &self.spec(p, tile.rows, tile.cols))
    }
    /// The network's last MLP with the head in one dispatch (mlp_proj_head_regs_w_coop: the
    /// registers, the projection first, the weights in shared memory), with the MLP's constants.
    pub fn mlp_head_variant(&self, p: u32, tile: &DirectTile) -> Variant {
        Variant::new("mlp_proj_head_regs_w_coop", &self.spec(p, tile.rows, tile.cols))
    }
    /// Whether mlp_regs_coop.comp takes this MLP (`self` its fc1): the level's width in at most
    /// six tiles of 16, the hidden in pairs of chunks of 16 (its TS_MLP_HG).
    pub fn mlp_regs_fits(&self) -> bool {
        self.inp % 16 == 0 && self.inp <= 96 && self.out % 32 == 0
    }
    /// Shared memory that half of fc1's rows and half of fc2's columns take in mlp_regs_wh_coop
    /// (`self` the fc1; rows padded).
    pub fn mlp_weight_half_bytes(&self) -> u32 {
        let half = self.out / 2;
        (half * (self.inp + b::SHARED_PAD) + self.inp * (half + b::SHARED_PAD)) * 2
    }
    /// Shared memory that the projection's weights take in mlp_proj_regs_w_coop (rows padded;
    /// `self` the fc1).
    pub fn mlp_proj_weight_bytes(&self) -> u32 {
        self.inp * (self.inp + b::SHARED_PAD) * 2
    }
    /// Shared memory that the projection's bias takes in mlp_proj_coop (16 rows; `self` the fc1).
    pub fn mlp_proj_bytes(&self) -> u32 {
        16 * self.inp * 2
    }
    /// Shared memory that fc1's and fc2's weights take in mlp_direct_w_coop (`self` the fc1;
    /// rows padded).
    pub fn mlp_weight_bytes(&self) -> u32 {
        (self.out * (self.inp + b::SHARED_PAD) + self.inp * (self.out + b::SHARED_PAD)) * 2
    }
    /// Shared memory of mlp_direct_coop.comp with `rows` tokens a workgroup (`self` its fc1): the
    /// normalised rows and the hidden activations (f16, rows padded), both biases in 16 rows.
    pub fn mlp_shared_bytes(&self, rows: u32) -> u32 {
        rows * (self.inp + self.out + 2 * b::SHARED_PAD) * 2 + 16 * (self.inp + self.out) * 2
    }
    fn spec(&self, p: u32, rows: u32, cols: u32) -> [u32; 13] {
        [self.inp, self.out, self.act, self.mode, self.residual, self.in_f16, self.out_f16, p, self.ln, self.stage(cols), cols, rows, 2 * rows]
    }
    /// Row width of the cooperative-matrix shader's f32 staging tile.
    pub fn stage(&self, cols: u32) -> u32 {
        if self.ln == 1 {
            self.inp.max(cols)
        } else {
            cols
        }
    }
    /// Shared memory the cooperative-matrix shader needs with `rows` tokens and `cols` outputs
    /// per chunk (the rows of its matrices padded, bindings.h's TS_SHARED_PAD).
    pub fn coop_shared_bytes(&self, rows: u32, cols: u32) -> u32 {
        // The per-pixel head path's weights, declared whatever the mode.
        let pixel_head = (b::HEAD_CHANNELS * (b::FEATURES + 1)) * 4;
        let (inp, stage) = (self.inp + b::SHARED_PAD, self.stage(cols) + b::SHARED_PAD / 2);
        rows * inp * 2 + cols * inp * 2 + rows * stage * 4 + (rows + 2 * rows) * 8 + pixel_head
    }
}

/// The linear layers of one transformer block, and of the network around the blocks. Inside a
/// block the activations between layers (qkv, attention output, MLP hidden) are f16; the
/// residual stream is f32 ([`Layers::new`]) or f16 ([`Layers::with_stream16`]); each LayerNorm
/// runs inside the linear layer that follows it.
pub struct Layers {
    pub embed: LinearSpec,
    pub head: LinearSpec,
    /// Per level: qkv, proj (+residual), fc1 (+SiLU), fc2 (+residual).
    pub qkv: Vec<LinearSpec>,
    pub proj: Vec<LinearSpec>,
    pub fc1: Vec<LinearSpec>,
    pub fc2: Vec<LinearSpec>,
    /// merge[l - 1]: level l-1 -> l; expand[l - 1]: level l -> l-1 (scatter-added to the skip).
    pub merge: Vec<LinearSpec>,
    pub expand: Vec<LinearSpec>,
}

impl Layers {
    /// The layers with f32 residual streams.
    pub fn new(cfg: &NetworkConfig) -> Layers {
        Self::with_stream16(cfg, false)
    }

    /// The layers with every level's residual stream in f16 where `f16` (NetTiles::stream16):
    /// each layer that reads a stream takes f16 rows (IN_F16: the embedding's tokens already), and
    /// each that writes or adds into one stores f16 (OUT_F16, with RESIDUAL the old values read
    /// as f16 and the sum rounded once).
    pub fn with_stream16(cfg: &NetworkConfig, f16: bool) -> Layers {
        let s = f16 as u32;
        let c = &cfg.channels;
        let m = cfg.mlp_ratio;
        let lv = cfg.levels();
        Layers {
            embed: LinearSpec { in_f16: 1, out_f16: s, ..LinearSpec::plain(cfg.token_channels(), c[0]) },
            head: LinearSpec { mode: b::MODE_HEAD, in_f16: s, out_f16: 1, ln: 1, ..LinearSpec::plain(c[0], cfg.head_token_channels()) },
            qkv: at_levels(c.iter().map(|&c| LinearSpec { ln: 1, in_f16: s, out_f16: 1, ..LinearSpec::plain(c, 3 * c) }), 0),
            proj: at_levels(c.iter().map(|&c| LinearSpec { residual: 1, in_f16: 1, out_f16: s, ..LinearSpec::plain(c, c) }), 0),
            fc1: at_levels(c.iter().map(|&c| LinearSpec { act: 1, ln: 1, in_f16: s, out_f16: 1, ..LinearSpec::plain(c, m * c) }), 0),
            fc2: at_levels(c.iter().map(|&c| LinearSpec { residual: 1, in_f16: 1, out_f16: s, ..LinearSpec::plain(m * c, c) }), 0),
            merge: at_levels((1..lv).map(|l| LinearSpec { mode: b::MODE_MERGE, in_f16: s, out_f16: s, ..LinearSpec::plain(4 * c[l - 1], c[l]) }), 1),
            expand: at_levels((1..lv).map(|l| LinearSpec { mode: b::MODE_EXPAND, residual: 1, in_f16: s, out_f16: s, rows16: rows16(lv, l), ..LinearSpec::plain(c[l], 4 * c[l - 1]) }), 1),
        }
    }

    pub fn all(&self) -> Vec<LinearSpec> {
        let mut v = vec![self.embed, self.head];
        for list in [&self.qkv, &self.proj, &self.fc1, &self.fc2, &self.merge, &self.expand] {
            v.extend(list.iter().copied());
        }
        v
    }
}

/// Whether every grid row of level `l` of a network of `levels` levels is whole 16s of tokens:
/// level 0's padded grid is a multiple of 8 << (levels - 1) tokens each way (docs/NETWORK.md §3).
fn rows16(levels: usize, l: usize) -> u32 {
    (((8usize << (levels - 1)) >> l) % 16 == 0) as u32
}

/// The specs of consecutive levels from `first` on (a merge and an expansion run over the
/// coarser level's tokens).
fn at_levels(specs: impl Iterator<Item = LinearSpec>, first: u32) -> Vec<LinearSpec> {
    specs.enumerate().map(|(i, l)| LinearSpec { level: first + i as u32, ..l }).collect()
}

/// Checks that the shaders can run a config; names the field that they cannot.
pub fn check_config(name: &str, cfg: &NetworkConfig) -> Result<()> {
    let bad = |field: String, msg: String| Err(VkError::Config { model: name.into(), field, msg });
    if let Err((field, msg)) = cfg.validate() {
        return bad(field, msg);
    }
    for (i, &c) in cfg.channels.iter().enumerate() {
        if c % b::HEAD_DIM as usize != 0 || c % b::LINEAR_OUTS as usize != 0 {
            return bad(format!("channels[{i}]"), format!("{c}: the shaders need a multiple of {}", b::HEAD_DIM.max(b::LINEAR_OUTS)));
        }
    }
    if cfg.pixel_embed > PIXEL_FEATURES {
        return bad("pixel_embed".into(), format!("{}: the input shader takes at most {PIXEL_FEATURES}", cfg.pixel_embed));
    }
    for l in Layers::new(cfg).all() {
        if l.out % b::LINEAR_OUTS != 0 {
            return bad("mlp_ratio".into(), format!("a linear layer of {} outputs is not a multiple of {}", l.out, b::LINEAR_OUTS));
        }
    }
    if cfg.head_token_channels() != TOKEN_PIXELS * HEAD_CHANNELS {
        return bad("head".into(), "head channels differ from the contract".into());
    }
    Ok(())
}

/// Where a block's MLP in one dispatch reads its weights ([`LinearSpec::mlp_variant`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MlpWeights {
    /// From the buffer.
    Buffer,
    /// Copied into shared memory once a workgroup.
    Shared,
    /// Copied into shared memory a half of the hidden at a time (in registers only).
    Halves,
}
