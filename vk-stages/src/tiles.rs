//! How the shaders' network splits its work: the cooperative-matrix linear shader's tile per
//! layer (tokens a workgroup takes, the widest output chunk it stages in shared memory) and the
//! queries an attention invocation takes. Chosen per layer from its role and level when the model
//! loads; the environment is read once (`NetTiles::from_env`), as `PixelPaths` is.
//!
//! The defaults come from per-dispatch surveys on the H200 (BENCHMARKS.md, thirty-fifth and
//! thirty-sixth sessions; docs/ENGINE.md): no one setting wins every layer.

use crate::bindings as b;
use crate::model::{LinearSpec, MlpWeights};
use crate::pipelines::Variant;

/// The tile settings; `None` is the per-layer default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetTiles {
    /// `TESSEL_VK_COOP_ROWS=32|64|128`: every layer's rows. Default: 32 over level 0's tokens,
    /// where the most workgroups run (its embedding and MLP 64, the head 128: [`NetTiles::direct`],
    /// [`NetTiles::mlp`]), 128 for the merge out of level 0, 64 below (level 0's
    /// embedding 0.213 -> 0.184 ms at 4K with 32, level 2's qkv 0.085 -> 0.105: thirty-sixth
    /// session).
    pub rows: Option<u32>,
    /// `TESSEL_VK_COOP_COLS=16|32|64`: every layer's widest chunk but the head's. Default: 64
    /// for the expansions (expand2 0.069 -> 0.049 ms, expand1 0.086 -> 0.072), 32 elsewhere.
    pub cols: Option<u32>,
    /// `TESSEL_VK_COOP_HEAD_COLS=16|32|64`, default 32: the head's widest chunk.
    pub head_cols: u32,
    /// `TESSEL_VK_COOP_EVEN=0`: residual layers take the widest chunk instead of one that
    /// divides their outputs.
    pub even: bool,
    /// `TESSEL_VK_ATTENTION_QPI=1|2`, default 1: queries an attention invocation takes.
    pub attention_qpi: u32,
    /// `TESSEL_VK_ATTENTION_ONLINE=0|1`, default 1: the attention's softmax in one pass over
    /// the keys with a running maximum instead of two.
    pub attention_online: bool,
    /// `TESSEL_VK_ATTENTION_COOP=0|1`, default 1: the attention on cooperative matrices
    /// (attention_coop.comp) where the model's path has them ([`attention_coop_fits`]).
    pub attention_coop: bool,
    /// `TESSEL_VK_COOP_DIRECT=0|1|2`: where plain and merge layers and the head keep their
    /// results in the cooperative matrices' accumulators and store them from there
    /// (linear_direct_coop.comp) instead of staging weights and results in shared memory
    /// (linear_coop.comp): 1 by role (the default, [`NetTiles::direct`]), 2 every layer that can,
    /// 0 none (docs/ENGINE.md).
    pub direct: Direct,
    /// `TESSEL_VK_COOP_MLP=0|1`, default 1: with `direct`, each block's MLP runs as one dispatch
    /// (mlp_direct_coop.comp) where its shared memory fits, its hidden activations never stored.
    pub mlp: bool,
    /// `TESSEL_VK_COOP_MLP_W=0|1`, default 1: the MLP in one dispatch copies its weights into
    /// shared memory where they fit beside its rows ([`NetTiles::mlp_weights_shared`]).
    pub mlp_weights: bool,
    /// `TESSEL_VK_COOP_MLP_PROJ=0|1`, default 1: the MLP in one dispatch takes its block's
    /// attention projection first (mlp_proj_coop) where the level is at most 64 wide and the
    /// projection's bias fits beside the rows ([`NetTiles::mlp_proj`]); 0 runs proj apart.
    pub mlp_proj: bool,
    /// `TESSEL_VK_COOP_LINEAR_W=0|1|2`: where a layer on linear_direct_coop.comp copies its
    /// weights into shared memory (linear_direct_w_coop) where they fit beside its rows: 1 by role
    /// (the default, [`NetTiles::direct_weights_shared`]), 2 every such layer, 0 none.
    pub linear_weights: Direct,
    /// `TESSEL_VK_ATTENTION_QKV=0|1|2`: where the cooperative-matrix attention computes its
    /// head's q, k and v itself from the stream (attention_qkv_coop, no qkv dispatch): 1 by role
    /// (the default, [`NetTiles::attention_qkv`]), 2 at every level that fits, 0 nowhere.
    pub attention_qkv: Direct,
    /// `TESSEL_VK_ATTENTION_WINDOW=0|1|2`: where q, k, v are computed in the attention, one
    /// workgroup takes every head of its window (attention_qkv_window_coop): 1 by role (the
    /// default, [`NetTiles::window`]), 2 at every such level, 0 a workgroup a head.
    pub attention_window: Direct,
    /// `TESSEL_VK_ATTENTION_SCORES=16|32`, default 16: the cooperative-matrix attention's scores
    /// (and outputs) in shared memory as f16, or as f32 (the variants `*_f32_coop`).
    pub attention_scores_f32: bool,
    /// `TESSEL_VK_ATTENTION_REGS=0|1`, default 1: the cooperative-matrix attention's softmax in
    /// registers (the `*_regs_coop` variants: no scores, weights or outputs in shared memory),
    /// where the layout probe finds the matrices laid out as those variants read them
    /// (crate::layout; the model turns this off where it does not).
    pub attention_regs: bool,
    /// `TESSEL_VK_MLP_REGS=0|1`, default 1: a block's MLP in one dispatch with its activations in
    /// registers (mlp_regs_coop.comp: no rows, hidden activations or biases in shared memory),
    /// on the same condition as `attention_regs`.
    pub mlp_regs: bool,
    /// `TESSEL_VK_LINEAR_REGS=0|1`, default 1: layers on linear_direct_coop.comp whose input
    /// rows it would stage (a LayerNorm first, the merge's gather, f32 rows) take them into
    /// registers instead (linear_regs_coop, linear_regs_w_coop; [`LinearSpec::in_regs_fits`]),
    /// on the same condition as `attention_regs`.
    pub linear_regs: bool,
    /// `TESSEL_VK_STREAM16=0|1`, default 1: every level's residual stream (and the encoder's
    /// skip it holds) in f16 instead of f32, its sums still in f32 (docs/ENGINE.md, "The streams
    /// in f16"). The model turns it off where a level runs as one fused dispatch
    /// (`TESSEL_VK_FUSED=1`: block_fused.comp and block_coop.comp read f32 streams).
    pub stream16: bool,
    /// `TESSEL_VK_MLP_HEAD=0|1`, default 1: the network's last block runs its MLP and the head in
    /// one dispatch (mlp_proj_head_regs_w_coop) where its MLP runs in registers with its weights
    /// and its projection's in shared memory and the head's fit beside them
    /// ([`NetTiles::mlp_head_dispatch`]); 0: the head apart.
    pub mlp_head: bool,
    /// `TESSEL_VK_EXPAND_DIRECT=0|1`, default 1: with `direct`, an expansion whose grid rows are
    /// whole 16s of tokens (`LinearSpec::rows16`) keeps its results in the accumulators and
    /// scatters them from there (linear_direct_coop.comp) instead of staging them
    /// (linear_coop.comp).
    pub expand_direct: bool,
}

/// The most shared memory a block's MLP in one dispatch may take by role ([`NetTiles::mlp`]):
/// level 1's of tessel-v12 at 64 rows (24.5 KiB with its rows padded), not level 2's (47 KiB).
const MLP_ROLE_SHARED: u32 = 28 * 1024;

/// Which linear layers take linear_direct_coop.comp (`TESSEL_VK_COOP_DIRECT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direct {
    /// None: every layer stages its weights and results (linear_coop.comp).
    Off,
    /// The roles where it pays ([`NetTiles::direct`]).
    Roles,
    /// Every layer that can.
    All,
}

/// A layer's tile on linear_direct_coop.comp ([`NetTiles::direct`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectTile {
    /// Tokens a workgroup.
    pub rows: u32,
    /// Outputs a chunk (up to four accumulators of 16).
    pub cols: u32,
}

/// Shared memory of attention_coop.comp: q, k, v (f16), the scores (f16, or f32 in its variants
/// *_f32_coop) and the softmax weights (f16) of 64 x 64, each row padded (bindings.h's
/// TS_SHARED_PAD), the window's tokens and the bias table (padded to 16 bytes).
pub fn attention_coop_shared_bytes(scores_f32: bool) -> u32 {
    let scores = if scores_f32 { 4 } else { 2 };
    3 * 64 * (16 + b::SHARED_PAD) * 2 + 64 * (64 + b::SHARED_PAD) * (scores + 2) + 64 * 4 + b::RPB_ENTRIES.div_ceil(4) * 16
}

/// Whether attention_coop.comp runs on a device: its row owners need subgroups of 32 or 64
/// (16-row blocks, two or four invocations a row), and its shared memory must fit.
pub fn attention_coop_fits(subgroup_size: u32, shared_memory: u32, scores_f32: bool) -> bool {
    matches!(subgroup_size, 32 | 64) && attention_coop_shared_bytes(scores_f32) <= shared_memory
}

/// Shared memory of attention_qkv_coop at C channels: attention_coop.comp's, the window's
/// LayerNorm rows (f16, padded; up to 64 channels in the softmax weights' bytes) and qkv's bias
/// for one head in 16 rows.
pub fn attention_qkv_shared_bytes(c: u32, scores_f32: bool) -> u32 {
    let rows = if c <= 64 { 16 } else { 64 * (c + b::SHARED_PAD) * 2 };
    attention_coop_shared_bytes(scores_f32) + rows + 16 * 3 * 16 * 2
}

/// The same for attention_qkv_window_coop: the rows in shared memory of their own, qkv's bias
/// for every head.
pub fn attention_qkv_window_shared_bytes(c: u32, scores_f32: bool) -> u32 {
    attention_coop_shared_bytes(scores_f32) + 64 * (c + b::SHARED_PAD) * 2 + 16 * 3 * c * 2
}

/// Shared memory of the register variants (attention_*regs_coop, [`NetTiles::attention_regs`]):
/// k and v of a head (and q where the qkv layer gives them: `qkv_in` false), the window's tokens
/// and the bias table. Where they compute q, k and v, norm1 is in registers and nothing is
/// staged, whatever the width and whether a workgroup takes a head or a window; the driver drops
/// the 16-byte stand-ins of the arrays they leave out. There each head's rows of qkv's weights
/// (3 x 16 rows of `c`, padded) are copied into shared memory before its products: at 4K on the
/// H100 level 0's attention 0.107 -> 0.082 ms, level 2's 0.067 -> 0.046 (forty-sixth session).
pub fn attention_regs_shared_bytes(c: u32, qkv_in: bool) -> u32 {
    let head = 64 * (16 + b::SHARED_PAD) * 2;
    let weights = if qkv_in { 3 * 16 * (c + b::SHARED_PAD) * 2 } else { 0 };
    (if qkv_in { 2 } else { 3 }) * head + 64 * 4 + b::RPB_ENTRIES.div_ceil(4) * 16 + weights
}

/// The most heads a level may have for its attention to take q, k and v in by role: each of a
/// window's workgroups (one a head) reads and normalises the window's stream rows again.
const QKV_ROLE_HEADS: usize = 3;
/// The fewest heads at which the attention takes a whole window a workgroup by role
/// ([`NetTiles::window`]).
const WINDOW_ROLE_HEADS: usize = 3;

impl Default for NetTiles {
    fn default() -> Self {
        NetTiles { rows: None, cols: None, head_cols: 32, even: true, attention_qpi: 1, attention_online: true, attention_coop: true, direct: Direct::Roles, mlp: true, mlp_weights: true, mlp_proj: true, linear_weights: Direct::Roles, attention_qkv: Direct::Roles, attention_window: Direct::Roles, attention_scores_f32: false, attention_regs: true, mlp_regs: true, linear_regs: true, stream16: true, mlp_head: true, expand_direct: true }
    }
}

/// `name`'s value when it is one of `allowed`; an error naming the variable otherwise.
fn setting(name: &str, allowed: &[u32]) -> std::result::Result<Option<u32>, (String, String)> {
    choice(name, std::env::var(name).ok().as_deref(), allowed)
}

/// A 0|1|2 setting of [`Direct`]'s kind: 0 off, 2 everywhere, 1 or unset by role.
fn direct_setting(name: &str) -> std::result::Result<Direct, (String, String)> {
    Ok(match setting(name, &[0, 1, 2])? {
        Some(0) => Direct::Off,
        Some(2) => Direct::All,
        _ => Direct::Roles,
    })
}

fn choice(name: &str, value: Option<&str>, allowed: &[u32]) -> std::result::Result<Option<u32>, (String, String)> {
    let Some(v) = value else { return Ok(None) };
    match v.trim().parse::<u32>() {
        Ok(n) if allowed.contains(&n) => Ok(Some(n)),
        _ => Err((name.to_string(), format!("'{v}': expected one of {allowed:?}"))),
    }
}

impl NetTiles {
    /// The settings from the environment: a value outside a variable's choices is an error naming
    /// the variable (the field) and what it takes.
    pub fn from_env() -> std::result::Result<Self, (String, String)> {
        let d = NetTiles::default();
        Ok(NetTiles {
            rows: setting("TESSEL_VK_COOP_ROWS", &[32, 64, 128])?,
            cols: setting("TESSEL_VK_COOP_COLS", &[16, 32, 64])?,
            head_cols: setting("TESSEL_VK_COOP_HEAD_COLS", &[16, 32, 64])?.unwrap_or(d.head_cols),
            even: setting("TESSEL_VK_COOP_EVEN", &[0, 1])? != Some(0),
            attention_qpi: setting("TESSEL_VK_ATTENTION_QPI", &[1, 2])?.unwrap_or(d.attention_qpi),
            attention_online: setting("TESSEL_VK_ATTENTION_ONLINE", &[0, 1])?.map_or(d.attention_online, |v| v == 1),
            attention_coop: setting("TESSEL_VK_ATTENTION_COOP", &[0, 1])? != Some(0),
            direct: direct_setting("TESSEL_VK_COOP_DIRECT")?,
            mlp: setting("TESSEL_VK_COOP_MLP", &[0, 1])? != Some(0),
            mlp_weights: setting("TESSEL_VK_COOP_MLP_W", &[0, 1])? != Some(0),
            mlp_proj: setting("TESSEL_VK_COOP_MLP_PROJ", &[0, 1])? != Some(0),
            linear_weights: direct_setting("TESSEL_VK_COOP_LINEAR_W")?,
            attention_window: direct_setting("TESSEL_VK_ATTENTION_WINDOW")?,
            attention_qkv: direct_setting("TESSEL_VK_ATTENTION_QKV")?,
            attention_scores_f32: setting("TESSEL_VK_ATTENTION_SCORES", &[16, 32])? == Some(32),
            attention_regs: setting("TESSEL_VK_ATTENTION_REGS", &[0, 1])? != Some(0),
            mlp_regs: setting("TESSEL_VK_MLP_REGS", &[0, 1])? != Some(0),
            linear_regs: setting("TESSEL_VK_LINEAR_REGS", &[0, 1])? != Some(0),
            stream16: setting("TESSEL_VK_STREAM16", &[0, 1])? != Some(0),
            mlp_head: setting("TESSEL_VK_MLP_HEAD", &[0, 1])? != Some(0),
            expand_direct: setting("TESSEL_VK_EXPAND_DIRECT", &[0, 1])? != Some(0),
        })
    }

    /// The start-up line's words: the tiles where the cooperative-matrix shader runs (`coop`),
    /// then the attention's path (`attention_coop`: the model runs attention_coop.comp;
    /// `regs_why`: why its softmax is not in registers where the setting asked for it).
    pub fn describe(&self, coop: bool, attention_coop: bool, regs_why: Option<&str>) -> String {
        let mut parts = vec![if self.stream16 { "streams in f16 (TESSEL_VK_STREAM16=0 for f32)" } else { "streams in f32 (TESSEL_VK_STREAM16=0, or a fused level)" }.to_string()];
        if coop {
            let rows = self.rows.map_or("32 rows at level 0 and its merge (staged: 128 where they fit), its embedding and MLP 64 (in registers every MLP 128), the head 128, the expansion out of level 2 128, 64 below".to_string(), |r| format!("{r} rows"));
            let cols = self.cols.map_or("chunks of 32 (the expansions out of level 2 and deeper 64)".to_string(), |c| format!("chunks of {c}"));
            parts.push(format!("tiles: {rows}, {cols}, head {} (TESSEL_VK_COOP_ROWS|COLS|HEAD_COLS)", self.head_cols));
            let weights = if self.mlp_weights {
                ", their weights in shared memory where they fit (TESSEL_VK_COOP_MLP_W=0 from the buffer)"
            } else {
                ", their weights from the buffer (TESSEL_VK_COOP_MLP_W=0)"
            };
            let proj = if self.mlp_proj {
                ", each with its block's attention projection first where it fits (TESSEL_VK_COOP_MLP_PROJ=0 apart)"
            } else {
                ", the attention projections apart (TESSEL_VK_COOP_MLP_PROJ=0)"
            };
            let regs = match (self.mlp_regs, regs_why) {
                (true, _) => ", their activations in registers (TESSEL_VK_MLP_REGS=0 in shared memory)".to_string(),
                (false, Some(why)) => format!(", their activations in shared memory ({why})"),
                (false, None) => String::new(),
            };
            let head = if !self.mlp_regs {
                ""
            } else if self.mlp_head {
                ", the last block's with the head where it fits (TESSEL_VK_MLP_HEAD=0 apart)"
            } else {
                ", the head apart (TESSEL_VK_MLP_HEAD=0)"
            };
            let proj = format!("{proj}{regs}{head}");
            let mlp = match (self.mlp, self.direct) {
                (false, _) => ", MLPs in two dispatches (TESSEL_VK_COOP_MLP=0)".to_string(),
                (true, Direct::All) => format!(", MLPs in one dispatch wherever they fit (TESSEL_VK_COOP_MLP=0 for two){weights}{proj}"),
                (true, _) => format!(", MLPs in one dispatch where it pays (TESSEL_VK_COOP_MLP=0 for two){weights}{proj}"),
            };
            let linear_w = match self.linear_weights {
                Direct::Off => ", the linear layers' weights from the buffer (TESSEL_VK_COOP_LINEAR_W=0)",
                Direct::Roles => ", the linear layers' weights in shared memory where it pays (TESSEL_VK_COOP_LINEAR_W=0 from the buffer, 2 everywhere they fit)",
                Direct::All => ", the linear layers' weights in shared memory wherever they fit (TESSEL_VK_COOP_LINEAR_W=2)",
            };
            let linear_regs = match (self.linear_regs, regs_why) {
                (true, _) => ", their staged input rows in registers (TESSEL_VK_LINEAR_REGS=0 in shared memory)".to_string(),
                (false, Some(why)) => format!(", their input rows staged in shared memory ({why})"),
                (false, None) => String::new(),
            };
            let expand = if self.expand_direct { ", expansions too where grid rows are whole 16s (TESSEL_VK_EXPAND_DIRECT=0 stages them)" } else { ", expansions staged (TESSEL_VK_EXPAND_DIRECT=0)" };
            let mlp = format!("{mlp}{linear_w}{linear_regs}{expand}");
            parts.push(match self.direct {
                Direct::Off => "results staged in shared memory (TESSEL_VK_COOP_DIRECT=0)".to_string(),
                Direct::Roles => format!("results straight from the accumulators where it pays (TESSEL_VK_COOP_DIRECT=0 stages them, 2 everywhere){mlp}"),
                Direct::All => format!("results straight from the accumulators in every layer that can (TESSEL_VK_COOP_DIRECT=2){mlp}"),
            });
        }
        if attention_coop {
            parts.push("attention: cooperative matrices (TESSEL_VK_ATTENTION_COOP=0 for the scalar one)".to_string());
            parts.push(match (self.attention_regs, regs_why) {
                (true, _) => "its softmax in registers (TESSEL_VK_ATTENTION_REGS=0 in shared memory)".to_string(),
                (false, Some(why)) => format!("its softmax in shared memory ({why})"),
                (false, None) => "its softmax in shared memory (TESSEL_VK_ATTENTION_REGS=0)".to_string(),
            });
            if !self.attention_regs {
                parts.push(if self.attention_scores_f32 { "scores in f32 (TESSEL_VK_ATTENTION_SCORES=32)" } else { "scores in f16 (TESSEL_VK_ATTENTION_SCORES=32 for f32)" }.to_string());
            }
            parts.push(match self.attention_qkv {
                Direct::Off => "q, k, v from the qkv layer (TESSEL_VK_ATTENTION_QKV=0)".to_string(),
                Direct::Roles if self.attention_regs => "q, k, v computed in the attention at every level that fits, with the softmax in registers (TESSEL_VK_ATTENTION_QKV=0 for the qkv layer)".to_string(),
                Direct::Roles => format!("q, k, v computed in the attention at levels of up to {QKV_ROLE_HEADS} heads (TESSEL_VK_ATTENTION_QKV=0 for the qkv layer, 2 everywhere)"),
                Direct::All => "q, k, v computed in the attention at every level that fits (TESSEL_VK_ATTENTION_QKV=2)".to_string(),
            });
            // The window setting only matters where q, k, v are computed in the attention.
            parts.extend((self.attention_qkv != Direct::Off).then(|| match self.attention_window {
                Direct::Off => "a workgroup a head (TESSEL_VK_ATTENTION_WINDOW=0)".to_string(),
                Direct::Roles if self.attention_regs => "there a window's heads in one workgroup (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head)".to_string(),
                Direct::Roles => format!("there a window's heads in one workgroup at levels of {WINDOW_ROLE_HEADS} heads or more (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head, 2 everywhere)"),
                Direct::All => "there a window's heads in one workgroup at every level (TESSEL_VK_ATTENTION_WINDOW=2)".to_string(),
            }));
            return parts.join(", ");
        }
        let pass = if self.attention_online { "one pass" } else { "two passes" };
        let queries = if self.attention_qpi == 1 { "1 query" } else { "2 queries" };
        parts.push(format!("attention: {pass}, {queries} an invocation (TESSEL_VK_ATTENTION_ONLINE|QPI)"));
        parts.join(", ")
    }

    /// Tokens a workgroup of the cooperative-matrix shader takes for layer `l` on a device with
    /// `shared_memory` bytes a workgroup.
    pub fn rows(&self, shared_memory: u32, l: &LinearSpec) -> u32 {
        self.rows.unwrap_or(if l.level == 0 {
            32
        } else if l.mode == b::MODE_EXPAND && l.level >= 2 && l.coop_shared_bytes(128, 16) + 1024 <= shared_memory {
            // The expansion out of level 2 at 128 rows (in chunks of 16, what fits beside them):
            // 0.032 -> 0.029 ms at 4K on the H100, where the expansion out of level 1 takes
            // chunks of 32 instead ([`NetTiles::cols`]; forty-seventh session).
            128
        } else if l.mode == b::MODE_MERGE && l.level == 1 && l.coop_shared_bytes(128, 16) + 1024 <= shared_memory {
            // The merge out of level 0: 0.145 -> 0.113 ms at 4K with 128 rows, where the merge
            // into level 2 loses with them (0.062 -> 0.185; thirty-seventh session). Where 128
            // rows do not fit the device's shared memory, the default.
            128
        } else {
            b::COOP_ROWS
        })
    }

    /// The output chunk of layer `l` on a device with `shared_memory` bytes a workgroup: the
    /// widest up to the layer's cap whose tiles fit with 1 KiB to spare, or for a residual layer
    /// (proj, fc2) the widest that divides its outputs (level 1's 48 as three chunks of 16: its
    /// fc2 0.101 -> 0.077 ms, thirty-fifth session). None: the layer takes the scalar shader.
    pub fn cols(&self, shared_memory: u32, l: &LinearSpec) -> Option<u32> {
        if l.inp % 16 != 0 {
            return None;
        }
        let cap = match l.mode {
            b::MODE_HEAD => self.head_cols,
            // The expansion out of level 1 in chunks of 32: 0.063 -> 0.049 ms at 4K on the H100
            // with the streams in f16 (forty-seventh session); out of deeper levels 64, what fits.
            b::MODE_EXPAND if l.level == 1 => self.cols.unwrap_or(32),
            b::MODE_EXPAND => self.cols.unwrap_or(64),
            _ => self.cols.unwrap_or(b::COOP_COLS_DEFAULT),
        };
        let rows = self.rows(shared_memory, l);
        let fits: Vec<u32> = [64, 32, 16].into_iter().filter(|&c| c <= cap && l.coop_shared_bytes(rows, c) + 1024 <= shared_memory).collect();
        let even = self.even && l.residual == 1;
        even.then(|| fits.iter().copied().find(|&c| l.out % c == 0)).flatten().or(fits.first().copied())
    }

    /// The tile where layer `l` takes linear_direct_coop.comp: plain and merge layers, and the
    /// head where pixels have 8 embedding values (`p`; its per-pixel path is a 16 x 16 product
    /// per two pixels), whose shared memory fits with 1 KiB to spare. The expansion's scatter
    /// takes linear_coop.comp, except where every grid row is whole 16s of tokens (`rows16`,
    /// `expand_direct`): there it scatters its accumulators as they are. Chunks of up to 64
    /// outputs (four accumulators), or
    /// `TESSEL_VK_COOP_COLS`. By role ([`Direct::Roles`]), from the per-dispatch times at 4K on
    /// the H100 (thirty-ninth session, staged against direct): every layer whose inputs pass
    /// through shared memory anyway (a LayerNorm first: qkv 0.147 -> 0.125 ms at level 0, fc1,
    /// the head 0.298 -> 0.255), and layers reading f16 rows as matrices from the buffer where
    /// those are few and narrow (level 1's and level 2's proj 0.034 -> 0.027, level 1's fc2
    /// 0.055 -> 0.049); not level 0's (the embedding 0.185 -> 0.199, proj 0.059 -> 0.068, fc2
    /// 0.109 -> 0.124), not rows wider than 96 (level 2's fc2 0.053 -> 0.059), and not the merge
    /// into level 2 (merge2 0.064 -> 0.101); the merge out of level 0 at 32 rows (below).
    pub fn direct(&self, shared_memory: u32, l: &LinearSpec, p: u32) -> Option<DirectTile> {
        let expand = l.mode == b::MODE_EXPAND && l.rows16 == 1 && self.expand_direct;
        let mode = matches!(l.mode, b::MODE_PLAIN | b::MODE_MERGE) || expand || (l.mode == b::MODE_HEAD && p == 8 && b::HEAD_CHANNELS == 8);
        let from_buffer = l.ln == 0 && l.mode == b::MODE_PLAIN && l.in_f16 == 1;
        // Level 0's layers that read f16 rows from the buffer (the embedding, proj) do pay where
        // their weights are in shared memory (`weights_first` below).
        let (role, weights_first) = match self.direct {
            Direct::Off => (false, false),
            Direct::Roles => ((l.mode != b::MODE_MERGE || l.level == 1) && !(from_buffer && (l.level == 0 || l.inp > 96)), from_buffer && l.level == 0),
            Direct::All => (true, false),
        };
        if !(role || weights_first) || !mode || l.inp % 16 != 0 || l.out % 16 != 0 {
            return None;
        }
        let fits = |rows: u32| l.direct_shared_bytes(rows) + 1024 <= shared_memory;
        let cols = self.cols.unwrap_or(64);
        // Rows of their own, where the setting leaves them to the layer (fortieth session, H100 at
        // 4K): the head 0.258 -> 0.232 ms with 128 rows instead of level 0's 32; the merge out of
        // level 0 0.118 ms staged at 128 rows, 0.108 here at 32 (at 128, 223 registers).
        // The embedding (level 0's plain layer with no LayerNorm and no residual) 0.137 -> 0.132
        // at 64 rows, where level 0's proj loses with them (0.059 -> 0.095; forty-second session).
        let own = match (self.rows, l.mode, l.level) {
            (None, b::MODE_HEAD, _) => Some(128),
            (None, b::MODE_MERGE, 1) => Some(32),
            (None, b::MODE_PLAIN, 0) if l.ln == 0 && l.residual == 0 => Some(64),
            _ => None,
        };
        let rows = own.filter(|&r| fits(r)).unwrap_or_else(|| self.rows(shared_memory, l));
        let tile = fits(rows).then_some(DirectTile { rows, cols })?;
        (role || self.direct_weights_shared(shared_memory, l, &tile)).then_some(tile)
    }

    /// Whether layer `l` on linear_direct_coop.comp with `tile` copies its weights into shared
    /// memory (linear_direct_w_coop) and loads every B operand from there: where they fit beside
    /// its rows and bias with 1 KiB to spare, by role (`linear_weights`) every such layer but the
    /// merge into level 2. At 4K on the H100 (forty-second session): the head 0.232 -> 0.197 ms,
    /// level 2's proj 0.029 -> 0.021, level 1's 0.023 -> 0.022, and with them level 0's embedding
    /// and proj take this shader (0.185 -> 0.137 and 0.060 -> 0.059 ms; from the buffer they
    /// lost: [`NetTiles::direct`]). The merge out of level 0 was slower then (0.108 -> 0.126);
    /// with the rows in shared memory padded it is faster (0.100 -> 0.097, forty-third and
    /// forty-fourth sessions), so it takes them too.
    pub fn direct_weights_shared(&self, shared_memory: u32, l: &LinearSpec, tile: &DirectTile) -> bool {
        let role = match self.linear_weights {
            Direct::Off => false,
            Direct::Roles => l.mode != b::MODE_MERGE || l.level == 1,
            Direct::All => true,
        };
        role && l.direct_shared_bytes(tile.rows) + l.direct_weight_bytes() + 1024 <= shared_memory
    }

    /// Where layer `l` takes linear_direct_coop.comp: the variant ([`NetTiles::direct`]'s tile,
    /// its weights where [`NetTiles::direct_weights_shared`] puts them) and its rows a workgroup.
    /// The one decision that both building the pipelines and recording the dispatch read.
    pub fn direct_dispatch(&self, shared_memory: u32, l: &LinearSpec, p: u32) -> Option<(Variant, u32)> {
        let tile = self.direct(shared_memory, l, p)?;
        Some((l.direct_variant(p, &tile, self.direct_weights_shared(shared_memory, l, &tile), self.linear_regs), tile.rows))
    }

    /// The same for a block's MLP in one dispatch (`fc1` its first layer; [`NetTiles::mlp`],
    /// [`NetTiles::mlp_proj`], [`NetTiles::mlp_weights_shared`]): the variant, its rows a
    /// workgroup, and whether it takes the block's attention projection.
    pub fn mlp_dispatch(&self, shared_memory: u32, fc1: &LinearSpec, p: u32) -> Option<(Variant, u32, bool)> {
        let tile = self.mlp(shared_memory, fc1)?;
        let proj = self.mlp_proj(shared_memory, fc1, &tile);
        let weights = if self.mlp_weights_shared(shared_memory, fc1, &tile, proj) {
            MlpWeights::Shared
        } else if self.mlp_weight_halves(shared_memory, fc1) {
            MlpWeights::Halves
        } else {
            MlpWeights::Buffer
        };
        Some((fc1.mlp_variant(p, &tile, weights, proj, self.mlp_in_regs(fc1)), tile.rows, proj))
    }

    /// Where the network's last block (at level 0, `fc1` its first layer) runs its MLP and the
    /// head in one dispatch (mlp_proj_head_regs_w_coop; `mlp_head`): its MLP dispatch is the one
    /// in registers with the projection first and both layers' weights in shared memory, the
    /// head's weights fit beside them with 1 KiB to spare, the head has the contract's 128
    /// channels a token and the per-pixel path (if any) 8 values a pixel. The stream is then
    /// neither stored by the MLP nor read again by the head. The variant (the MLP's
    /// specialisation) and its rows a workgroup.
    pub fn mlp_head_dispatch(&self, shared_memory: u32, fc1: &LinearSpec, cfg: &tessel_model::config::NetworkConfig) -> Option<(Variant, u32)> {
        let p = cfg.pixel_embed as u32;
        let (variant, rows, proj) = self.mlp_dispatch(shared_memory, fc1, p)?;
        let fits = proj && variant.shader == "mlp_proj_regs_w_coop" && fc1.level == 0;
        let head = cfg.head_token_channels() as u32;
        let bytes = fc1.mlp_weight_bytes() + fc1.mlp_proj_weight_bytes() + head * (fc1.inp + b::SHARED_PAD) * 2;
        let pixel = !cfg.pixel_head || cfg.pixel_embed == 8;
        (self.mlp_head && fits && pixel && head == 16 * b::HEAD_CHANNELS && bytes + 1024 <= shared_memory)
            .then(|| (Variant { shader: "mlp_proj_head_regs_w_coop", ..variant }, rows))
    }

    /// Whether the MLP in registers (`fc1` its first layer) takes its weights into shared memory
    /// a half of the hidden at a time (mlp_regs_wh_coop, mlp_proj_regs_wh_coop): with
    /// `mlp_weights`, where the whole do not fit but a half does with 1 KiB to spare (level 2 of
    /// tessel-v12: 39,936 bytes against 78,336), the hidden in halves of whole pairs of chunks,
    /// half the hidden at least as wide as the level (the projection's weights wait in the first
    /// half's fc1 rows). At 4K on the H100 level 2's proj and MLP 0.091 -> 0.050 ms, and 0.045
    /// with the projection's weights there too (forty-sixth session).
    pub fn mlp_weight_halves(&self, shared_memory: u32, fc1: &LinearSpec) -> bool {
        let half = fc1.out / 2;
        self.mlp_in_regs(fc1) && self.mlp_weights && fc1.mlp_weight_bytes() + 1024 > shared_memory && fc1.out % 64 == 0 && half >= fc1.inp && fc1.mlp_weight_half_bytes() + 1024 <= shared_memory
    }

    /// Whether a block's MLP in one dispatch (`fc1` its first layer) keeps its activations in
    /// registers (mlp_regs_coop.comp): with `mlp_regs`, where that shader takes its widths.
    pub fn mlp_in_regs(&self, fc1: &LinearSpec) -> bool {
        self.mlp_regs && fc1.mlp_regs_fits()
    }

    /// Whether the MLP in one dispatch on `tile` (`fc1` its first layer) takes its block's
    /// attention projection first (mlp_proj_coop): with `mlp_proj`, where the level is at most
    /// 64 wide (the new stream rows wait in four accumulators) and the projection's bias fits
    /// beside the rows with 1 KiB to spare.
    /// In registers (`mlp_regs`) at levels up to 96 wide, where nothing but the weights needs
    /// shared memory.
    pub fn mlp_proj(&self, shared_memory: u32, fc1: &LinearSpec, tile: &DirectTile) -> bool {
        if self.mlp_in_regs(fc1) {
            return self.mlp_proj;
        }
        self.mlp_proj && fc1.inp <= 64 && fc1.inp % 4 == 0 && fc1.mlp_shared_bytes(tile.rows) + fc1.mlp_proj_bytes() + 1024 <= shared_memory
    }

    /// Rows a workgroup where a block's MLP (`fc1` its first layer) runs as one dispatch
    /// (mlp_direct_coop.comp): with results in the accumulators and `mlp`, the layer's rows or
    /// fewer (halved down to 16) so that its shared memory fits with 1 KiB to spare. By role,
    /// only where that is at most MLP_ROLE_SHARED at the layer's rows: level 1's MLP (22.5 KiB) 0.089 ->
    /// 0.073 ms at 4K on the H100 in one dispatch, level 0's (9 KiB) 0.216 either way, level 2's
    /// (45 KiB, 110 registers) 0.101 -> 0.115 (thirty-ninth session).
    pub fn mlp(&self, shared_memory: u32, fc1: &LinearSpec) -> Option<DirectTile> {
        if self.direct == Direct::Off || !self.mlp || fc1.inp % 16 != 0 || fc1.out % 16 != 0 {
            return None;
        }
        // In registers (mlp_regs_coop.comp) the rows take no shared memory, and by role every
        // level's MLP is one dispatch: level 2's proj, fc1 and fc2 0.105 -> 0.092 ms at 4K on the
        // H100 (forty-fifth session).
        let regs = self.mlp_in_regs(fc1);
        // Level 0's MLP at 64 rows, not the level's 32: 0.187 -> 0.170 ms at 4K on the H100
        // (forty-second session, with its weights in shared memory). In registers, 128 rows at
        // every level (eight subgroups a workgroup, each its block): at 4K on the H100 with the
        // streams in f16, level 0's 0.055 -> 0.052 ms, level 1's 0.029-0.032 -> 0.026-0.029,
        // level 2's 0.044 / 0.038 -> 0.038 / 0.034, the last block's with the head 0.194 -> 0.189
        // (forty-seventh session).
        let mut rows = match (self.rows, regs, fc1.level) {
            (None, true, _) => 128,
            (None, false, 0) => 64,
            _ => self.rows(shared_memory, fc1),
        };
        if self.direct == Direct::Roles && !regs && fc1.mlp_shared_bytes(rows) > MLP_ROLE_SHARED {
            return None;
        }
        let need = |rows| if regs { 0 } else { fc1.mlp_shared_bytes(rows) };
        while rows > 16 && need(rows) + 1024 > shared_memory {
            rows /= 2;
        }
        (need(rows) + 1024 <= shared_memory).then_some(DirectTile { rows, cols: self.cols.unwrap_or(64) })
    }

    /// Whether the MLP in one dispatch on `tile` (`fc1` its first layer) copies its weights into
    /// shared memory (mlp_direct_w_coop): with `mlp_weights`, where they fit beside the rows and
    /// biases with 1 KiB to spare. Its B operands then come from shared memory instead of the
    /// buffer: level 0's MLP 0.216 -> 0.187 ms, level 1's 0.067 -> 0.056 (41.5 KiB) at 4K on the
    /// H100 (forty-first session).
    /// `proj`: the projection's bias is there as well ([`NetTiles::mlp_proj`]).
    /// In registers (`mlp_regs`) the weights are all the shared memory it takes.
    pub fn mlp_weights_shared(&self, shared_memory: u32, fc1: &LinearSpec, tile: &DirectTile, proj: bool) -> bool {
        if self.mlp_in_regs(fc1) {
            // The projection's weights join them (mlp_regs_coop.comp's WP).
            let proj = if proj { fc1.mlp_proj_weight_bytes() } else { 0 };
            return self.mlp_weights && fc1.mlp_weight_bytes() + proj + 1024 <= shared_memory;
        }
        let proj = if proj { fc1.mlp_proj_bytes() } else { 0 };
        self.mlp_weights && fc1.mlp_shared_bytes(tile.rows) + fc1.mlp_weight_bytes() + proj + 1024 <= shared_memory
    }

    /// Whether the cooperative-matrix attention at width `c` computes its head's q, k and v
    /// itself (attention_qkv_coop) on a device with `shared_memory` bytes a workgroup: where its
    /// shared memory fits with 1 KiB to spare, and by role at levels of up to QKV_ROLE_HEADS
    /// heads (at every level with the softmax in registers).
    pub fn attention_qkv(&self, c: usize, shared_memory: u32) -> bool {
        let f32s = self.attention_scores_f32;
        let window = self.window(c, shared_memory);
        let bytes = match (self.attention_regs, window) {
            (true, _) => attention_regs_shared_bytes(c as u32, true),
            (false, true) => attention_qkv_window_shared_bytes(c as u32, f32s),
            (false, false) => attention_qkv_shared_bytes(c as u32, f32s),
        };
        let fits = c % 16 == 0 && bytes + 1024 <= shared_memory;
        match self.attention_qkv {
            Direct::Off => false,
            // With the softmax in registers at every level: level 2's qkv and attention 0.084 ->
            // 0.068 ms at 4K on the H100, six heads a workgroup (forty-fifth session).
            Direct::Roles => fits && (self.attention_regs || c / b::HEAD_DIM as usize <= QKV_ROLE_HEADS),
            Direct::All => fits,
        }
    }

    /// Whether the attention at width `c`, where it computes its q, k and v, takes every head of
    /// its window in one workgroup (attention_qkv_window_coop: the window's rows read and
    /// normalised once instead of once a head). By role at levels of WINDOW_ROLE_HEADS heads or
    /// more: at 4K on the H100 level 1's attention (three heads) 0.116 -> 0.112 ms, level 0's
    /// (two) 0.289 -> 0.293 (forty-first session). With the softmax in registers at every level:
    /// level 0's 0.120 -> 0.107 ms (forty-sixth session).
    /// Only where its shared memory fits with 1 KiB to spare (not at 96 channels on 48 KiB, nor
    /// at 48 with the scores in f32).
    pub fn window(&self, c: usize, shared_memory: u32) -> bool {
        let bytes = if self.attention_regs { attention_regs_shared_bytes(c as u32, true) } else { attention_qkv_window_shared_bytes(c as u32, self.attention_scores_f32) };
        let fits = c % 16 == 0 && bytes + 1024 <= shared_memory;
        fits && match self.attention_window {
            Direct::Off => false,
            Direct::Roles => self.attention_regs || c / b::HEAD_DIM as usize >= WINDOW_ROLE_HEADS,
            Direct::All => true,
        }
    }

    /// The unfused blocks' attention (attention.comp) at width `c`. Online (the default): each
    /// score computed once, its softmax with a running maximum; the shaders' network 4.091 ->
    /// 4.067 ms at 4K, and with one query an invocation 4.023 (thirty-sixth session). Two queries
    /// an invocation share each key and value read from shared memory, which paid with the
    /// two-pass softmax (level 0's attention 0.329 -> 0.321 ms, thirty-fifth session).
    /// `coop`: the model runs the cooperative-matrix attention (attention_coop.comp, the same
    /// push constants and grid; level 0's attention 0.248 -> 0.202 ms at 4K on the H200,
    /// thirty-seventh session).
    pub fn attention(&self, c: usize, coop: bool, qkv_in: bool, shared_memory: u32) -> Variant {
        if coop && self.attention_regs {
            let name = match (qkv_in, self.window(c, shared_memory)) {
                (false, _) => "attention_regs_coop",
                (true, false) => "attention_qkv_regs_coop",
                (true, true) => "attention_qkv_window_regs_coop",
            };
            return Variant::new(name, &[c as u32, self.stream16 as u32]);
        }
        if coop {
            let name = match (qkv_in, self.window(c, shared_memory), self.attention_scores_f32) {
                (false, _, false) => "attention_coop",
                (true, false, false) => "attention_qkv_coop",
                (true, true, false) => "attention_qkv_window_coop",
                (false, _, true) => "attention_f32_coop",
                (true, false, true) => "attention_qkv_f32_coop",
                (true, true, true) => "attention_qkv_window_f32_coop",
            };
            return Variant::new(name, &[c as u32, self.stream16 as u32]);
        }
        let qpi = self.attention_qpi;
        Variant::new("attention", &[c as u32, b::WINDOW_TOKENS / qpi, qpi, self.attention_online as u32])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(inp: usize, out: usize, level: u32) -> LinearSpec {
        LinearSpec { level, ..LinearSpec::plain(inp, out) }
    }

    #[test]
    fn each_layer_takes_its_roles_tile() {
        let t = NetTiles::default();
        let big = 48 * 1024;
        // Rows: 32 over level 0's tokens, 64 below.
        assert_eq!(t.rows(big, &spec(128, 32, 0)), 32);
        assert_eq!(t.rows(big, &spec(96, 288, 2)), 64);
        assert_eq!(NetTiles { rows: Some(128), ..t }.rows(big, &spec(128, 32, 0)), 128);
        // The merge out of level 0 takes 128, the one into level 2 the default.
        let merge = |inp, out, level| LinearSpec { mode: b::MODE_MERGE, ..spec(inp, out, level) };
        assert_eq!(t.rows(64 * 1024, &merge(128, 48, 1)), 128);
        assert_eq!(t.rows(big, &merge(192, 96, 2)), 64);
        assert_eq!(NetTiles { rows: Some(64), ..t }.rows(64 * 1024, &merge(128, 48, 1)), 64);
        assert_eq!(t.rows(big, &merge(128, 48, 1)), 64, "128 padded rows of 128 inputs do not fit 48 KiB");
        // Chunks: 32 for a plain layer and the expansion out of level 1, 64 for a deeper one
        // where they fit (beside 128 rows, 16), the head its own.
        assert_eq!(t.cols(big, &spec(32, 96, 0)), Some(32));
        let expand = LinearSpec { mode: b::MODE_EXPAND, residual: 1, ..spec(48, 128, 1) };
        assert_eq!(t.cols(big, &expand), Some(32));
        assert_eq!(t.rows(big, &expand), 64);
        assert_eq!(NetTiles { cols: Some(64), ..t }.cols(big, &expand), Some(64), "TESSEL_VK_COOP_COLS sets the expansions' too");
        let expand2 = LinearSpec { mode: b::MODE_EXPAND, residual: 1, ..spec(96, 192, 2) };
        assert_eq!((t.rows(big, &expand2), t.cols(big, &expand2)), (128, Some(16)));
        assert_eq!((t.rows(32 * 1024, &expand2), t.cols(32 * 1024, &expand2)), (64, Some(32)), "lavapipe's 32 KiB: 64 rows");
        assert_eq!(NetTiles { rows: Some(64), ..t }.rows(big, &expand2), 64);
        let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, ..spec(32, 128, 0) };
        assert_eq!(t.cols(big, &head), Some(32));
        assert_eq!(NetTiles { head_cols: 16, ..t }.cols(big, &head), Some(16));
        // A residual layer of 48 outputs: chunks of 16 (they divide 48), or 32 without `even`.
        let fc2 = LinearSpec { residual: 1, in_f16: 1, ..spec(96, 48, 1) };
        assert_eq!(t.cols(big, &fc2), Some(16));
        assert_eq!(NetTiles { even: false, ..t }.cols(big, &fc2), Some(32));
        // What does not fit the device's shared memory is not taken; nothing fits: scalar.
        let wide = spec(192, 96, 2);
        let need = |c| wide.coop_shared_bytes(64, c) + 1024;
        assert_eq!(t.cols(need(16), &wide), Some(16));
        assert_eq!(t.cols(need(16) - 1, &wide), None);
        assert_eq!(t.cols(big, &spec(40, 48, 1)), None, "inputs not a multiple of 16 take the scalar shader");
    }

    #[test]
    fn the_start_up_words_name_the_tiles_and_the_attention() {
        let t = NetTiles::default();
        let d = t.describe(true, false, None);
        assert!(d.contains("32 rows at level 0 and its merge (staged: 128 where they fit), its embedding and MLP 64 (in registers every MLP 128), the head 128, the expansion out of level 2 128, 64 below") && d.contains("head 32") && d.contains("attention: one pass, 1 query"), "{d}");
        let d = NetTiles { rows: Some(128), attention_online: false, attention_qpi: 2, ..t }.describe(false, false, None);
        assert!(!d.contains("tiles") && d.contains("attention: two passes, 2 queries"), "{d}");
        assert!(NetTiles { rows: Some(128), ..t }.describe(true, false, None).contains("tiles: 128 rows"));
        let d = t.describe(true, true, None);
        assert!(d.contains("attention: cooperative matrices (TESSEL_VK_ATTENTION_COOP=0") && !d.contains("query"), "{d}");
    }

    #[test]
    fn expansions_scatter_their_accumulators_where_grid_rows_are_whole_16s() {
        let t = NetTiles::default();
        let big = 48 * 1024;
        let cfg = tessel_model::config::NetworkConfig::default();
        let layers = crate::model::Layers::with_stream16(&cfg, true);
        let (e1, e2) = (layers.expand[0], layers.expand[1]);
        assert_eq!((e1.rows16, e2.rows16), (1, 0), "level 1's rows are 16s of tokens, level 2's only 8s");
        let v = t.direct_dispatch(big, &e1, 8).unwrap();
        assert_eq!((v.0.shader, v.1), ("linear_direct_w_coop", 64), "the expansion into level 0, its weights in shared memory");
        assert_eq!(e1.direct_shared_bytes(64), 32 + 16 * 128 * 2, "its input rows read as matrices from the buffer");
        assert!(t.direct_dispatch(big, &e2, 8).is_none(), "the expansion out of level 2 stays staged");
        assert!(NetTiles { expand_direct: false, ..t }.direct_dispatch(big, &e1, 8).is_none(), "the kill switch");
        assert!(NetTiles { direct: Direct::Off, ..t }.direct_dispatch(big, &e1, 8).is_none());
        assert!(t.describe(true, true, None).contains("expansions too where grid rows are whole 16s (TESSEL_VK_EXPAND_DIRECT=0 stages them)"));
    }

    #[test]
    fn plain_and_merge_layers_keep_their_results_in_the_accumulators() {
        let t = NetTiles::default();
        assert_eq!(t.direct, Direct::Roles, "the default since the H100 timed it");
        let all = NetTiles { direct: Direct::All, ..t };
        let big = 48 * 1024;
        let qkv = LinearSpec { ln: 1, out_f16: 1, ..spec(96, 288, 2) };
        let fc2 = LinearSpec { residual: 1, in_f16: 1, ..spec(64, 32, 0) };
        let merge = LinearSpec { mode: b::MODE_MERGE, ..spec(128, 48, 1) };
        let tile = |rows, cols| Some(DirectTile { rows, cols });
        assert_eq!(t.direct(big, &qkv, 8), tile(64, 64));
        // f16 rows read from the buffer: by role only below level 0 and up to 96 wide, where the
        // weights stay in the buffer (TESSEL_VK_COOP_LINEAR_W=0; with them in shared memory,
        // level 0's as well: the next test).
        let t = NetTiles { linear_weights: Direct::Off, ..t };
        assert_eq!(t.direct(big, &fc2, 8), None);
        assert_eq!(all.direct(big, &fc2, 8), tile(32, 64));
        let proj1 = LinearSpec { residual: 1, in_f16: 1, ..spec(48, 48, 1) };
        let fc2_2 = LinearSpec { residual: 1, in_f16: 1, ..spec(192, 96, 2) };
        let embed = LinearSpec { in_f16: 1, ..spec(128, 32, 0) };
        assert_eq!(t.direct(big, &proj1, 8), tile(64, 64));
        assert_eq!(t.direct(big, &fc2_2, 8), None);
        assert_eq!(t.direct(big, &embed, 8), None);
        let t = NetTiles::default();
        // The merge out of level 0 by role at 32 rows (not its staged 128); the merge into level 2
        // stages its results but with TESSEL_VK_COOP_DIRECT=2.
        assert_eq!(t.direct(big, &merge, 8), tile(32, 64));
        assert_eq!(NetTiles { rows: Some(128), ..t }.direct(big, &merge, 8), tile(128, 64), "the setting rules");
        let merge2 = LinearSpec { mode: b::MODE_MERGE, ..spec(192, 96, 2) };
        assert_eq!(t.direct(big, &merge2, 8), None);
        assert_eq!(all.direct(big, &merge2, 8), tile(64, 64));
        // Staged inputs count, unstaged ones do not: fc2's f16 rows are read as matrices.
        assert_eq!(qkv.direct_shared_bytes(64), 64 * (96 + b::SHARED_PAD) * 2 + 16 * 288 * 2);
        assert_eq!(fc2.direct_shared_bytes(32), 32 + 16 * 32 * 2);
        // The head where pixels have 8 embedding values; the expansion's scatter never.
        let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, out_f16: 1, ..spec(32, 128, 0) };
        assert_eq!(t.direct(big, &head, 8), tile(128, 64), "the head's own rows");
        assert_eq!(t.direct(head.direct_shared_bytes(128) + 1023, &head, 8), tile(32, 64), "level 0's where 128 do not fit");
        assert_eq!(head.direct_shared_bytes(32), 32 * (32 + b::SHARED_PAD) * 2 + 16 * 128 * 4 + 512);
        assert_eq!(t.direct(big, &head, 4), None);
        let expand = LinearSpec { mode: b::MODE_EXPAND, residual: 1, ..spec(48, 128, 1) };
        assert_eq!(all.direct(big, &expand, 8), None);
        // The kill switch, the chunk setting, and a device whose shared memory is too small.
        let off = NetTiles { direct: Direct::Off, ..t };
        assert_eq!(off.direct(big, &qkv, 8), None);
        assert_eq!(NetTiles { cols: Some(32), ..t }.direct(big, &qkv, 8), tile(64, 32));
        assert_eq!(t.direct(qkv.direct_shared_bytes(64) + 1023, &qkv, 8), None);
        assert!(t.describe(true, true, None).contains("results straight from the accumulators where it pays (TESSEL_VK_COOP_DIRECT=0 stages them"));
        assert!(all.describe(true, true, None).contains("results straight from the accumulators in every layer that can (TESSEL_VK_COOP_DIRECT=2)"));
        // The MLP in one dispatch: the level's rows where they fit (level 0's 64, not 32), fewer
        // where not, none without `direct` or with its own switch off. First with its activations
        // in shared memory (TESSEL_VK_MLP_REGS=0, or where the layout probe fails).
        let regs = t;
        let (t, all) = (NetTiles { mlp_regs: false, ..t }, NetTiles { mlp_regs: false, ..all });
        let fc1 = |c: usize, level| LinearSpec { act: 1, ln: 1, out_f16: 1, ..spec(c, 2 * c, level) };
        assert_eq!(t.mlp(big, &fc1(32, 0)), tile(64, 64));
        assert_eq!(t.mlp(fc1(32, 0).mlp_shared_bytes(64) + 1023, &fc1(32, 0)), tile(32, 64), "fewer where 64 do not fit");
        assert_eq!(NetTiles { rows: Some(32), ..t }.mlp(big, &fc1(32, 0)), tile(32, 64), "the setting rules");
        assert_eq!(t.mlp(big, &fc1(48, 1)), tile(64, 64), "{}", fc1(48, 1).mlp_shared_bytes(64));
        assert_eq!(NetTiles { cols: Some(32), ..t }.mlp(big, &fc1(32, 0)), tile(64, 32), "chunks of TESSEL_VK_COOP_COLS");
        // By role not where it needs more than 24 KiB at the level's rows; with
        // TESSEL_VK_COOP_DIRECT=2 wherever it fits.
        assert_eq!(t.mlp(big, &fc1(96, 2)), None, "{}", fc1(96, 2).mlp_shared_bytes(64));
        assert_eq!(all.mlp(big, &fc1(96, 2)), tile(64, 64));
        assert_eq!(all.mlp(32 * 1024, &fc1(96, 2)), tile(32, 64), "lavapipe's 32 KiB");
        assert_eq!(all.mlp(8 * 1024, &fc1(96, 2)), None);
        // Their weights in shared memory where they fit beside the rows: levels 0 and 1 on 48
        // KiB (26.5 and 44.75 KiB with their rows padded), level 0 alone on lavapipe's 32, not
        // level 2, not with the switch.
        let w = |t: &NetTiles, shared, f: &LinearSpec| t.mlp(shared, f).is_some_and(|tl| t.mlp_weights_shared(shared, f, &tl, false));
        assert_eq!(fc1(48, 1).mlp_shared_bytes(64) + fc1(48, 1).mlp_weight_bytes(), 45_824, "as the H100 reports it");
        assert!(w(&t, big, &fc1(32, 0)) && w(&t, big, &fc1(48, 1)));
        assert!(w(&t, 32 * 1024, &fc1(32, 0)) && !w(&t, 32 * 1024, &fc1(48, 1)));
        assert!(!w(&all, big, &fc1(96, 2)));
        assert!(!w(&NetTiles { mlp_weights: false, ..t }, big, &fc1(32, 0)));
        assert!(t.describe(true, true, None).contains("their weights in shared memory where they fit (TESSEL_VK_COOP_MLP_W=0 from the buffer)"));
        assert_eq!(fc1(32, 0).mlp_variant(8, &DirectTile { rows: 32, cols: 64 }, MlpWeights::Shared, false, false).shader, "mlp_direct_w_coop");
        // The attention projection first: levels up to 64 wide where its bias fits as well (level
        // 1 with its weights: 47,360 bytes on 48 KiB), with the weights where they still fit.
        let d = |t: &NetTiles, shared, f: &LinearSpec| t.mlp_dispatch(shared, f, 8).map(|(v, rows, proj)| (v.shader, rows, proj));
        assert_eq!(d(&t, big, &fc1(32, 0)), Some(("mlp_proj_w_coop", 64, true)));
        assert_eq!(d(&t, big, &fc1(48, 1)), Some(("mlp_proj_w_coop", 64, true)));
        assert_eq!(fc1(48, 1).mlp_shared_bytes(64) + fc1(48, 1).mlp_weight_bytes() + fc1(48, 1).mlp_proj_bytes(), 47_360);
        assert_eq!(d(&t, 32 * 1024, &fc1(48, 1)), Some(("mlp_proj_coop", 64, true)), "lavapipe's 32 KiB");
        assert_eq!(d(&all, big, &fc1(96, 2)), Some(("mlp_direct_coop", 64, false)), "96 wide: proj apart");
        assert_eq!(d(&NetTiles { mlp_proj: false, ..t }, big, &fc1(32, 0)), Some(("mlp_direct_w_coop", 64, false)), "the kill switch");
        assert!(t.describe(true, true, None).contains("each with its block's attention projection first where it fits (TESSEL_VK_COOP_MLP_PROJ=0 apart)"));
        assert_eq!(NetTiles { mlp: false, ..t }.mlp(big, &fc1(32, 0)), None);
        assert_eq!(off.mlp(big, &fc1(32, 0)), None, "only with results in the accumulators");
        assert!(off.describe(true, true, None).contains("results staged"));
        // In registers: the weights are all the shared memory it takes, the projection comes
        // first at every width up to 96, and a workgroup takes 128 rows.
        assert_eq!(d(&regs, big, &fc1(32, 0)), Some(("mlp_proj_regs_w_coop", 128, true)));
        assert_eq!(d(&regs, big, &fc1(48, 1)), Some(("mlp_proj_regs_w_coop", 128, true)));
        let small = fc1(48, 1).mlp_weight_bytes() + fc1(48, 1).mlp_proj_weight_bytes() + 1023;
        assert_eq!(d(&regs, small, &fc1(48, 1)), Some(("mlp_proj_regs_coop", 128, true)), "the weights and the projection's where they fit with 1 KiB to spare");
        assert_eq!(d(&NetTiles { mlp_proj: false, ..regs }, small, &fc1(48, 1)), Some(("mlp_regs_w_coop", 128, false)), "without the projection's");
        assert_eq!(fc1(48, 1).mlp_weight_bytes() + fc1(48, 1).mlp_proj_weight_bytes(), 20_736 + 5_376);
        assert_eq!(d(&regs, big, &fc1(96, 2)), Some(("mlp_proj_regs_wh_coop", 128, true)), "96 wide, by role: the projection in registers too, the weights a half at a time");
        assert_eq!(fc1(96, 2).mlp_weight_half_bytes(), 39_936);
        assert_eq!(d(&regs, fc1(96, 2).mlp_weight_half_bytes() + 1023, &fc1(96, 2)), Some(("mlp_proj_regs_coop", 128, true)), "1 KiB to spare");
        assert_eq!(d(&NetTiles { mlp_weights: false, ..regs }, big, &fc1(96, 2)), Some(("mlp_proj_regs_coop", 128, true)), "TESSEL_VK_COOP_MLP_W=0");
        assert_eq!(d(&NetTiles { mlp_proj: false, ..regs }, big, &fc1(96, 2)), Some(("mlp_regs_wh_coop", 128, false)));
        assert!(!regs.mlp_weight_halves(big, &fc1(48, 1)), "the whole fit");
        assert!(!regs.mlp_weight_halves(big, &LinearSpec { act: 1, ln: 1, out_f16: 1, ..spec(96, 160, 2) }), "halves of 80: not whole pairs of chunks");
        assert_eq!(d(&NetTiles { mlp_proj: false, ..regs }, big, &fc1(32, 0)), Some(("mlp_regs_w_coop", 128, false)));
        assert!(!fc1(112, 2).mlp_regs_fits(), "seven tiles");
        assert!(regs.describe(true, true, None).contains("their activations in registers (TESSEL_VK_MLP_REGS=0 in shared memory)"));
        assert!(!t.describe(true, true, None).contains("TESSEL_VK_MLP_REGS"));
        let why = t.describe(true, true, Some("the register paths need subgroups of 32, the device's are 8"));
        assert!(why.contains("their activations in shared memory (the register paths need subgroups of 32"), "{why}");
        // The last block's MLP with the head: only on the register MLP with the projection and
        // both weights in shared memory, at level 0, the head's 128 x (32 + pad) halves beside
        // them with 1 KiB to spare (the driver's 22,528 bytes at 32 channels, forty-seventh
        // session), the per-pixel path (if any) of 8 values a pixel.
        let cfg = tessel_model::config::NetworkConfig::default();
        let h = |t: &NetTiles, shared, f: &LinearSpec, c: &tessel_model::config::NetworkConfig| t.mlp_head_dispatch(shared, f, c).map(|(v, rows)| (v.shader, v.spec, rows));
        let need = fc1(32, 0).mlp_weight_bytes() + fc1(32, 0).mlp_proj_weight_bytes() + 128 * (32 + b::SHARED_PAD) * 2;
        assert_eq!(need, 22_528);
        let (shader, spec, rows) = h(&regs, big, &fc1(32, 0), &cfg).unwrap();
        assert_eq!((shader, rows), ("mlp_proj_head_regs_w_coop", 128));
        assert_eq!(spec, regs.mlp_dispatch(big, &fc1(32, 0), 8).unwrap().0.spec, "the MLP's own constants");
        assert!(h(&regs, need + 1024, &fc1(32, 0), &cfg).is_some() && h(&regs, need + 1023, &fc1(32, 0), &cfg).is_none());
        assert!(h(&NetTiles { mlp_head: false, ..regs }, big, &fc1(32, 0), &cfg).is_none(), "the kill switch");
        assert!(h(&t, big, &fc1(32, 0), &cfg).is_none(), "not without the MLP in registers");
        assert!(h(&NetTiles { mlp_proj: false, ..regs }, big, &fc1(32, 0), &cfg).is_none(), "not without the projection first");
        assert!(h(&NetTiles { mlp_weights: false, ..regs }, big, &fc1(32, 0), &cfg).is_none(), "not with the weights from the buffer");
        assert!(h(&regs, big, &fc1(48, 1), &cfg).is_none(), "level 0 only");
        let p4 = tessel_model::config::NetworkConfig { pixel_embed: 4, pixel_head: true, ..cfg.clone() };
        assert!(h(&regs, big, &fc1(32, 0), &p4).is_none(), "the per-pixel path needs 8 values a pixel");
        assert!(regs.describe(true, true, None).contains("the last block's with the head where it fits (TESSEL_VK_MLP_HEAD=0 apart)"));
    }

    #[test]
    fn direct_layers_take_their_weights_into_shared_memory_where_they_fit() {
        let t = NetTiles::default();
        assert_eq!(t.linear_weights, Direct::Roles, "the default since the H100 timed it");
        let big = 48 * 1024;
        let tile = |rows, cols| Some(DirectTile { rows, cols });
        let embed = LinearSpec { in_f16: 1, ..spec(128, 32, 0) };
        let proj0 = LinearSpec { residual: 1, in_f16: 1, ..spec(32, 32, 0) };
        let proj2 = LinearSpec { residual: 1, in_f16: 1, ..spec(96, 96, 2) };
        let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, out_f16: 1, ..spec(32, 128, 0) };
        let merge1 = LinearSpec { mode: b::MODE_MERGE, ..spec(128, 48, 1) };
        let qkv2 = LinearSpec { ln: 1, out_f16: 1, ..spec(96, 288, 2) };
        // Where the weights go into shared memory: (the layer, its tile by default).
        let shared = |t: &NetTiles, shared: u32, l: &LinearSpec| t.direct(shared, l, 8).map(|tl| (tl, t.direct_weights_shared(shared, l, &tl)));
        // Level 0's layers on f16 rows from the buffer take the shader because their weights fit;
        // the embedding at 64 rows of its own, proj at the level's 32.
        assert_eq!(shared(&t, big, &embed), tile(64, 64).map(|tl| (tl, true)));
        assert_eq!(shared(&t, big, &proj0), tile(32, 64).map(|tl| (tl, true)));
        assert_eq!(shared(&t, big, &proj2), tile(64, 64).map(|tl| (tl, true)), "18 KiB of weights");
        assert_eq!(shared(&t, big, &head), tile(128, 64).map(|tl| (tl, true)));
        // The merge out of level 0 as well; not qkv at level 2 (54 KiB of weights).
        assert_eq!(shared(&t, big, &merge1), tile(32, 64).map(|tl| (tl, true)));
        assert_eq!(shared(&t, big, &qkv2), tile(64, 64).map(|tl| (tl, false)));
        assert_eq!(qkv2.direct_weight_bytes(), 288 * (96 + b::SHARED_PAD) * 2);
        // TESSEL_VK_COOP_LINEAR_W=2: every merge that takes the direct shader; =0: none, and
        // level 0's layers on f16 rows from the buffer go back to linear_coop.comp.
        let all = NetTiles { linear_weights: Direct::All, ..t };
        assert_eq!(shared(&all, big, &merge1), tile(32, 64).map(|tl| (tl, true)));
        let off = NetTiles { linear_weights: Direct::Off, ..t };
        assert_eq!(shared(&off, big, &head), tile(128, 64).map(|tl| (tl, false)));
        assert_eq!(off.direct(big, &embed, 8), None);
        // A smaller device: where the weights do not fit beside the rows, they stay in the buffer,
        // and level 0's layers on f16 rows from the buffer stay on linear_coop.comp.
        let small = embed.direct_shared_bytes(32) + embed.direct_weight_bytes() + 1023;
        assert_eq!(t.direct(small, &embed, 8), None);
        assert_eq!(shared(&t, 16 * 1024, &proj2), tile(64, 64).map(|tl| (tl, false)));
        assert_eq!(embed.direct_variant(8, &DirectTile { rows: 32, cols: 64 }, true, true).shader, "linear_direct_w_coop", "f16 rows from the buffer: nothing to stage");
        assert!(t.describe(true, true, None).contains("the linear layers' weights in shared memory where it pays (TESSEL_VK_COOP_LINEAR_W=0 from the buffer, 2 everywhere they fit)"));
    }

    #[test]
    fn staged_input_rows_go_into_registers_where_the_layout_allows() {
        let t = NetTiles::default();
        let big = 48 * 1024;
        let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, out_f16: 1, ..spec(32, 128, 0) };
        let merge1 = LinearSpec { mode: b::MODE_MERGE, ..spec(128, 48, 1) };
        let merge2 = LinearSpec { mode: b::MODE_MERGE, ..spec(192, 96, 2) };
        let embed = LinearSpec { in_f16: 1, ..spec(128, 32, 0) };
        let qkv2 = LinearSpec { ln: 1, out_f16: 1, ..spec(96, 288, 2) };
        // The head and the merge out of level 0 (its 2 x 2 gather of 32 channels: eight tiles)
        // take the register variants, with their weights in shared memory as before.
        assert_eq!(t.direct_dispatch(big, &head, 8).unwrap().0.shader, "linear_regs_w_coop");
        assert_eq!(t.direct_dispatch(big, &merge1, 8).unwrap().0.shader, "linear_regs_w_coop");
        assert_eq!(t.direct_dispatch(big, &qkv2, 8).unwrap().0.shader, "linear_regs_coop");
        // Nothing to stage (f16 rows from the buffer), or more than eight tiles: as before.
        assert_eq!(t.direct_dispatch(big, &embed, 8).unwrap().0.shader, "linear_direct_w_coop");
        assert!(!merge2.in_regs_fits() && merge1.in_regs_fits() && !embed.in_regs_fits());
        assert_eq!(merge2.direct_variant(8, &DirectTile { rows: 64, cols: 64 }, false, true).shader, "linear_direct_coop");
        // The same tiles either way; TESSEL_VK_LINEAR_REGS=0 (or a refused layout) stages them.
        let off = NetTiles { linear_regs: false, ..t };
        assert_eq!(off.direct_dispatch(big, &head, 8).unwrap(), (head.direct_variant(8, &DirectTile { rows: 128, cols: 64 }, true, false), 128));
        assert_eq!(off.direct_dispatch(big, &head, 8).unwrap().0.shader, "linear_direct_w_coop");
        assert_eq!(t.direct_dispatch(big, &head, 8).unwrap().0.spec, off.direct_dispatch(big, &head, 8).unwrap().0.spec);
        assert!(t.describe(true, true, None).contains("their staged input rows in registers (TESSEL_VK_LINEAR_REGS=0 in shared memory)"));
        assert!(off.describe(true, true, Some("no probe")).contains("their input rows staged in shared memory (no probe)"));
    }

    #[test]
    fn a_setting_outside_its_choices_is_refused_by_name() {
        assert_eq!(choice("TESSEL_VK_COOP_ROWS", None, &[32, 64, 128]), Ok(None));
        assert_eq!(choice("TESSEL_VK_COOP_ROWS", Some("128"), &[32, 64, 128]), Ok(Some(128)));
        let (field, msg) = choice("TESSEL_VK_COOP_ROWS", Some("48"), &[32, 64, 128]).unwrap_err();
        assert_eq!(field, "TESSEL_VK_COOP_ROWS");
        assert!(msg.contains("'48'") && msg.contains("[32, 64, 128]"), "{msg}");
        assert!(choice("TESSEL_VK_ATTENTION_QPI", Some("two"), &[1, 2]).is_err());
    }

    #[test]
    fn the_attention_variant_follows_its_setting() {
        // The softmax in shared memory (TESSEL_VK_ATTENTION_REGS=0, or a device whose layout the
        // register path cannot read); the register variants below.
        let base = NetTiles { attention_regs: false, ..NetTiles::default() };
        let one = base.attention(48, false, false, 48 * 1024);
        let two = NetTiles { attention_qpi: 2, ..base }.attention(48, false, false, 48 * 1024);
        assert_ne!(two, one);
        assert_eq!(one, Variant::new("attention", &[48, b::WINDOW_TOKENS, 1, 1]));
        assert_eq!(two, Variant::new("attention", &[48, b::WINDOW_TOKENS / 2, 2, 1]));
        assert_ne!(one, NetTiles { attention_online: false, ..base }.attention(48, false, false, 48 * 1024));
        assert_eq!(base.attention(48, true, false, 48 * 1024), Variant::new("attention_coop", &[48, 1]));
        // The second constant says whether the stream it reads (with q, k, v in the attention)
        // is f16 (TESSEL_VK_STREAM16).
        assert_eq!(NetTiles { stream16: false, ..base }.attention(48, true, false, 48 * 1024), Variant::new("attention_coop", &[48, 0]));
        assert_eq!(NetTiles { stream16: false, ..NetTiles::default() }.attention(96, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_coop", &[96, 0]));
        let d = base;
        assert_eq!(d.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_window_coop", &[48, 1]), "three heads: a window a workgroup by role");
        assert_eq!(d.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_coop", &[32, 1]), "two heads: a head a workgroup");
        let window = NetTiles { attention_window: Direct::All, ..d };
        assert_eq!(window.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_window_coop", &[32, 1]));
        assert_eq!(window.attention(48, true, false, 48 * 1024), Variant::new("attention_coop", &[48, 1]));
        let off = NetTiles { attention_window: Direct::Off, ..d };
        assert_eq!(off.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_coop", &[48, 1]));
        assert!(d.describe(true, true, None).contains("a window's heads in one workgroup at levels of 3 heads or more (TESSEL_VK_ATTENTION_WINDOW=0"));
        // TESSEL_VK_ATTENTION_SCORES=32: the same variants with their scores in f32.
        let f32s = NetTiles { attention_scores_f32: true, ..window };
        assert_eq!(f32s.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_window_f32_coop", &[32, 1]));
        assert_eq!(f32s.attention(48, true, false, 48 * 1024), Variant::new("attention_f32_coop", &[48, 1]));
        assert_eq!(NetTiles { attention_scores_f32: true, ..d }.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_f32_coop", &[32, 1]));
        assert_eq!(f32s.attention(32, false, false, 48 * 1024).shader, "attention", "the scalar attention has no such setting");
        assert!(d.describe(true, true, None).contains("scores in f16 (TESSEL_VK_ATTENTION_SCORES=32 for f32)"));
        assert!(f32s.describe(true, true, None).contains("scores in f32 (TESSEL_VK_ATTENTION_SCORES=32)"));
        // With q, k, v from the qkv layer the window setting does nothing, and is not named.
        let qkv_layer = NetTiles { attention_qkv: Direct::Off, ..d };
        assert!(!qkv_layer.describe(true, true, None).contains("TESSEL_VK_ATTENTION_WINDOW"));
        assert!(qkv_layer.describe(true, true, None).contains("q, k, v from the qkv layer (TESSEL_VK_ATTENTION_QKV=0)"));
            // The softmax in registers: one variant a role, whatever the scores' setting.
        let regs = NetTiles::default();
        assert_eq!(regs.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_coop", &[32, 1]), "two heads: a window a workgroup with the softmax in registers");
        assert_eq!(NetTiles { attention_window: Direct::Off, ..regs }.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_regs_coop", &[32, 1]));
        assert!(regs.describe(true, true, None).contains("there a window's heads in one workgroup (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head)"));
        assert_eq!(regs.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_coop", &[48, 1]));
        assert_eq!(regs.attention(96, true, false, 48 * 1024), Variant::new("attention_regs_coop", &[96, 1]));
        assert_eq!(NetTiles { attention_scores_f32: true, ..regs }.attention(96, true, false, 48 * 1024), Variant::new("attention_regs_coop", &[96, 1]));
        assert_eq!(regs.attention(48, false, false, 48 * 1024).shader, "attention", "the scalar attention has no such setting");
        assert!(regs.describe(true, true, None).contains("its softmax in registers (TESSEL_VK_ATTENTION_REGS=0 in shared memory)"));
        assert!(!regs.describe(true, true, None).contains("TESSEL_VK_ATTENTION_SCORES"), "no scores in memory to keep in f16 or f32");
        let why = base.describe(true, true, Some("the layout probe: no"));
        assert!(why.contains("its softmax in shared memory (the layout probe: no)") && why.contains("scores in f16"), "{why}");
    }

    #[test]
    fn the_attention_takes_q_k_v_in_by_role_where_it_fits() {
        let kb = 1024;
        let roles = NetTiles { attention_regs: false, ..NetTiles::default() };
        assert!(roles.attention_qkv(32, 48 * kb) && roles.attention_qkv(48, 48 * kb), "two or three heads: by role");
        assert!(!roles.attention_qkv(96, 48 * kb), "six heads: the qkv layer");
        let all = NetTiles { attention_qkv: Direct::All, ..roles };
        assert!(all.attention_qkv(48, 48 * kb) && all.attention_qkv(96, 48 * kb));
        let base = attention_coop_shared_bytes(false);
        assert_eq!(attention_qkv_shared_bytes(96, false), base + 13 * kb + 1536);
        assert_eq!(attention_qkv_shared_bytes(48, false), base + 16 + 1536, "rows in the softmax weights' bytes");
        assert!(!all.attention_qkv(96, attention_qkv_shared_bytes(96, false) + 1023), "1 KiB to spare");
        assert!(!NetTiles { attention_qkv: Direct::Off, ..roles }.attention_qkv(32, 48 * kb));
        assert!(roles.describe(true, true, None).contains("q, k, v computed in the attention at levels of up to 3 heads"));
    }

    #[test]
    fn the_cooperative_attention_needs_its_subgroups_and_shared_memory() {
        assert_eq!(attention_coop_shared_bytes(false), 28_816, "the driver's own figure on the H100");
        assert_eq!(attention_coop_shared_bytes(true), 38_032, "the driver's own figure on the H100");
        assert!(attention_coop_fits(32, 48 * 1024, true) && attention_coop_fits(64, 64 * 1024, false));
        assert!(!attention_coop_fits(16, 48 * 1024, false) && !attention_coop_fits(128, 48 * 1024, false), "row owners need 2 or 4 invocations a row");
        assert!(!attention_coop_fits(32, attention_coop_shared_bytes(false) - 1, false));
        assert!(attention_coop_fits(32, 32 * 1024, false) && !attention_coop_fits(32, 32 * 1024, true), "lavapipe's 32 KiB: f16 scores only");
        // With the scores in f32 a window's heads no longer fit one workgroup at 48 channels.
        let shm = NetTiles { attention_regs: false, ..NetTiles::default() };
        let f32s = NetTiles { attention_scores_f32: true, ..shm };
        assert!(shm.window(48, 48 * 1024) && !f32s.window(48, 48 * 1024));
        // The register variants as the H100's driver reports them (forty-fifth session, call 6:
        // 7,312 bytes at 16, 32, 48 and 96 channels with q, k, v in the attention), and a
        // window's six heads of 96 channels in one workgroup there.
        assert_eq!(attention_regs_shared_bytes(96, false), 10_384);
        assert_eq!(attention_regs_shared_bytes(96, true), 7_312 + 9_984);
        assert_eq!(attention_regs_shared_bytes(32, true), 7_312 + 3_840);
        let regs = NetTiles::default();
        assert!(regs.window(96, 48 * 1024) && !NetTiles { attention_regs: false, ..regs }.window(96, 48 * 1024));
        assert!(regs.attention_qkv(96, 48 * 1024), "by role at every level with the softmax in registers");
        assert_eq!(regs.attention(96, true, regs.attention_qkv(96, 48 * 1024), 48 * 1024), Variant::new("attention_qkv_window_regs_coop", &[96, 1]));
        assert!(!regs.attention_qkv(96, attention_regs_shared_bytes(96, true) + 1023), "1 KiB to spare");
        assert!(regs.describe(true, true, None).contains("q, k, v computed in the attention at every level that fits, with the softmax in registers"));
    }
}
