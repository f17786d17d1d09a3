//! tessel's network kernels: the single-source `.hip` files of this folder (one kernel per file,
//! behind `include/tessel_gpu.h`), built at compile time by clang-19 into an AMD code object per
//! architecture and NVIDIA PTX per target, embedded here with each kernel's resource figures.
//! hip-net loads the object of the device's architecture; tests check every object statically.

/// Where a code object runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    /// HSACO for the HIP runtime (hipModuleLoadData).
    Amd,
    /// PTX text, NUL-terminated, for the CUDA driver (cuModuleLoadData JIT-compiles it).
    Nvidia,
}

/// A kernel's static resources in one code object. AMD figures come from the code object's
/// metadata; PTX carries only the static shared memory and the thread bound (registers are
/// decided by the driver's JIT at load).
#[derive(Clone, Copy, Debug)]
pub struct KernelInfo {
    pub name: &'static str,
    pub vgpr: u32,
    pub sgpr: u32,
    /// Static shared memory (LDS), bytes.
    pub lds: u32,
    /// Private (scratch) segment, bytes: 0 means nothing spilled to memory.
    pub private: u32,
    pub vgpr_spill: u32,
    pub sgpr_spill: u32,
    pub wavefront: u32,
    pub max_threads: u32,
}

/// One embedded code object.
#[derive(Clone, Copy, Debug)]
pub struct CodeObject {
    /// "gfx1100", "sm_90", ...
    pub target: &'static str,
    pub platform: Platform,
    pub bytes: &'static [u8],
    pub kernels: &'static [KernelInfo],
}

include!(concat!(env!("OUT_DIR"), "/objects.rs"));

/// The portable kernels: every code object holds them, and they compute the whole network.
pub const KERNELS: &[&str] = &["tessel_attention", "tessel_linear"];

/// The extra compiler flags the code objects were built with (TESSEL_KERNEL_CFLAGS; empty for the
/// default build).
pub const BUILT_CFLAGS: &str = env!("TESSEL_KERNEL_CFLAGS_BUILT");

/// What the sm_90a fused blocks were built to do beyond the portable ones, in the start-up line's
/// words: whether they stage their f32 vectors in shared memory (kernels/block_mma.hip's
/// TS_VEC_SHARED, on unless built with -DTS_VEC_SHARED=0), how many workgroups an SM the merge into
/// a level above 64 channels asks (TS_MERGE_OCC, four unless built otherwise: merge_words) and the
/// plain block at 80 and 96 channels (TS_PLAIN_OCC: plain_words), and which of [`BUILD_SWITCHES`]
/// were built off.
pub fn wgmma_build_words(matrix: Matrix) -> Option<String> {
    if matrix != Matrix::Wgmma {
        return None;
    }
    let vectors = if built_off("TS_VEC_SHARED") { "vectors read in place (built with -DTS_VEC_SHARED=0)" } else { "vectors staged in shared memory" };
    // The smaller build-time paths are named only when one is off.
    let off: Vec<String> = BUILD_SWITCHES.iter().filter(|d| built_off(d)).map(|d| format!("-D{d}=0")).collect();
    let off = if off.is_empty() { String::new() } else { format!(", built with {}", off.join(" ")) };
    Some(format!("{vectors}, {}, {}{off}", merge_words(built_value("TS_MERGE_OCC")), plain_words(built_value("TS_PLAIN_OCC"))))
}

/// The wide merges' occupancy in the start-up line's words, from the TS_MERGE_OCC the code
/// objects were built with (None: the default, four).
pub fn merge_words(occ: Option<&str>) -> String {
    occupancy_words("wide merges", "TS_MERGE_OCC", occ)
}

/// The same for the plain blocks at 80 and 96 channels (TS_PLAIN_OCC, four unless built otherwise).
pub fn plain_words(occ: Option<&str>) -> String {
    occupancy_words("wide plain blocks", "TS_PLAIN_OCC", occ)
}

fn occupancy_words(what: &str, define: &str, occ: Option<&str>) -> String {
    match occ {
        None | Some("4") => format!("{what} four workgroups an SM"),
        Some(n) => {
            let many = match n {
                "1" => "one workgroup".to_string(),
                "2" => "two workgroups".to_string(),
                "3" => "three workgroups".to_string(),
                _ => format!("{n} workgroups"),
            };
            format!("{what} {many} an SM (built with -D{define}={n})")
        }
    }
}

/// Bytes of stack and of spill stores a thread of an NVIDIA matrix kernel may have: what the
/// static checks allow `ptxas -v` and the network's test allows the driver's JIT (local bytes).
/// 16, but for the plain 96-channel block on sm_90a, which asks for four workgroups an SM
/// (TS_PLAIN_OCC) at 128 registers and keeps the values its end needs in local memory past its
/// attention's peak, each stored once and loaded once a thread (32 bytes offline and from the
/// driver's JIT; 56 without the end's token indices remade): 64. In one wave at 3840x2160 it took
/// 0.033 -> 0.026-0.027 ms on the H100 (BENCHMARKS.md, fifty-ninth session).
pub fn nvidia_spill_allowance(target: &str, kernel: &str) -> u32 {
    if target == "sm_90a" && kernel == "tessel_block_mma_c96" && built_value("TS_PLAIN_OCC").map_or(true, |v| v != "1") {
        64
    } else {
        16
    }
}

/// The sm_90a fused blocks' smaller build-time paths, each on by default (docs/KERNELS.md): the
/// token rows' copies under one L2 policy, the window origin wrapped without remainders, each
/// vector's copy by one warp, a block's stream rows loaded before its copies.
pub const BUILD_SWITCHES: [&str; 4] = ["TS_ROWS_POLICY", "TS_ORIGIN_WRAP", "TS_VEC_WARPS", "TS_LOAD_FIRST"];

/// Whether the code objects were built with `-D<define>=0` (a build-time switch turned off).
pub fn built_off(define: &str) -> bool {
    built_with(define, "0")
}

/// Whether the code objects were built with `-D<define>=<value>` (the define's name matched whole).
pub fn built_with(define: &str, value: &str) -> bool {
    built_value(define) == Some(value)
}

/// The value the code objects were built with for `define` (`-D<define>=<value>`, the define's name
/// matched whole; the last one given, as the compiler takes it), or None where it was not given.
pub fn built_value(define: &str) -> Option<&'static str> {
    BUILT_CFLAGS.split_whitespace().filter_map(|f| f.strip_prefix("-D")?.strip_prefix(define)?.strip_prefix('=')).last()
}

/// What a fused block kernel reads before the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockIn {
    /// The level's residual stream.
    Stream,
    /// The first block of level 0: the embedding of the token buffer.
    Embed,
    /// The first block of a level above 0: the merge of the level below (2x2 gather, linear).
    Merge,
    /// The first block of a decoder level below the top: the level's skip plus the expansion of
    /// the level above, pulled per token (each warp one child quadrant) instead of added in by
    /// the level above's last block.
    Pull,
}

/// What a fused block kernel writes after the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockOut {
    /// The level's residual stream.
    Stream,
    /// The last block of level 0: the head (head_norm, head, per-pixel path) to the head buffer.
    Head,
    /// The last block of a level above 0: the expansion added into the level below.
    Expand,
}

/// What a fused block kernel does besides the block: the network's ends at level 0, the merge
/// and expansion between levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEnds {
    pub input: BlockIn,
    pub output: BlockOut,
}

impl BlockEnds {
    pub const INNER: BlockEnds = BlockEnds { input: BlockIn::Stream, output: BlockOut::Stream };
    pub const EMBED: BlockEnds = BlockEnds { input: BlockIn::Embed, output: BlockOut::Stream };
    pub const HEAD: BlockEnds = BlockEnds { input: BlockIn::Stream, output: BlockOut::Head };
    pub const MERGE: BlockEnds = BlockEnds { input: BlockIn::Merge, output: BlockOut::Stream };
    pub const EXPAND: BlockEnds = BlockEnds { input: BlockIn::Stream, output: BlockOut::Expand };
    pub const MERGE_EXPAND: BlockEnds = BlockEnds { input: BlockIn::Merge, output: BlockOut::Expand };
    pub const PULL: BlockEnds = BlockEnds { input: BlockIn::Pull, output: BlockOut::Stream };
    pub const PULL_EXPAND: BlockEnds = BlockEnds { input: BlockIn::Pull, output: BlockOut::Expand };

    /// Whether the kernel stages token rows in shared memory (the level-0 ends).
    pub fn stages_rows(self) -> bool {
        self.input == BlockIn::Embed || self.output == BlockOut::Head
    }
}

/// The fused window block kernels of one width: inner, merge, expand, merge and expand, pull, pull
/// and expand.
macro_rules! block_widths {
    ($($c:literal),*) => {
        [$(
            ($c, BlockEnds::INNER, concat!("tessel_block_mma_c", $c)),
            ($c, BlockEnds::MERGE, concat!("tessel_block_merge_mma_c", $c)),
            ($c, BlockEnds::EXPAND, concat!("tessel_block_expand_mma_c", $c)),
            ($c, BlockEnds::MERGE_EXPAND, concat!("tessel_block_merge_expand_mma_c", $c)),
            ($c, BlockEnds::PULL, concat!("tessel_block_pull_mma_c", $c)),
            ($c, BlockEnds::PULL_EXPAND, concat!("tessel_block_pull_expand_mma_c", $c)),
        )*]
    };
}
/// The embed and head variants of one width.
macro_rules! block_ends {
    ($($c:literal),*) => {
        [$(
            ($c, BlockEnds::EMBED, concat!("tessel_block_embed_mma_c", $c)),
            ($c, BlockEnds::HEAD, concat!("tessel_block_head_mma_c", $c)),
        )*]
    };
}
const BLOCK_INNER: [(usize, BlockEnds, &str); 48] = block_widths!(16, 32, 48, 64, 80, 96, 112, 128);
const BLOCK_ENDS: [(usize, BlockEnds, &str); 8] = block_ends!(16, 32, 48, 64);
const fn block_table() -> [(usize, BlockEnds, &'static str); 56] {
    let mut out = [(0, BlockEnds::INNER, ""); 56];
    let mut i = 0;
    while i < 48 {
        out[i] = BLOCK_INNER[i];
        i += 1;
    }
    while i < 56 {
        out[i] = BLOCK_ENDS[i - 48];
        i += 1;
    }
    out
}

/// The fused window block on matrix cores (kernels/block_mma.hip), one kernel per level width
/// (multiples of 16 channels up to 8 heads) and variant; the embed and head variants exist for
/// widths up to 64.
pub const BLOCK_MMA: &[(usize, BlockEnds, &str)] = &block_table();

/// Every linear layer outside the blocks on matrix cores (kernels/linear_mma.hip), by the
/// widest input each takes.
pub const LINEAR_MMA: &[(usize, &str)] = &[(128, "tessel_linear_mma_k128"), (256, "tessel_linear_mma_k256"), (512, "tessel_linear_mma_k512")];

/// The matrix-core linear kernel for a layer of `inp` inputs and `out` outputs: inputs a
/// multiple of 16 up to 512, outputs a multiple of 8.
pub fn linear_kernel(inp: usize, out: usize) -> Option<&'static str> {
    if inp == 0 || inp % 16 != 0 || out == 0 || out % 8 != 0 {
        return None;
    }
    LINEAR_MMA.iter().find(|(k, _)| inp <= *k).map(|(_, n)| *n)
}

/// The linear layers on AMD matrix cores (kernels/linear_wmma.hip: WMMA on gfx11 and gfx12, MFMA on
/// gfx90a and gfx942, the same source emulated on NVIDIA for the checks): the portable kernel's
/// arguments and weights.
pub const LINEAR_WMMA: &str = "tessel_linear_wmma";
/// Window attention on the same matrix cores (kernels/attention_wmma.hip): the portable kernel's
/// arguments and grid.
pub const ATTENTION_WMMA: &str = "tessel_attention_wmma";
/// The kernels of the AMD matrix-core path ([`wmma_path`]): every object of such a target holds both.
pub const WMMA_KERNELS: &[&str] = &[LINEAR_WMMA, ATTENTION_WMMA];
/// The widest input tessel_linear_wmma stages (its shared memory is sized for it).
pub const WMMA_MAX_IN: usize = 256;

/// Whether tessel_linear_wmma runs a layer of `inp` inputs and `out` outputs: both multiples of
/// 16, the inputs up to [`WMMA_MAX_IN`].
pub fn wmma_linear_fits(inp: usize, out: usize) -> bool {
    inp > 0 && inp % 16 == 0 && inp <= WMMA_MAX_IN && out > 0 && out % 16 == 0
}

/// Whether a target's code object holds tessel_linear_wmma, and how it computes: WMMA on RDNA3
/// and RDNA4 (gfx11, gfx12), MFMA on CDNA2 and CDNA3 (gfx90a, gfx942), emulated by warp shuffles
/// in NVIDIA PTX. RDNA2 (gfx1030) has no matrix cores.
pub fn wmma_path(target: &str) -> Option<Matrix> {
    if target.starts_with("gfx11") || target.starts_with("gfx12") {
        Some(Matrix::Wmma)
    } else if target == "gfx90a" || target == "gfx942" {
        Some(Matrix::Mfma)
    } else if target.starts_with("sm_") {
        Some(Matrix::WmmaEmulated)
    } else {
        None
    }
}

/// Every matrix-core kernel (the code objects of targets with a matrix path hold all of them).
pub fn matrix_kernels() -> impl Iterator<Item = &'static str> {
    BLOCK_MMA.iter().map(|(_, _, k)| *k).chain(LINEAR_MMA.iter().map(|(_, k)| *k))
}

/// A matrix-core instruction family that tessel has kernels for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// NVIDIA `mma.sync.m16n8k16` f16 with f32 accumulation (sm_80 and later).
    MmaSync,
    /// The same, and the fused blocks' weight products of widths up to 48 as sm_90a warpgroup
    /// products with the weights in shared memory (`wgmma.mma_async`; compute capability 9.0).
    Wgmma,
    /// AMD `v_wmma_f32_16x16x16_f16` (gfx11, gfx12) for the linear layers and the attention, nothing
    /// fused: opt-in (`TESSEL_HIP_WMMA=1`) until it has run on AMD hardware.
    Wmma,
    /// AMD `v_mfma_f32_16x16x16f16` (gfx90a, gfx942; waves of 64) for the linear layers, the
    /// same kernel and terms as [`Matrix::Wmma`].
    Mfma,
    /// The WMMA linear kernel with gfx11's layout emulated by warp shuffles (NVIDIA PTX): slow,
    /// for checking the kernel against the CPU reference where no AMD GPU is at hand.
    WmmaEmulated,
}

impl Matrix {
    pub fn describe(self) -> &'static str {
        match self {
            Matrix::MmaSync => "mma.sync m16n8k16",
            Matrix::Wgmma => "wgmma (sm_90a) and mma.sync m16n8k16",
            Matrix::Wmma => "WMMA 16x16x16 (linear layers and attention)",
            Matrix::Mfma => "MFMA 16x16x16 (linear layers and attention)",
            Matrix::WmmaEmulated => "WMMA 16x16x16 emulated by warp shuffles (linear layers and attention; a check, not a fast path)",
        }
    }

    /// Whether the path fuses whole window blocks (the NVIDIA paths) or runs the portable plan
    /// with its linear layers and attention on matrix cores (WMMA, MFMA).
    pub fn fuses_blocks(self) -> bool {
        matches!(self, Matrix::MmaSync | Matrix::Wgmma)
    }

    /// Threads of a tessel_linear_wmma workgroup: four waves (of 64 on gfx9, else 32), 64 tokens.
    pub fn wmma_threads(self) -> u32 {
        if self == Matrix::Mfma {
            256
        } else {
            128
        }
    }
}

/// The matrix-core path a code object's target takes by default, if its kernels are written:
/// NVIDIA sm_80 and later. AMD gfx11, gfx12, gfx90a and gfx942 hold the matrix-core linear kernel
/// ([`wmma_path`]), taken only on request until it has run on AMD hardware.
pub fn matrix_path(target: &str) -> Option<Matrix> {
    if target == "sm_90a" {
        return Some(Matrix::Wgmma);
    }
    let sm: u32 = target.strip_prefix("sm_")?.parse().ok()?;
    (sm >= 80).then_some(Matrix::MmaSync)
}

/// Whether the sm_90a kernels can run a block of `channels` with an MLP of `hidden`: their shared
/// memory is laid out for an MLP of 2C, the whole block's weights up to 48 channels
/// (kernels/include/tessel_block.h's TS_WG), a stream of them from 64 to 128 (TS_WS).
pub fn wgmma_fits(channels: usize, hidden: usize) -> bool {
    hidden == 2 * channels
}

/// Whether the sm_90a blocks serve these level widths: none narrower than the level below it,
/// since an expansion's block stages that level's bias (4 lower_c floats) in the 4 C floats it
/// sets aside (kernels/include/tessel_block.h, `block_vec_floats`).
pub fn wgmma_widths_fit(channels: &[usize]) -> bool {
    channels.windows(2).all(|w| w[0] <= w[1])
}

/// The widest level whose sm_90a blocks hold all their weights in shared memory at once; wider
/// ones, up to [`WGMMA_STREAM_MAX_CHANNELS`], stream them.
pub const WGMMA_MAX_CHANNELS: usize = 48;
pub const WGMMA_STREAM_MAX_CHANNELS: usize = 128;

/// The sm_90a PTX (warpgroup products), for compute capability 9.0 only: its architecture-specific
/// instructions run on no other.
pub fn ptx_wgmma_for(major: u32, minor: u32) -> Option<&'static CodeObject> {
    (major == 9 && minor == 0).then(|| code_object("sm_90a")).flatten()
}

/// The fused-block kernel for a level width with an MLP of `hidden` channels, where one exists.
pub fn block_kernel(channels: usize, hidden: usize, ends: BlockEnds) -> Option<&'static str> {
    if hidden == 0 || hidden % 16 != 0 {
        return None;
    }
    BLOCK_MMA.iter().find(|(c, e, _)| *c == channels && *e == ends).map(|(_, _, k)| *k)
}

/// Every kernel a target's code object holds: the portable ones, and its matrix-core kernels.
pub fn kernels_for(target: &str) -> Vec<&'static str> {
    let mut out = KERNELS.to_vec();
    if matrix_path(target).is_some() {
        out.extend(matrix_kernels());
    }
    if wmma_path(target).is_some() {
        out.extend(WMMA_KERNELS);
    }
    out
}

/// The code object for a target, if built.
pub fn code_object(target: &str) -> Option<&'static CodeObject> {
    CODE_OBJECTS.iter().find(|c| c.target == target)
}

/// The PTX for an NVIDIA compute capability: the highest target not above it.
pub fn ptx_for(major: u32, minor: u32) -> Option<&'static CodeObject> {
    let cc = major * 10 + minor;
    CODE_OBJECTS
        .iter()
        .filter(|c| c.platform == Platform::Nvidia)
        .filter_map(|c| c.target.strip_prefix("sm_").and_then(|v| v.parse::<u32>().ok()).map(|v| (v, c)))
        .filter(|(v, _)| *v <= cc)
        .max_by_key(|(v, _)| *v)
        .map(|(_, c)| c)
}

/// Shared memory (LDS) a workgroup may use on a target, bytes.
pub fn lds_limit(target: &str) -> u32 {
    match target {
        t if t.starts_with("sm_") => 48 * 1024,
        _ => 64 * 1024,
    }
}

/// Wavefront size a target's kernels are built for: 64 on gfx9 (CDNA), 32 on RDNA and NVIDIA.
pub fn expected_wavefront(target: &str) -> u32 {
    if target.starts_with("gfx9") {
        64
    } else {
        32
    }
}

/// The markdown table of docs/KERNELS.md: per kernel and target, registers, LDS, scratch,
/// spills, wavefront.
pub fn markdown_table() -> String {
    let mut s = String::from("| kernel | target | VGPRs | SGPRs | LDS bytes | scratch bytes | spills (VGPR/SGPR) | wavefront | max threads |\n|---|---|---|---|---|---|---|---|---|\n");
    for name in KERNELS.iter().copied().chain(matrix_kernels()).chain(WMMA_KERNELS.iter().copied()) {
        for c in CODE_OBJECTS {
            if let Some(k) = c.kernels.iter().find(|k| k.name == name) {
                let regs = |v: u32| if c.platform == Platform::Nvidia { "(JIT)".to_string() } else { v.to_string() };
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    name,
                    c.target,
                    regs(k.vgpr),
                    regs(k.sgpr),
                    k.lds,
                    k.private,
                    if c.platform == Platform::Nvidia { "(JIT)".to_string() } else { format!("{}/{}", k.vgpr_spill, k.sgpr_spill) },
                    k.wavefront,
                    k.max_threads
                ));
            }
        }
    }
    s
}
