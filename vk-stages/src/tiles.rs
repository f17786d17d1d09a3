//! How the shaders' network splits its work: the cooperative-matrix linear shader's tile per
//! layer (tokens a workgroup takes, the widest output chunk it stages in shared memory) and the
//! queries an attention invocation takes. Chosen per layer from its role and level when the model
//! loads; the environment is read once (`NetTiles::from_env`), as `PixelPaths` is.
//!
//! The defaults come from per-dispatch surveys on the H200 (BENCHMARKS.md, thirty-fifth and
//! thirty-sixth sessions; docs/ENGINE.md): no one setting wins every layer.

use crate::bindings as b;
use crate::layers::{LinearSpec, MlpWeights};
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
    /// `TESSEL_VK_ATTENTION_AHEAD=0|1`, default 1: where a window's heads run in one workgroup
    /// with the softmax in registers, qkv's weights and bias tables reach shared memory with
    /// their loads issued ahead (attention_qkv_window_regs_ahead_coop: every head's at the start
    /// at levels of up to bindings.h's AHEAD_HEADS heads, else the next head's during this one's
    /// products; [`attention_ahead_shared_bytes`]) instead of a head's copy at a time.
    pub attention_ahead: bool,
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
    3 * HEAD_ROWS_BYTES + 64 * (64 + b::SHARED_PAD) * (scores + 2) + 64 * 4 + RPB_BYTES
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
    let weights = if qkv_in { qkv_head_weight_bytes(c) } else { 0 };
    (if qkv_in { 2 } else { 3 }) * HEAD_ROWS_BYTES + 64 * 4 + RPB_BYTES + weights
}

/// One head's q, k or v of a window in shared memory: 64 rows of 16, padded (f16).
const HEAD_ROWS_BYTES: u32 = 64 * (16 + b::SHARED_PAD) * 2;
/// A head's bias table in shared memory (f32, padded to 16 bytes).
const RPB_BYTES: u32 = b::RPB_ENTRIES.div_ceil(4) * 16;

/// One head's rows of qkv's weights in shared memory: 3 x 16 rows of `c`, padded (f16).
fn qkv_head_weight_bytes(c: u32) -> u32 {
    3 * 16 * (c + b::SHARED_PAD) * 2
}

/// Shared memory of attention_qkv_window_regs_ahead_coop at `c` channels: at levels of two to
/// bindings.h's AHEAD_HEADS heads every head's qkv rows (3 x 16 of `c`, padded) and bias table,
/// and k and v in two buffers; other levels as attention_qkv_window_regs_coop
/// ([`attention_regs_shared_bytes`]).
/// At 4K on the H100 the shaders' network 0.996 -> 0.961 ms (forty-eighth session).
pub fn attention_ahead_shared_bytes(c: u32) -> u32 {
    let heads = c / b::HEAD_DIM;
    let plain = attention_regs_shared_bytes(c, true);
    if heads > b::AHEAD_HEADS || heads < 2 {
        return plain;
    }
    // The plain variant's one head, a second k and v, the other heads' weights and tables.
    plain + 2 * HEAD_ROWS_BYTES + (heads - 1) * (RPB_BYTES + qkv_head_weight_bytes(c))
}

/// The most heads a level may have for its attention to take q, k and v in by role: each of a
/// window's workgroups (one a head) reads and normalises the window's stream rows again.
const QKV_ROLE_HEADS: usize = 3;
/// The fewest heads at which the attention takes a whole window a workgroup by role
/// ([`NetTiles::window`]).
const WINDOW_ROLE_HEADS: usize = 3;

impl Default for NetTiles {
    fn default() -> Self {
        NetTiles { rows: None, cols: None, head_cols: 32, even: true, attention_qpi: 1, attention_online: true, attention_coop: true, direct: Direct::Roles, mlp: true, mlp_weights: true, mlp_proj: true, linear_weights: Direct::Roles, attention_qkv: Direct::Roles, attention_window: Direct::Roles, attention_scores_f32: false, attention_regs: true, mlp_regs: true, linear_regs: true, stream16: true, mlp_head: true, expand_direct: true, attention_ahead: true }
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
            attention_ahead: setting("TESSEL_VK_ATTENTION_AHEAD", &[0, 1])? != Some(0),
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
                Direct::Roles if self.attention_regs && self.attention_ahead => "there a window's heads in one workgroup, their weights loaded ahead (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head, TESSEL_VK_ATTENTION_AHEAD=0 a head's copy at a time)".to_string(),
                Direct::Roles if self.attention_regs => "there a window's heads in one workgroup, a head's weights copied at a time (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head, TESSEL_VK_ATTENTION_AHEAD=0)".to_string(),
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
        let (tile, weights, proj) = self.mlp_choice(shared_memory, fc1)?;
        Some((fc1.mlp_variant(p, &tile, weights, proj, self.mlp_in_regs(fc1)), tile.rows, proj))
    }

    /// The MLP in one dispatch's tile, where its weights are and whether it takes the projection
    /// first ([`NetTiles::mlp_dispatch`]'s choices).
    fn mlp_choice(&self, shared_memory: u32, fc1: &LinearSpec) -> Option<(DirectTile, MlpWeights, bool)> {
        let tile = self.mlp(shared_memory, fc1)?;
        let proj = self.mlp_proj(shared_memory, fc1, &tile);
        let weights = if self.mlp_weights_shared(shared_memory, fc1, &tile, proj) {
            MlpWeights::Shared
        } else if self.mlp_weight_halves(shared_memory, fc1) {
            MlpWeights::Halves
        } else {
            MlpWeights::Buffer
        };
        Some((tile, weights, proj))
    }

    /// Where the network's last block (at level 0, `fc1` its first layer) runs its MLP and the
    /// head in one dispatch (mlp_proj_head_regs_w_coop; `mlp_head`): its MLP dispatch is the one
    /// in registers with the projection first and both layers' weights in shared memory, the
    /// head's weights fit beside them with 1 KiB to spare, the head has the contract's 128
    /// channels a token and the per-pixel path (if any) 8 values a pixel. The stream is then
    /// neither stored by the MLP nor read again by the head. The variant (the MLP's
    /// specialisation) and its rows a workgroup.
    pub fn mlp_head_dispatch(&self, shared_memory: u32, fc1: &LinearSpec, cfg: &tessel_model::config::NetworkConfig) -> Option<(Variant, u32)> {
        let (tile, weights, proj) = self.mlp_choice(shared_memory, fc1)?;
        let fits = proj && weights == MlpWeights::Shared && self.mlp_in_regs(fc1) && fc1.level == 0;
        let head = cfg.head_token_channels() as u32;
        let bytes = fc1.mlp_weight_bytes() + fc1.mlp_proj_weight_bytes() + head * (fc1.inp + b::SHARED_PAD) * 2;
        let pixel = !cfg.pixel_head || cfg.pixel_embed == 8;
        (self.mlp_head && fits && pixel && head == 16 * b::HEAD_CHANNELS && bytes + 1024 <= shared_memory)
            .then(|| (fc1.mlp_head_variant(cfg.pixel_embed as u32, &tile), tile.rows))
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
                (true, true) if self.attention_ahead && attention_ahead_shared_bytes(c as u32) + 1024 <= shared_memory => "attention_qkv_window_regs_ahead_coop",
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
mod tests;
