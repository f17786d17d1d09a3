//! The network as a list of kernel launches, built once from the model's config (the same steps
//! as vk-stages/src/plan.rs, so both backends compute the same network): each launch names its
//! kernel, grid, block and argument bytes (the kernels take one struct by value). Per frame only
//! the attention window shifts change (eight phases: eight immutable graphs).

use std::collections::HashMap;

use tessel_kernels::{BlockEnds, BlockIn, BlockOut};
use tessel_model::config::{BlockSpec, NetOp, NetworkConfig, TokenGrid, HEAD_DIM, WINDOW_TOKENS};
use vk_stages::layers::{Layers, LinearSpec};
use tessel_model::shifts::window_shift;

/// Kernel flags (kernels/include/tessel_gpu.h).
pub mod flags {
    pub const ACT_SILU: u32 = 1;
    pub const RESIDUAL: u32 = 2;
    pub const IN_F16: u32 = 4;
    pub const OUT_F16: u32 = 8;
    pub const LAYER_NORM: u32 = 16;
    pub const MODE_SHIFT: u32 = 5;
    pub const MODE_HEAD: u32 = 3 << MODE_SHIFT;
}

/// Outputs per thread of tessel_linear, tokens per block.
pub const LINEAR_OUTS: u32 = 16;
pub const BLOCK_TOKENS: u32 = 64;

/// `LinearArgs` of kernels/linear.hip (96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LinearArgs {
    pub x: u64,
    pub y: u64,
    pub w: u64,
    pub b: u64,
    pub aux: u64,
    pub aux_w: u64,
    pub aux_b: u64,
    pub gamma: u64,
    pub beta: u64,
    pub tokens: u32,
    pub width: u32,
    pub inp: u32,
    pub out: u32,
    pub p: u32,
    pub flags: u32,
}
const _: () = assert!(std::mem::size_of::<LinearArgs>() == 96);

/// `AttentionArgs` of kernels/attention.hip (48 bytes with its padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AttentionArgs {
    pub qkv: u64,
    pub out: u64,
    pub rpb: u64,
    pub width: u32,
    pub height: u32,
    pub shift_x: u32,
    pub shift_y: u32,
    pub c: u32,
    pub _pad: u32,
}
const _: () = assert!(std::mem::size_of::<AttentionArgs>() == 48);

/// `BlockArgs` of kernels/include/tessel_block.h (296 bytes, asserted below).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockArgs {
    pub x: u64,
    pub qkv_w: u64,
    pub qkv_b: u64,
    pub proj_w: u64,
    pub proj_b: u64,
    pub fc1_w: u64,
    pub fc1_b: u64,
    pub fc2_w: u64,
    pub fc2_b: u64,
    pub norm1_w: u64,
    pub norm1_b: u64,
    pub norm2_w: u64,
    pub norm2_b: u64,
    pub rpb: u64,
    pub tokens: u64,
    pub embed_w: u64,
    pub embed_b: u64,
    pub head: u64,
    pub head_norm_w: u64,
    pub head_norm_b: u64,
    pub head_w: u64,
    pub head_b: u64,
    pub pixel_w: u64,
    pub width: u32,
    pub height: u32,
    pub shift_x: u32,
    pub shift_y: u32,
    pub hidden: u32,
    pub p: u32,
    pub lower: u64,
    pub merge_w: u64,
    pub merge_b: u64,
    pub expand_w: u64,
    pub expand_b: u64,
    pub lower_c: u32,
    /// [`STREAM_X_F16`], [`STREAM_LOWER_F16`], [`STREAM_UPPER_F16`]: which streams are stored in f16.
    pub flags: u32,
    /// The pull variants' level above: its stream and its expansion's weights (fragment order)
    /// and bias.
    pub upper: u64,
    pub pull_w: u64,
    pub pull_b: u64,
    pub upper_c: u32,
    /// The weight blob as 128-byte lines, and its address: what a build with TS_WPREFETCH asks
    /// L2 to hold for the next launch ([`prefetch_choice`]).
    pub prefetch_lines: u32,
    pub prefetch: u64,
}
const _: () = assert!(std::mem::size_of::<BlockArgs>() == 296);

/// BlockArgs::flags (kernels/include/tessel_block.h's TS_STREAM_*): the block's level's stream, the
/// level below's, or the level above's (which a pull reads) is stored in f16.
pub const STREAM_X_F16: u32 = 1;
pub const STREAM_LOWER_F16: u32 = 2;
pub const STREAM_UPPER_F16: u32 = 8;
/// BlockArgs::flags (TS_ROWS_PLAIN): the block reads the token rows and stores the head without
/// cache hints (kernels/include/tessel_block_rows.h's TS_ROWS_ONCE).
pub const ROWS_PLAIN: u32 = 4;
/// BlockArgs::flags (TS_WEIGHTS_PIECES): the block copies its weights by every thread's cp.async
/// pieces instead of bulk copies (kernels/include/tessel_block.h's TS_BULK).
pub const WEIGHTS_PIECES: u32 = 16;
/// BlockArgs::flags (TS_STREAM_PAIRS): the block writes its level's f16 stream as each lane's
/// pairs instead of whole staged rows (kernels/include/tessel_block_rows.h's TS_STREAM_ROWS).
pub const STREAM_PAIRS: u32 = 32;
/// BlockArgs::flags (TS_WINDOWS_REVERSED): the block takes its windows in reverse order
/// (kernels/include/tessel_block.h's TS_REVERSE).
pub const WINDOWS_REVERSED: u32 = 64;
/// BlockArgs::flags (TS_EXPAND_STAGED): the expansion copies its skip into shared memory while its
/// MLP runs and adds it from there (kernels/include/tessel_block_ends.h's TS_EXPAND_STAGE).
pub const EXPAND_STAGED: u32 = 128;
/// The widest level below whose skip an expansion stages ([`EXPAND_STAGED`]). On the H100
/// (BENCHMARKS.md, sixtieth session) staging took the fast preset's pull-and-expand launch, whose
/// level below is 16 channels wide, from 74 to 69-70 µs at 3840x2160, and tessel-v12's last level-1
/// expansion, into 32 channels, from 72 to 73.
pub const EXPAND_STAGE_MAX_C: u32 = 16;

/// Stores level `level`'s residual stream in f16 (half its bytes: the embedding's or the merge's
/// store, the blocks' loads and stores, the next level's merge gather, the expansion's read and
/// write, the pull's read of it as the level above, the head's load) where only fused blocks touch
/// it; returns whether it did (not where a portable kernel touches it, nor twice). `elems` is the
/// level's tokens times channels (for the launches' costs). The merge and the pull round their
/// gathered input to f16 anyway; the expansion's sum and the stream between launches round once
/// more than in f32 (the agreement tests bound what that costs).
pub fn stream_f16(plan: &mut [Launch], bufs: &Buffers, level: usize, elems: u64) -> bool {
    let Some(&x) = bufs.x.get(level) else { return false };
    let other = plan.iter().any(|l| match &l.args {
        Args::Linear(a) => [a.x, a.y, a.aux].contains(&x),
        Args::Attention(..) => false,
        Args::Block(a, _) => (a.x == x && a.flags & STREAM_X_F16 != 0) || (a.lower == x && a.flags & STREAM_LOWER_F16 != 0) || (a.upper == x && a.flags & STREAM_UPPER_F16 != 0),
    });
    if other || x == 0 {
        return false;
    }
    for l in plan.iter_mut() {
        let Args::Block(a, _) = &mut l.args else { continue };
        // Passes over the level's stream that now move two bytes a value instead of four.
        let mut passes = 0;
        if a.x == x {
            a.flags |= STREAM_X_F16;
            passes += u64::from(a.embed_w == 0 && a.merge_w == 0) + u64::from(a.head == 0 && a.expand_w == 0);
        }
        if a.lower == x && a.lower != 0 {
            a.flags |= STREAM_LOWER_F16;
            passes += u64::from(a.merge_w != 0) + 2 * u64::from(a.expand_w != 0);
        }
        if a.upper == x && a.upper != 0 {
            a.flags |= STREAM_UPPER_F16;
            passes += 1;
        }
        l.cost.bytes -= passes * elems * 2;
    }
    true
}

/// How many levels, from level 0, store their streams in f16 unless the environment says
/// otherwise (TESSEL_HIP_STREAM16_LEVELS): all of them (levels 1 and 2 as well measured 1 to 2 %
/// faster at 4K on the H200, twenty-eighth session; `TESSEL_HIP_STREAM16_LEVELS=1` keeps level 0's
/// alone).
pub const STREAM16_LEVELS: usize = usize::MAX;

/// [`stream_f16`] on the plan of `cfg` over `grid` for its first `TESSEL_HIP_STREAM16_LEVELS`
/// levels ([`STREAM16_LEVELS`] by default) unless `TESSEL_HIP_STREAM16=0` (the kill switch, which
/// both the runtime's network and the kernels inside Vulkan read). Ok: how many levels went to f16;
/// Err says why level 0's stream stays in f32.
pub fn stream16_choice(plan: &mut [Launch], bufs: &Buffers, cfg: &NetworkConfig, grid: &TokenGrid) -> std::result::Result<usize, &'static str> {
    if std::env::var("TESSEL_HIP_STREAM16").is_ok_and(|v| v == "0") {
        return Err("off: TESSEL_HIP_STREAM16=0");
    }
    let levels = match std::env::var("TESSEL_HIP_STREAM16_LEVELS") {
        Ok(v) => v.parse::<usize>().map_err(|_| "TESSEL_HIP_STREAM16_LEVELS is not a count of levels")?,
        Err(_) => STREAM16_LEVELS,
    };
    let mut done = 0;
    for level in 0..levels.min(cfg.channels.len()) {
        let (w, h) = grid.level_dims(level);
        if !stream_f16(plan, bufs, level, (w * h * cfg.channels[level]) as u64) {
            break;
        }
        done += 1;
    }
    match done {
        0 if levels == 0 => Err("off: TESSEL_HIP_STREAM16_LEVELS=0"),
        0 => Err("portable kernels touch it"),
        n => Ok(n),
    }
}

/// The fused blocks' cache hints for the token and head buffers (kernels/include/tessel_block_rows.h's
/// TS_ROWS_ONCE) unless `TESSEL_HIP_CACHE_HINTS=0` (the kill switch, which both the runtime's
/// network and the kernels inside Vulkan read: it sets [`ROWS_PLAIN`] on every fused block); Err
/// says why there are none.
pub fn cache_hints_choice(plan: &mut [Launch]) -> std::result::Result<(), &'static str> {
    switched_choice("TESSEL_HIP_CACHE_HINTS", "off: TESSEL_HIP_CACHE_HINTS=0", |on| set_cache_hints(plan, on))
}

/// Which fused launches take their windows in reverse order ([`WINDOWS_REVERSED`]). Each launch
/// reads first what the launch before it wrote, and workgroups start roughly in index order, so a
/// launch running against the one before it starts on the rows that one wrote last, the likeliest
/// still in L2 (BENCHMARKS.md, fifty-eighth session).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Every other launch from the second (`TESSEL_HIP_ORDER=1`).
    Alternate,
    /// The first and the last launch reversed and the others alternating inward from each end
    /// (one pair in the middle, at level 2, whose stream fits L2 whole, runs the same way): the
    /// embedding also starts on the token rows the input stage wrote last, and the head ends on
    /// the rows the reconstruction reads first. The default: the split frame's network 0.505 →
    /// 0.503 ms at 4K against [`Order::Alternate`] (0.507 in index order).
    Ends,
}

/// The fused launches' window order: [`Order::Ends`] unless `TESSEL_HIP_ORDER` says `1`
/// ([`Order::Alternate`]) or `0` (the kill switch, which both the runtime's network and the
/// kernels inside Vulkan read: every launch in index order). Err says why no launch is reversed.
pub fn order_choice(plan: &mut [Launch]) -> std::result::Result<Order, &'static str> {
    let order = match std::env::var("TESSEL_HIP_ORDER").as_deref() {
        Ok("0") => None,
        Ok("1") => Some(Order::Alternate),
        Ok("2") | Err(_) => Some(Order::Ends),
        Ok(_) => {
            set_order(plan, None);
            return Err("TESSEL_HIP_ORDER is not 0, 1 or 2");
        }
    };
    match (set_order(plan, order), order) {
        (0, _) => Err("no fused blocks"),
        (_, None) => Err("off: TESSEL_HIP_ORDER=0"),
        (_, Some(o)) => Ok(o),
    }
}

/// Whether fused launch `i` of `n` takes its windows in reverse order.
pub fn reversed(order: Order, i: usize, n: usize) -> bool {
    match order {
        Order::Alternate => i % 2 == 1,
        // The front half counted from the front, the rest from the back.
        Order::Ends if i < n / 2 => i % 2 == 0,
        Order::Ends => (n - 1 - i) % 2 == 0,
    }
}

/// Sets [`WINDOWS_REVERSED`] on the fused blocks that `order` reverses (None: on none); returns
/// how many blocks the plan holds.
fn set_order(plan: &mut [Launch], order: Option<Order>) -> usize {
    let n = plan.iter().filter(|l| matches!(l.args, Args::Block(..))).count();
    let mut i = 0;
    each_block(plan, |a| {
        let reverse = order.is_some_and(|o| reversed(o, i, n));
        a.flags = if reverse { a.flags | WINDOWS_REVERSED } else { a.flags & !WINDOWS_REVERSED };
        i += 1;
    })
}

/// A start-up line's words for an [`order_choice`].
pub fn order_words(choice: std::result::Result<Order, &str>) -> String {
    match choice {
        _ if tessel_kernels::built_off("TS_REVERSE") => "windows in index order (built with -DTS_REVERSE=0)".to_string(),
        Ok(Order::Alternate) => "windows in alternating order (TESSEL_HIP_ORDER=1)".to_string(),
        Ok(Order::Ends) => "windows alternating, reversed at both ends".to_string(),
        Err(why) => format!("windows in index order ({why})"),
    }
}

/// Whether the fused blocks' last workgroups prefetch the weight blob into L2 for the launches
/// after theirs (kernels/include/tessel_block_ends.h's TS_WPREFETCH), or why not: `TESSEL_HIP_PREFETCH=0` (the
/// kill switch) gives them no blob.
pub fn prefetch_choice(plan: &mut [Launch], blob: u64, bytes: usize) -> std::result::Result<(), &'static str> {
    switched_choice("TESSEL_HIP_PREFETCH", "off: TESSEL_HIP_PREFETCH=0", |on| set_prefetch(plan, blob, if on { bytes } else { 0 }))
}

/// A fused-block setting with a kill switch: `set(on)` applies it (on unless `var` is "0") to
/// every fused block and returns how many there are; Err says why the setting is not in use.
fn switched_choice(var: &str, off: &'static str, set: impl FnOnce(bool) -> usize) -> std::result::Result<(), &'static str> {
    let on = !std::env::var(var).is_ok_and(|v| v == "0");
    match set(on) {
        0 => Err("no fused blocks"),
        _ if !on => Err(off),
        _ => Ok(()),
    }
}

/// Applies `f` to every fused block's arguments; returns how many blocks the plan holds.
fn each_block(plan: &mut [Launch], mut f: impl FnMut(&mut BlockArgs)) -> usize {
    let mut blocks = 0;
    for l in plan.iter_mut() {
        let Args::Block(a, _) = &mut l.args else { continue };
        f(a);
        blocks += 1;
    }
    blocks
}

/// Gives every fused block the weight blob's address and length in 128-byte lines (none: no
/// prefetch); returns how many blocks the plan holds.
fn set_prefetch(plan: &mut [Launch], blob: u64, bytes: usize) -> usize {
    each_block(plan, |a| {
        a.prefetch = if bytes > 0 { blob } else { 0 };
        a.prefetch_lines = bytes.div_ceil(128) as u32;
    })
}

/// A start-up line's words for a [`prefetch_choice`].
pub fn prefetch_words(choice: std::result::Result<(), &str>) -> String {
    match choice {
        Ok(()) => "weights prefetched into L2 a launch ahead".to_string(),
        Err(why) => format!("no weight prefetch ({why})"),
    }
}

/// Clears or sets [`ROWS_PLAIN`] on every fused block of the plan; returns how many it holds.
fn set_cache_hints(plan: &mut [Launch], on: bool) -> usize {
    set_flag(plan, ROWS_PLAIN, !on)
}

/// Sets or clears `flag` on every fused block of the plan; returns how many it holds.
fn set_flag(plan: &mut [Launch], flag: u32, set: bool) -> usize {
    each_block(plan, |a| a.flags = if set { a.flags | flag } else { a.flags & !flag })
}

/// The sm_90a fused blocks' copies: the weights by bulk copies (TS_BULK), the level's stream
/// written as whole staged rows (TS_STREAM_ROWS), unless `TESSEL_HIP_BULK=0` or
/// `TESSEL_HIP_STREAM_ROWS=0` (the kill switches, which both the runtime's network and the
/// kernels inside Vulkan read: they set [`WEIGHTS_PIECES`] or [`STREAM_PAIRS`] on every fused
/// block), and the skips of the expansions into narrow f16 levels staged in shared memory
/// ([`EXPAND_STAGED`], unless `TESSEL_HIP_EXPAND_STAGE=0`). The start-up line's words; None where
/// the kernels have none of them (not sm_90a).
pub fn copies_choice(plan: &mut [Launch], matrix: Option<tessel_kernels::Matrix>) -> Option<String> {
    let bulk = switched_choice("TESSEL_HIP_BULK", "off: TESSEL_HIP_BULK=0", |on| set_flag(plan, WEIGHTS_PIECES, !on));
    let rows = switched_choice("TESSEL_HIP_STREAM_ROWS", "off: TESSEL_HIP_STREAM_ROWS=0", |on| set_flag(plan, STREAM_PAIRS, !on));
    let wgmma = matrix == Some(tessel_kernels::Matrix::Wgmma);
    let stage_on = !std::env::var("TESSEL_HIP_EXPAND_STAGE").is_ok_and(|v| v == "0");
    let staged = mark_expand_stage(plan, wgmma && stage_on);
    if !wgmma {
        return None;
    }
    let words = |choice: std::result::Result<(), &str>, define: &str, on: &str, off: &str| match choice {
        _ if tessel_kernels::built_off(define) => format!("{off} (built with -D{define}=0)"),
        Ok(()) => on.to_string(),
        Err(why) => format!("{off} ({why})"),
    };
    let none = format!("no expansion into a level of {EXPAND_STAGE_MAX_C} channels or fewer");
    let stage = match staged {
        _ if !stage_on => Err("off: TESSEL_HIP_EXPAND_STAGE=0"),
        0 => Err(none.as_str()),
        _ => Ok(()),
    };
    Some(format!(
        "{}, {}, {}",
        words(bulk, "TS_BULK", "weights by bulk copies", "weights by cp.async pieces"),
        words(rows, "TS_STREAM_ROWS", "stream rows stored whole", "stream stored in pairs"),
        words(stage, "TS_EXPAND_STAGE", &format!("skips staged at {staged} expansion{}", if staged == 1 { "" } else { "s" }), "skips read in place")
    ))
}

/// Sets [`EXPAND_STAGED`] on the fused expansions into an f16 level of at most
/// [`EXPAND_STAGE_MAX_C`] channels (`on`), and clears it everywhere else; returns how many it set.
fn mark_expand_stage(plan: &mut [Launch], on: bool) -> usize {
    let mut staged = 0;
    for l in plan.iter_mut() {
        let expands = l.kernel.contains("expand_");
        let Args::Block(a, _) = &mut l.args else { continue };
        let stage = on && expands && a.flags & STREAM_LOWER_F16 != 0 && a.lower_c <= EXPAND_STAGE_MAX_C;
        a.flags = if stage { a.flags | EXPAND_STAGED } else { a.flags & !EXPAND_STAGED };
        staged += stage as usize;
    }
    staged
}

/// A start-up line's words for a [`cache_hints_choice`].
pub fn cache_hints_words(choice: std::result::Result<(), &str>) -> String {
    match choice {
        Ok(()) => "token and head rows with cache hints".to_string(),
        Err(why) => format!("no cache hints ({why})"),
    }
}

/// Whether the plan's decoder levels pull the expansions above them (`BlockIn::Pull`).
pub fn pulls(plan: &[Launch]) -> bool {
    plan.iter().any(|l| l.kernel.contains("_pull_"))
}

/// A start-up line's words for [`pulls`].
pub fn pull_words(pulls: bool) -> &'static str {
    if pulls {
        "expansions pulled"
    } else {
        "expansions pushed"
    }
}

/// A start-up line's words for a [`stream16_choice`].
pub fn stream16_words(choice: std::result::Result<usize, &str>) -> String {
    match choice {
        Ok(1) => "level-0 stream f16".to_string(),
        Ok(n) => format!("streams f16 at levels 0-{}", n - 1),
        Err(why) => format!("level-0 stream f32 ({why})"),
    }
}

/// Threads of the fused block kernel: four warps, 16 tokens each.
pub const BLOCK_MMA_THREADS: u32 = 128;
/// The tokens a tessel_linear_wmma workgroup covers (kernels/linear_wmma.hip: TS_WMMA_WAVES waves
/// of 16 tokens; its threads: `Matrix::wmma_threads`).
pub const WMMA_TOKENS: u32 = 64;

/// Which kernels a plan launches: the portable ones, the matrix-core ones (fused blocks), the
/// sm_90a object's, whose blocks up to 48 channels read their weights as one core-matrix blob
/// (`<block>.core`, weights.rs), or the portable ones with the linear layers on WMMA
/// (tessel_linear_wmma: the portable kernel's arguments and weights) in workgroups of this many
/// threads (four waves: 128 on RDNA and in the NVIDIA emulation, 256 on CDNA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    Portable,
    MmaSync,
    Wgmma,
    Wmma(u32),
}

impl Kernels {
    /// Whether the plan fuses window blocks (the NVIDIA matrix paths).
    fn fuses(self) -> bool {
        matches!(self, Kernels::MmaSync | Kernels::Wgmma)
    }
}

impl From<tessel_kernels::Matrix> for Kernels {
    fn from(m: tessel_kernels::Matrix) -> Kernels {
        match m {
            tessel_kernels::Matrix::MmaSync => Kernels::MmaSync,
            tessel_kernels::Matrix::Wgmma => Kernels::Wgmma,
            m @ (tessel_kernels::Matrix::Wmma | tessel_kernels::Matrix::Mfma | tessel_kernels::Matrix::WmmaEmulated) => Kernels::Wmma(m.wmma_threads()),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Args {
    Linear(LinearArgs),
    /// With the block's layer index: its shift follows the frame's phase.
    Attention(AttentionArgs, usize),
    /// A whole window block on matrix cores, with its layer index.
    Block(BlockArgs, usize),
}

#[derive(Clone, Debug)]
pub struct Launch {
    pub label: String,
    /// The kernel's name in the code objects.
    pub kernel: &'static str,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub args: Args,
    /// What it must move and compute at the least (the per-kernel table's bytes and FLOPs).
    pub cost: Cost,
}

impl Launch {
    /// The kernel's name in the code objects.
    pub fn kernel(&self) -> &'static str {
        self.kernel
    }

    /// Argument bytes for a phase (the attention shift filled in).
    pub fn arg_bytes(&self, phase: usize) -> Vec<u8> {
        fn bytes<T: Copy>(v: &T) -> Vec<u8> {
            // Plain-old-data structs of u64/u32 fields (repr(C), no padding holes but the
            // explicit one).
            unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }.to_vec()
        }
        match self.args {
            Args::Linear(a) => bytes(&a),
            Args::Attention(mut a, layer) => {
                let (sx, sy) = window_shift(layer, phase);
                a.shift_x = sx as u32;
                a.shift_y = sy as u32;
                bytes(&a)
            }
            Args::Block(mut a, layer) => {
                let (sx, sy) = window_shift(layer, phase);
                a.shift_x = sx as u32;
                a.shift_y = sy as u32;
                bytes(&a)
            }
        }
    }
}

pub use vk_stages::plan::{linear_cost, net_sizes, Cost, NetBuffers as Buffers, NetSizes};

/// The least a window block moves and computes over `t` tokens of `c` channels with an MLP of
/// `hid`: its residual stream read and written, its weights once; qkv, attention (64 keys),
/// projection and MLP products.
pub fn block_cost(t: u64, c: u64, hid: u64) -> Cost {
    let per_token = 3 * c * c + c * c + 2 * hid * c;
    Cost { bytes: t * c * 4 * 2 + 2 * per_token, flops: 2 * t * per_token + 2 * t * 2 * WINDOW_TOKENS as u64 * c }
}

/// The kernel flags of a linear-layer variant of the shared layer table (the same variants the
/// Vulkan shaders take as specialisation constants).
pub fn flags_of(l: &LinearSpec) -> u32 {
    let on = |v: u32, f: u32| if v == 1 { f } else { 0 };
    on(l.act, flags::ACT_SILU) | on(l.residual, flags::RESIDUAL) | on(l.in_f16, flags::IN_F16) | on(l.out_f16, flags::OUT_F16) | on(l.ln, flags::LAYER_NORM) | (l.mode << flags::MODE_SHIFT)
}

struct Builder<'a> {
    cfg: &'a NetworkConfig,
    layers: Layers,
    grid: &'a TokenGrid,
    bufs: &'a Buffers,
    /// Device address of each tensor.
    tensors: &'a HashMap<String, u64>,
    /// Which kernels the plan launches.
    kernels: Kernels,
    /// Whether a decoder level's first block pulls the expansion of the level above (BlockIn::Pull)
    /// instead of the level above's last block adding it into the skip.
    pull: bool,
    out: Vec<Launch>,
}

impl Builder<'_> {
    fn t(&self, name: &str) -> u64 {
        *self.tensors.get(name).unwrap_or_else(|| panic!("tensor '{name}' is not uploaded"))
    }

    /// A linear layer from buffer x to buffer y over `tokens` tokens of a grid `width` wide;
    /// `norm`: the LayerNorm (tensor prefix) its input rows go through first.
    fn linear(&mut self, l: &LinearSpec, prefix: &str, (x, y): (u64, u64), (tokens, width): (usize, usize), norm: Option<&str>) {
        assert_eq!(norm.is_some(), l.ln == 1, "{prefix}: LayerNorm flag and tensors disagree");
        let (gamma, beta) = norm.map_or((0, 0), |n| (self.t(&format!("{n}.weight")), self.t(&format!("{n}.bias"))));
        let head = l.mode == (flags::MODE_HEAD >> flags::MODE_SHIFT) && self.cfg.pixel_head;
        let a = LinearArgs {
            x,
            y,
            w: self.t(&format!("{prefix}.weight")),
            b: self.t(&format!("{prefix}.bias")),
            aux: if head { self.bufs.tokens } else { 0 },
            aux_w: if head { self.t("pixel_head.weight") } else { 0 },
            aux_b: if head { self.t("pixel_head.bias") } else { 0 },
            gamma,
            beta,
            tokens: tokens as u32,
            width: width as u32,
            inp: l.inp,
            out: l.out,
            p: self.cfg.pixel_embed as u32,
            flags: flags_of(l),
        };
        let label = prefix.to_string();
        // The expansion's rows are its input tokens; every other layer's, its output tokens.
        let cost = linear_cost(l, tokens as u64, self.cfg.pixel_embed as u64, head);
        if let Kernels::Wmma(threads) = self.kernels {
            if tessel_kernels::wmma_linear_fits(l.inp as usize, l.out as usize) {
                // Four waves of 16 tokens per workgroup, every output in one pass; the weights as stored.
                let grid = ((tokens as u32).div_ceil(WMMA_TOKENS), 1, 1);
                self.out.push(Launch { label, kernel: tessel_kernels::LINEAR_WMMA, grid, block: (threads, 1, 1), args: Args::Linear(a), cost });
                return;
            }
        }
        match tessel_kernels::linear_kernel(l.inp as usize, l.out as usize).filter(|_| self.kernels.fuses()) {
            // Four warps of 16 tokens per workgroup, every output in one pass; the weights in
            // fragment order.
            Some(kernel) => {
                let a = LinearArgs { w: self.t(&format!("{prefix}.weight#frag")), ..a };
                self.out.push(Launch { label, kernel, grid: ((tokens as u32).div_ceil(64), 1, 1), block: (BLOCK_MMA_THREADS, 1, 1), args: Args::Linear(a), cost })
            }
            None => {
                let grid = ((tokens as u32).div_ceil(BLOCK_TOKENS), l.out / LINEAR_OUTS, 1);
                self.out.push(Launch { label, kernel: "tessel_linear", grid, block: (BLOCK_TOKENS, 1, 1), args: Args::Linear(a), cost });
            }
        }
    }

    /// The fused matrix-core kernel for a block with these ends, if the plan uses matrix
    /// kernels and one exists: the embedding and the head at level 0 only (the head also needs P
    /// a multiple of 8), the merge and the expansion above it with a lower width a multiple of 16.
    fn fused(&self, b: &BlockSpec, ends: BlockEnds) -> Option<&'static str> {
        let level0 = ends.input == BlockIn::Embed || ends.output == BlockOut::Head;
        let between = ends.input == BlockIn::Merge || ends.output == BlockOut::Expand;
        if !self.kernels.fuses() || (level0 && b.level != 0) || (ends.output == BlockOut::Head && self.cfg.pixel_embed % 8 != 0) {
            return None;
        }
        if between && (b.level == 0 || self.cfg.channels[b.level - 1] % 16 != 0) {
            return None;
        }
        if ends.input == BlockIn::Pull && (!self.pull || b.level + 1 >= self.cfg.levels() || self.cfg.channels[b.level + 1] % 16 != 0) {
            return None;
        }
        tessel_kernels::block_kernel(self.cfg.channels[b.level], self.layers.fc1[b.level].out as usize, ends)
    }

    /// The fused launch that op `i` starts, if any: a block that takes the op before it (the
    /// embedding, a merge, an expansion it pulls) where a kernel does, and the op after it (the
    /// head, an expansion) where one does and the next block does not pull it; with the index of
    /// the block op.
    fn fusion(&self, ops: &[NetOp], i: usize) -> Option<(BlockEnds, usize)> {
        let (input, at) = match (&ops[i], ops.get(i + 1)) {
            (NetOp::Embed, Some(NetOp::Block(_))) => (BlockIn::Embed, i + 1),
            (NetOp::Merge(_), Some(NetOp::Block(_))) => (BlockIn::Merge, i + 1),
            (NetOp::Expand(_), Some(NetOp::Block(_))) if self.pulls(ops, i + 1) => (BlockIn::Pull, i + 1),
            (NetOp::Block(_), _) => (BlockIn::Stream, i),
            _ => return None,
        };
        let NetOp::Block(bs) = &ops[at] else { return None };
        let output = self.output_of(ops, at);
        [output, BlockOut::Stream].into_iter().map(|output| BlockEnds { input, output }).find(|e| self.fused(bs, *e).is_some()).map(|e| (e, at))
    }

    /// What block op `at` would like to take along after it: the head where it follows, the
    /// expansion where one follows and the next level's block does not pull it, else nothing.
    fn output_of(&self, ops: &[NetOp], at: usize) -> BlockOut {
        match ops.get(at + 1) {
            Some(NetOp::Head) => BlockOut::Head,
            Some(NetOp::Expand(_)) if !self.pulls(ops, at + 2) => BlockOut::Expand,
            _ => BlockOut::Stream,
        }
    }

    /// Whether op `j` is a block with a kernel that pulls the expansion before it and still takes
    /// along what follows it (its own level's expansion too, in a decoder level of one block; a
    /// block that produces the head does not pull: no kernel does both, and the head's launch
    /// measured no faster pulling).
    fn pulls(&self, ops: &[NetOp], j: usize) -> bool {
        let Some(NetOp::Block(nb)) = ops.get(j) else { return false };
        self.fused(nb, BlockEnds { input: BlockIn::Pull, output: self.output_of(ops, j) }).is_some()
    }

    /// A block: one fused launch (taking the embedding or the head along with `ends`), or the
    /// five portable launches (only with `BlockEnds::INNER`).
    fn block(&mut self, b: &BlockSpec, ends: BlockEnds) {
        let (l, n) = (b.level, b.name.as_str());
        let c = self.cfg.channels[l];
        let (w, h) = self.grid.level_dims(l);
        let t = w * h;
        let hidden = self.layers.fc1[l].out as usize;
        if let Some(kernel) = self.fused(b, ends) {
            let p = |s: &str| self.t(&format!("{n}.{s}"));
            let embed = ends.input == BlockIn::Embed;
            let head = ends.output == BlockOut::Head;
            let (merge, expand, pull) = (ends.input == BlockIn::Merge, ends.output == BlockOut::Expand, ends.input == BlockIn::Pull);
            let pixel = head && self.cfg.pixel_head;
            let when = |on: bool, name: &str| if on { self.t(name) } else { 0 };
            // The sm_90a blocks take their weights from the block's core blob (up to 48 channels)
            // or its stream blob (wider), from its start.
            let wg = self.kernels == Kernels::Wgmma;
            let qkv_w = match c {
                _ if !wg => p("qkv.weight#frag"),
                c if c <= tessel_kernels::WGMMA_MAX_CHANNELS => self.t(&format!("{n}.core")),
                c if c <= tessel_kernels::WGMMA_STREAM_MAX_CHANNELS => self.t(&format!("{n}.stream")),
                _ => p("qkv.weight#frag"),
            };
            let a = BlockArgs {
                x: self.bufs.x[l],
                qkv_w,
                qkv_b: p("qkv.bias#f32"),
                proj_w: p("proj.weight#frag"),
                proj_b: p("proj.bias#f32"),
                fc1_w: p("fc1.weight#frag"),
                fc1_b: p("fc1.bias#f32"),
                fc2_w: p("fc2.weight#frag"),
                fc2_b: p("fc2.bias#f32"),
                norm1_w: p("norm1.weight#f32"),
                norm1_b: p("norm1.bias#f32"),
                norm2_w: p("norm2.weight#f32"),
                norm2_b: p("norm2.bias#f32"),
                rpb: p("rpb#f32"),
                tokens: if embed || pixel { self.bufs.tokens } else { 0 },
                embed_w: when(embed, "embed.weight#frag"),
                embed_b: when(embed, "embed.bias#f32"),
                head: if head { self.bufs.head } else { 0 },
                head_norm_w: when(head, "head_norm.weight#f32"),
                head_norm_b: when(head, "head_norm.bias#f32"),
                head_w: when(head, "head.weight#frag"),
                // With the per-pixel head path its bias is in the head's (weights.rs).
                head_b: if pixel { self.t(crate::weights::HEAD_AND_PIXEL_BIAS) } else { when(head, "head.bias#f32") },
                pixel_w: when(pixel, "pixel_head.weight#frag8"),
                width: w as u32,
                height: h as u32,
                hidden: hidden as u32,
                p: self.cfg.pixel_embed as u32,
                // The level below's stream (merge, expansion), and the level above's (pull).
                lower: if merge || expand { self.bufs.x[l - 1] } else { 0 },
                merge_w: when(merge, &format!("merge{l}.weight#frag")),
                merge_b: when(merge, &format!("merge{l}.bias#f32")),
                expand_w: when(expand, &format!("expand{l}.weight#frag")),
                expand_b: when(expand, &format!("expand{l}.bias#f32")),
                lower_c: if merge || expand { self.cfg.channels[l - 1] as u32 } else { 0 },
                upper: if pull { self.bufs.x[l + 1] } else { 0 },
                pull_w: when(pull, &format!("expand{}.weight#frag", l + 1)),
                pull_b: when(pull, &format!("expand{}.bias#f32", l + 1)),
                upper_c: if pull { self.cfg.channels[l + 1] as u32 } else { 0 },
                ..Default::default()
            };
            let grid = ((t / WINDOW_TOKENS) as u32, 1, 1);
            // The parts' costs, less the residual stream written by the embedding or merge and read
            // by the block, or written by the block and read by the head or expansion: it stays in
            // registers.
            let (tu, cu) = (t as u64, c as u64);
            let mut cost = block_cost(tu, cu, hidden as u64);
            let p = self.cfg.pixel_embed as u64;
            let input = match ends.input {
                BlockIn::Stream => None,
                BlockIn::Embed => Some(linear_cost(&self.layers.embed, tu, p, false)),
                BlockIn::Merge => Some(linear_cost(&self.layers.merge[l - 1], tu, p, false)),
                // The expansion over the level above's tokens, less its read and write of this
                // level's stream (the block reads the skip as its input anyway).
                BlockIn::Pull => Some(linear_cost(&self.layers.expand[l], tu / 4, p, false)),
            };
            let output = match ends.output {
                BlockOut::Stream => None,
                BlockOut::Head => Some(linear_cost(&self.layers.head, tu, p, self.cfg.pixel_head)),
                BlockOut::Expand => Some(linear_cost(&self.layers.expand[l - 1], tu, p, false)),
            };
            for e in [input, output].into_iter().flatten() {
                cost = Cost { bytes: cost.bytes + e.bytes - 2 * tu * cu * 4, flops: cost.flops + e.flops };
            }
            let before = match ends.input {
                BlockIn::Stream => String::new(),
                BlockIn::Embed => "embed+".to_string(),
                BlockIn::Merge => format!("merge{l}+"),
                BlockIn::Pull => format!("expand{}+", l + 1),
            };
            let after = match ends.output {
                BlockOut::Stream => String::new(),
                BlockOut::Head => "+head".to_string(),
                BlockOut::Expand => format!("+expand{l}"),
            };
            let label = format!("{before}{n}{after}");
            self.out.push(Launch { label, kernel, grid, block: (BLOCK_MMA_THREADS, 1, 1), args: Args::Block(a, b.layer), cost });
            return;
        }
        assert_eq!(ends, BlockEnds::INNER, "{n}: no fused kernel takes the network's ends");
        let (x, qkv, attn, hid) = (self.bufs.x[l], self.bufs.qkv, self.bufs.attn, self.bufs.hidden);
        let (lq, lp, l1, l2) = (self.layers.qkv[l], self.layers.proj[l], self.layers.fc1[l], self.layers.fc2[l]);
        self.linear(&lq, &format!("{n}.qkv"), (x, qkv), (t, w), Some(&format!("{n}.norm1")));
        let a = AttentionArgs { qkv, out: attn, rpb: self.t(&format!("{n}.rpb")), width: w as u32, height: h as u32, c: c as u32, ..Default::default() };
        let grid = ((t / WINDOW_TOKENS) as u32, (c / HEAD_DIM) as u32, 1);
        let cost = Cost { bytes: t as u64 * 4 * c as u64 * 2, flops: 2 * t as u64 * 2 * WINDOW_TOKENS as u64 * c as u64 };
        // The matrix-core attention takes the same arguments and grid, four waves a workgroup.
        let (kernel, block) = match self.kernels {
            Kernels::Wmma(threads) => (tessel_kernels::ATTENTION_WMMA, threads),
            _ => ("tessel_attention", WINDOW_TOKENS as u32),
        };
        self.out.push(Launch { label: format!("{n}.attention"), kernel, grid, block: (block, 1, 1), args: Args::Attention(a, b.layer), cost });
        self.linear(&lp, &format!("{n}.proj"), (attn, x), (t, w), None);
        self.linear(&l1, &format!("{n}.fc1"), (x, hid), (t, w), Some(&format!("{n}.norm2")));
        self.linear(&l2, &format!("{n}.fc2"), (hid, x), (t, w), None);
    }
}

/// Every launch of one evaluation, in order (docs/NETWORK.md §4, `NetworkConfig::ops`); with
/// matrix kernels, each block whose width has a fused matrix-core kernel is one launch of it.
pub fn build(cfg: &NetworkConfig, grid: &TokenGrid, bufs: &Buffers, tensors: &HashMap<String, u64>, kernels: Kernels) -> Vec<Launch> {
    let pull = !std::env::var("TESSEL_HIP_PULL").is_ok_and(|v| v == "0");
    build_with(cfg, grid, bufs, tensors, kernels, pull)
}

/// [`build`] with the pulled expansions on or off (`TESSEL_HIP_PULL=0`, the kill switch, turns
/// them off in `build`).
pub fn build_with(cfg: &NetworkConfig, grid: &TokenGrid, bufs: &Buffers, tensors: &HashMap<String, u64>, kernels: Kernels, pull: bool) -> Vec<Launch> {
    let mut b = Builder { cfg, layers: Layers::new(cfg), grid, bufs, tensors, kernels, pull, out: Vec::new() };
    let (w0, h0) = grid.level_dims(0);
    let ops = cfg.ops();
    let mut i = 0;
    while i < ops.len() {
        // The embedding, the merges, the expansions and the head go into the neighbouring block
        // where a fused kernel takes them.
        if let Some((ends, at)) = b.fusion(&ops, i) {
            let NetOp::Block(bs) = &ops[at] else { unreachable!("fusion starts at a block") };
            b.block(bs, ends);
            i = at + 1 + usize::from(ends.output != BlockOut::Stream);
            continue;
        }
        match ops[i].clone() {
            NetOp::Embed => {
                let l = b.layers.embed;
                b.linear(&l, "embed", (bufs.tokens, bufs.x[0]), (w0 * h0, w0), None);
            }
            NetOp::Block(bs) => b.block(&bs, BlockEnds::INNER),
            NetOp::Merge(l) => {
                let (w1, h1) = grid.level_dims(l + 1);
                let spec = b.layers.merge[l];
                b.linear(&spec, &format!("merge{}", l + 1), (bufs.x[l], bufs.x[l + 1]), (w1 * h1, w1), None);
            }
            NetOp::Expand(l) => {
                let (w1, h1) = grid.level_dims(l + 1);
                let spec = b.layers.expand[l];
                b.linear(&spec, &format!("expand{}", l + 1), (bufs.x[l + 1], bufs.x[l]), (w1 * h1, w1), None);
            }
            NetOp::Head => {
                let l = b.layers.head;
                b.linear(&l, "head", (bufs.x[0], bufs.head), (w0 * h0, w0), Some("head_norm"));
            }
        }
        i += 1;
    }
    b.out
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
