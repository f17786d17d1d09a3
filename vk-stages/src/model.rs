//! A model package on the device: its f16 weights uploaded once into one device-local buffer,
//! and every pipeline its config needs built at load. Shared (Arc) by any number of Engines.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;
use tessel_model::config::{NetworkConfig, HEAD_CHANNELS, PIXEL_FEATURES};
use tessel_model::package::ModelPackage;

use crate::bindings as b;
use crate::device::DeviceShared;
use crate::error::{Check, Result, VkError};
use crate::memory::Buffer;
use crate::pipelines::{Pipelines, Variant};
use crate::layers::{check_config, Layers, LinearSpec};
use crate::tiles::NetTiles;

/// Which network path the model's linear layers take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetPath {
    /// Scalar f32 FMAs (any Vulkan 1.3 device).
    Scalar { why: String },
    /// VK_KHR_cooperative_matrix, f16 x f16 -> f32 at 16x16x16.
    CoopMat,
}

impl NetPath {
    pub fn label(&self) -> String {
        match self {
            NetPath::Scalar { why } => format!("scalar ({why})"),
            NetPath::CoopMat => "cooperative matrix f16 16x16x16".into(),
        }
    }
}

/// A linear layer's pipeline variant, and the tokens one of its workgroups takes where a
/// cooperative-matrix variant runs it (None: the scalar shader, a grid of WG_TOKENS tokens by
/// LINEAR_OUTS outputs). Model load builds this variant alone, and the plan dispatches it.
fn linear_variant(path: &NetPath, tiles: &NetTiles, shared_memory: u32, l: &LinearSpec, p: u32) -> (Variant, Option<u32>) {
    if *path == NetPath::CoopMat {
        if let Some((variant, rows)) = tiles.direct_dispatch(shared_memory, l, p) {
            return (variant, Some(rows));
        }
        if let Some(cols) = tiles.cols(shared_memory, l) {
            let rows = tiles.rows(shared_memory, l);
            return (l.coop_variant(p, rows, cols), Some(rows));
        }
    }
    (l.variant(p), None)
}

/// Chooses the path: cooperative matrix where the device offers it, unless TESSEL_VK_COOPMAT=0.
pub fn choose_path(shared: &DeviceShared) -> NetPath {
    if std::env::var("TESSEL_VK_COOPMAT").is_ok_and(|v| v == "0") {
        NetPath::Scalar { why: "TESSEL_VK_COOPMAT=0".into() }
    } else if !shared.caps.coopmat_f16_16 {
        NetPath::Scalar { why: "no f16 cooperative matrix on this device".into() }
    } else {
        NetPath::CoopMat
    }
}

pub struct Model {
    pub shared: Arc<DeviceShared>,
    pub path: NetPath,
    /// The attention runs on cooperative matrices (attention_coop.comp): the path has them,
    /// `TESSEL_VK_ATTENTION_COOP` is not 0 and the device's subgroups and shared memory fit.
    pub attention_coop: bool,
    /// Per level: the shader that runs each block as one dispatch, if any (fused_levels).
    pub fused: Vec<Option<&'static str>>,
    pub name: String,
    pub trained: bool,
    pub config: NetworkConfig,
    pub layers: Layers,
    pub weights: Buffer,
    offsets: HashMap<String, u64>,
    pub pipelines: Pipelines,
    /// The input stage's specialisation constants (`input_spec`).
    pub input_spec: Vec<u32>,
    /// The per-pixel stages' fast paths its pipelines were built with.
    pub pixel_paths: PixelPaths,
    /// The shaders' network tiles its pipelines were built with.
    pub tiles: NetTiles,
    /// Why the attention's softmax, the MLP's activations and the linear layers' input rows stay
    /// in shared memory though `TESSEL_VK_ATTENTION_REGS`, `TESSEL_VK_MLP_REGS` and
    /// `TESSEL_VK_LINEAR_REGS` allow registers (`regs_layout`).
    pub regs_why: Option<String>,
}

/// Whether the register paths (the attention's softmax and norm1, the MLP, the linear layers'
/// staged rows) can run on this device: None where they can, else why not. They need subgroups of
/// 32 and NVIDIA's fragment layout, which the layout probe checks (crate::layout;
/// `TESSEL_VK_LAYOUT_DUMP=1` prints what it found).
fn regs_layout(shared: &Arc<DeviceShared>, pipelines: &mut Pipelines) -> Result<Option<String>> {
    if shared.caps.subgroup_size != 32 {
        return Ok(Some(format!("the register paths need subgroups of 32, the device's are {}", shared.caps.subgroup_size)));
    }
    Ok(match crate::layout::probe(shared, pipelines)? {
        Ok(found) => found.check_fragment().err().map(|e| format!("the layout probe: {e}")),
        Err(e) => Some(format!("the layout probe: {e}")),
    })
}

impl Model {
    /// The pipelines of the front and back stages (`fixed_variants`) for this package.
    pub fn fixed_variants(&self) -> Vec<Variant> {
        fixed_variants(&self.input_spec, self.config.accumulate)
    }
}

/// The input stage's specialisation constants: P, then, where P <= TS_EMBED_SPEC_P, the pixel
/// embedding's weights and biases as constants (include/bindings.h gives the places), so that the
/// shader reads none of them from memory (`TESSEL_VK_SPEC_WEIGHTS=0` keeps them in the buffer:
/// zeros there); then, at TS_SPEC_INPUT_ACCUMULATE, whether the package accumulates, and at
/// TS_SPEC_INPUT_HISTORY_A the history kernel's Keys parameter (config `history_a`, f32 bits),
/// then at TS_SPEC_INPUT_STREAM whether its 3x3 is streamed and at TS_SPEC_INPUT_WG_X/Y its
/// workgroup (`PixelPaths`).
/// The values are the f16 weights the buffer holds, widened exactly.
pub fn input_spec(pkg: &ModelPackage, paths: PixelPaths) -> Vec<u32> {
    let (p, f, pmax) = (pkg.config.pixel_embed, PIXEL_FEATURES, b::EMBED_SPEC_P as usize);
    let off = std::env::var("TESSEL_VK_SPEC_WEIGHTS").is_ok_and(|v| v == "0");
    let from_spec = !off && p <= pmax;
    let mut spec = vec![p as u32, from_spec as u32];
    spec.resize(b::SPEC_INPUT_ACCUMULATE as usize, 0);
    spec.push(pkg.config.accumulate as u32);
    spec.push(pkg.config.history_a.to_bits());
    spec.push(paths.input_stream as u32);
    spec.push(paths.input_wg.0);
    spec.push(paths.input_wg.1);
    if from_spec {
        let bits = |v: f32| half::f16::from_f32(v).to_f32().to_bits();
        let (w, bias) = (&pkg.tensor("pixel_embed.weight").data, &pkg.tensor("pixel_embed.bias").data);
        for c in 0..p {
            for i in 0..f {
                spec[2 + c * f + i] = bits(w[c * f + i]);
            }
            spec[2 + pmax * f + c] = bits(bias[c]);
        }
    }
    spec
}

/// The per-pixel stages' fast paths, each with a kill switch, read once when a model loads: the
/// input stage reduces its 3x3's features as the samples load (`TESSEL_VK_INPUT_STREAM=0`: from the
/// whole neighbourhood, as before). The same features; the nine samples need not all stay live,
/// and on the H200 the stage takes 60 registers instead of 96 and 0.269 ms instead of 0.362 at
/// 3840 x 2160 (BENCHMARKS.md, thirty-fourth session). The reconstruction's gather streamed the
/// same way was no faster there and is not a path.
///
/// The input stage's workgroup (pixels wide and high) is a tuning knob as well:
/// `TESSEL_VK_INPUT_WG=WxH`, powers of two up to 32 with 32 to 1024 invocations; by default 32 x 4,
/// each warp one row of 32 pixels (0.266 -> 0.240 ms against 8 x 8 on the H200 at 3840 x 2160;
/// 16 x 16 and 32 x 8 were slower, and the reconstruction was fastest in its 8 x 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelPaths {
    pub input_stream: bool,
    pub input_wg: (u32, u32),
}

impl Default for PixelPaths {
    fn default() -> Self {
        PixelPaths { input_stream: true, input_wg: (b::INPUT_WG_X, b::INPUT_WG_Y) }
    }
}

impl PixelPaths {
    /// The paths the environment asks for; a malformed setting is an error naming it.
    pub fn from_env() -> std::result::Result<Self, (String, String)> {
        let mut p = PixelPaths { input_stream: !std::env::var("TESSEL_VK_INPUT_STREAM").is_ok_and(|v| v == "0"), ..Default::default() };
        if let Ok(v) = std::env::var("TESSEL_VK_INPUT_WG") {
            p.input_wg = parse_wg(&v).map_err(|msg| ("TESSEL_VK_INPUT_WG".to_string(), format!("'{v}': {msg}")))?;
        }
        Ok(p)
    }

    /// What the start-up line says about them.
    pub fn describe(&self) -> String {
        format!(
            "input stage: streamed 3x3 {} (TESSEL_VK_INPUT_STREAM), workgroup {}x{} (TESSEL_VK_INPUT_WG)",
            if self.input_stream { "on" } else { "off" },
            self.input_wg.0,
            self.input_wg.1
        )
    }
}

/// "WxH": a workgroup of pixels that tiles the padded token grid of any config (its sides are
/// multiples of 8 tokens, 32 pixels): powers of two up to 32, 32 to 1024 invocations.
fn parse_wg(v: &str) -> std::result::Result<(u32, u32), String> {
    let (w, h) = v.split_once('x').ok_or("expected WxH, e.g. 16x8")?;
    let side = |s: &str| s.trim().parse::<u32>().ok().filter(|&n| n.is_power_of_two() && n <= 32);
    match (side(w), side(h)) {
        (Some(w), Some(h)) if (32..=1024).contains(&(w * h)) => Ok((w, h)),
        (Some(_), Some(_)) => Err("a workgroup of 32 to 1024 pixels".into()),
        _ => Err("each side a power of two up to 32".into()),
    }
}

/// Records `f` into a one-time command buffer, submits it and waits (model load only).
pub fn submit_once(shared: &DeviceShared, f: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
    let d = &shared.device;
    unsafe {
        let pool = d
            .create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(shared.queue_family), None)
            .call("vkCreateCommandPool")?;
        let run = || -> Result<()> {
            let cmd = d
                .allocate_command_buffers(&vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(1))
                .call("vkAllocateCommandBuffers")?[0];
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))
                .call("vkBeginCommandBuffer")?;
            f(cmd);
            d.end_command_buffer(cmd).call("vkEndCommandBuffer")?;
            let fence = d.create_fence(&vk::FenceCreateInfo::default(), None).call("vkCreateFence")?;
            let cmds = [cmd];
            let r = d
                .queue_submit(shared.queue, &[vk::SubmitInfo::default().command_buffers(&cmds)], fence)
                .call("vkQueueSubmit")
                .and_then(|_| d.wait_for_fences(&[fence], true, u64::MAX).call("vkWaitForFences"));
            d.destroy_fence(fence, None);
            r
        };
        let r = run();
        d.destroy_command_pool(pool, None);
        r
    }
}

impl Model {
    /// Uploads a package and builds its pipelines. Refuses a config the shaders cannot take.
    pub fn new(shared: &Arc<DeviceShared>, pkg: &ModelPackage) -> Result<Arc<Model>> {
        let env = |(field, msg)| VkError::Config { model: pkg.name.clone(), field, msg };
        let paths = PixelPaths::from_env().map_err(env)?;
        let tiles = NetTiles::from_env().map_err(env)?;
        Self::with_paths(shared, pkg, paths, tiles)
    }

    /// `new` with the per-pixel stages' paths and the network's tiles given instead of read from
    /// the environment.
    pub fn with_paths(shared: &Arc<DeviceShared>, pkg: &ModelPackage, pixel_paths: PixelPaths, mut tiles: NetTiles) -> Result<Arc<Model>> {
        check_config(&pkg.name, &pkg.config)?;
        let path = choose_path(shared);
        let attention_coop = path == NetPath::CoopMat && tiles.attention_coop && crate::tiles::attention_coop_fits(shared.caps.subgroup_size, shared.caps.shared_memory, tiles.attention_scores_f32);
        let (mut blob, mut offsets) = pkg.device_blob();
        offsets.insert(HEAD_PACK.into(), blob.len() as u64);
        blob.extend(head_pack(pkg));
        let weights = crate::memory::upload(shared, "weights", &blob)?;
        let fused = fused_levels(shared, &pkg.config, &path);
        // The fused blocks read and write f32 streams.
        tiles.stream16 &= fused.iter().all(Option::is_none);
        let layers = Layers::with_stream16(&pkg.config, tiles.stream16);
        let mut pipelines = Pipelines::new(shared)?;
        let coop = path == NetPath::CoopMat;
        let regs_why = if (attention_coop && tiles.attention_regs) || (coop && (tiles.mlp_regs || tiles.linear_regs)) { regs_layout(shared, &mut pipelines)? } else { None };
        tiles.attention_regs &= attention_coop && regs_why.is_none();
        tiles.mlp_regs &= coop && regs_why.is_none();
        tiles.linear_regs &= coop && regs_why.is_none();
        let input_spec = input_spec(pkg, pixel_paths);
        for v in fixed_variants(&input_spec, pkg.config.accumulate) {
            pipelines.build(&v)?;
        }
        Self::build_network_pipelines(&mut pipelines, &pkg.config, &layers, &tiles, &path, attention_coop, shared.caps.shared_memory, &fused)?;
        if path == NetPath::CoopMat {
            let pe = pkg.config.pixel_embed as u32;
            for (l, fc1) in layers.fc1.iter().enumerate() {
                if fused[l].is_some() {
                    continue;
                }
                if let Some((variant, _, _)) = tiles.mlp_dispatch(shared.caps.shared_memory, fc1, pe) {
                    pipelines.build(&variant)?;
                }
            }
            if let Some((variant, _)) = tiles.mlp_head_dispatch(shared.caps.shared_memory, &layers.fc1[0], &pkg.config) {
                pipelines.build(&variant)?;
            }
        }
        pipelines.save_cache();
        for (l, f) in fused.iter().enumerate() {
            if let Some(shader) = f {
                let c = pkg.config.channels[l] as u32;
                pipelines.build(&Variant::new(shader, &[c, pkg.config.mlp_ratio as u32 * c]))?;
            }
        }
        Ok(Arc::new(Model {
            shared: shared.clone(),
            path,
            attention_coop,
            fused,
            name: pkg.name.clone(),
            trained: pkg.trained,
            config: pkg.config.clone(),
            layers,
            weights,
            offsets,
            pipelines,
            input_spec,
            pixel_paths,
            tiles,
            regs_why,
        }))
    }

    /// The attention of each level that is not fused into one dispatch a block, and the variant
    /// of each linear layer that runs as a dispatch of its own ([`dispatched_linears`]).
    #[allow(clippy::too_many_arguments)]
    fn build_network_pipelines(p: &mut Pipelines, cfg: &NetworkConfig, layers: &Layers, tiles: &NetTiles, path: &NetPath, attention_coop: bool, shared_memory: u32, fused: &[Option<&'static str>]) -> Result<()> {
        let pe = cfg.pixel_embed as u32;
        for (l, &c) in cfg.channels.iter().enumerate() {
            if fused[l].is_none() {
                p.build(&tiles.attention(c, attention_coop, attention_coop && tiles.attention_qkv(c, shared_memory), shared_memory))?;
            }
        }
        // Each linear layer's one variant: the scalar shader only where no cooperative-matrix
        // variant takes the layer.
        let coop = *path == NetPath::CoopMat;
        for l in dispatched_linears(layers, fused, |c| attention_coop && tiles.attention_qkv(c, shared_memory), |fc1| if coop { tiles.mlp_dispatch(shared_memory, fc1, pe).map(|m| m.2) } else { None }) {
            p.build(&linear_variant(path, tiles, shared_memory, &l, pe).0)?;
        }
        Ok(())
    }

    /// The pipeline variant and workgroup counts of a linear layer over `tokens` tokens.
    pub fn linear_dispatch(&self, l: &LinearSpec, tokens: usize) -> (Variant, (u32, u32, u32)) {
        match linear_variant(&self.path, &self.tiles, self.shared.caps.shared_memory, l, self.config.pixel_embed as u32) {
            // One workgroup per `rows` tokens; it loops over the output chunks itself.
            (variant, Some(rows)) => (variant, ((tokens as u32).div_ceil(rows), 1, 1)),
            (variant, None) => (variant, ((tokens as u32).div_ceil(b::WG_TOKENS), l.out / b::LINEAR_OUTS, 1)),
        }
    }

    /// The pipeline variant and workgroup counts of a level's whole MLP in one dispatch over
    /// `tokens` tokens, where the path runs it (`NetTiles::mlp`), and whether it takes the block's
    /// attention projection first (`NetTiles::mlp_proj`); None: fc1 and fc2 apart.
    pub fn mlp_dispatch(&self, level: usize, tokens: usize) -> Option<(Variant, (u32, u32, u32), bool)> {
        let fc1 = &self.layers.fc1[level];
        if self.path != NetPath::CoopMat {
            return None;
        }
        let (variant, rows, proj) = self.tiles.mlp_dispatch(self.shared.caps.shared_memory, fc1, self.config.pixel_embed as u32)?;
        Some((variant, ((tokens as u32).div_ceil(rows), 1, 1), proj))
    }

    /// The pipeline variant and workgroup counts of the network's last block's MLP with the head
    /// in one dispatch over `tokens` tokens of level 0, where the path runs it
    /// (`NetTiles::mlp_head_dispatch`); None: the head apart.
    pub fn mlp_head_dispatch(&self, tokens: usize) -> Option<(Variant, (u32, u32, u32))> {
        if self.path != NetPath::CoopMat {
            return None;
        }
        let (variant, rows) = self.tiles.mlp_head_dispatch(self.shared.caps.shared_memory, &self.layers.fc1[0], &self.config)?;
        Some((variant, ((tokens as u32).div_ceil(rows), 1, 1)))
    }

    /// Shared memory a workgroup may take on this device.
    pub fn shared_memory(&self) -> u32 {
        self.shared.caps.shared_memory
    }

    /// Whether a level's attention computes its q, k and v itself (attention_qkv_coop), with no
    /// qkv dispatch before it (`NetTiles::attention_qkv`).
    pub fn attention_qkv(&self, level: usize) -> bool {
        self.attention_coop && self.tiles.attention_qkv(self.config.channels[level], self.shared.caps.shared_memory)
    }

    /// The shader that runs a level's blocks as one dispatch each, if any (`fused_levels`).
    pub fn fused_level(&self, level: usize) -> Option<&'static str> {
        self.fused.get(level).copied().flatten()
    }

    /// Device address of a tensor.
    pub fn tensor(&self, name: &str) -> u64 {
        self.weights.address + self.offsets.get(name).unwrap_or_else(|| panic!("tensor '{name}' is not in the model"))
    }
}

/// The name under which the weights buffer holds [`head_pack`].
pub const HEAD_PACK: &str = "head#pack";

/// The head's tensors as mlp_proj_head_regs_w_coop reads them from one address (its HEAD_PACK_*
/// offsets; mlp_regs_coop.comp): the per-pixel path's 16 x 16 block-diagonal matrix (row k,
/// column n: pixel_head.weight[n % 8][k % 8] where k and n are the same pixel; zero without the
/// path or where P is not 8), head_norm's weight and bias (f16), the head's bias with the
/// per-pixel path's added (f32, each rounded to f16 first, as linear_direct_coop.comp adds them),
/// head.weight (f16, [head channels][C]).
pub fn head_pack(pkg: &ModelPackage) -> Vec<u8> {
    let cfg = &pkg.config;
    let h16 = |v: f32| half::f16::from_f32(v);
    let f16s = |name: &str| pkg.tensor(name).data.iter().flat_map(|&v| h16(v).to_le_bytes()).collect::<Vec<u8>>();
    let pixel_w = (cfg.pixel_head && cfg.pixel_embed == 8).then(|| &pkg.tensor("pixel_head.weight").data);
    let pixel_b = cfg.pixel_head.then(|| &pkg.tensor("pixel_head.bias").data);
    let mut out = Vec::new();
    for k in 0..16 {
        for n in 0..16 {
            let v = pixel_w.filter(|_| k / 8 == n / 8).map_or(0.0, |w| w[(n % 8) * 8 + k % 8]);
            out.extend(h16(v).to_le_bytes());
        }
    }
    out.extend(f16s("head_norm.weight"));
    out.extend(f16s("head_norm.bias"));
    for (o, &hb) in pkg.tensor("head.bias").data.iter().enumerate() {
        let pb = pixel_b.map_or(0.0, |b| h16(b[o % HEAD_CHANNELS]).to_f32());
        out.extend((h16(hb).to_f32() + pb).to_le_bytes());
    }
    out.extend(f16s("head.weight"));
    out
}

/// Shared memory of block_fused.comp for C channels: residual rows (f32), normalised rows (f16),
/// one head's keys and values (f32), the bias table.
pub fn fused_shared_bytes(c: u32) -> u32 {
    64 * c * 4 + 64 * c * 2 + 2 * 64 * 16 * 4 + 225 * 4
}

/// Shared memory of block_coop.comp for C channels: LayerNorm rows (f16), one head's q, k, v and
/// output (f16), the f32 result tile F and the f16 tile P (64 x 64 each).
pub fn coop_block_shared_bytes(c: u32) -> u32 {
    64 * c * 2 + 4 * 64 * 16 * 2 + 64 * 64 * 4 + 64 * 64 * 2
}

/// Whether block_coop.comp takes a level of C channels with an MLP of `hidden`: C a multiple of
/// 16 up to 8 heads, the hidden width a multiple of its 32-unit chunks, subgroups of 32 (its
/// rows follow four subgroups), its shared memory within the device's.
pub fn coop_block_fits(shared: &DeviceShared, c: u32, hidden: u32) -> bool {
    c % 16 == 0 && c <= 128 && hidden % 32 == 0 && shared.caps.subgroup_size == 32 && coop_block_shared_bytes(c) <= shared.caps.shared_memory
}

/// Which shader, if any, runs each level's blocks as one dispatch per window, opted in with
/// TESSEL_VK_FUSED=1 (both measured slower than the unfused layers on the H200, BENCHMARKS.md):
/// - the cooperative-matrix path: block_coop.comp where it fits;
/// - the scalar path: block_fused.comp where its shared memory fits with 1 KiB to spare.
pub fn fused_levels(shared: &DeviceShared, cfg: &NetworkConfig, path: &NetPath) -> Vec<Option<&'static str>> {
    let env = std::env::var("TESSEL_VK_FUSED").ok();
    let hidden = |c: usize| (cfg.mlp_ratio * c) as u32;
    cfg.channels
        .iter()
        .map(|&c| match path {
            NetPath::CoopMat if env.as_deref() == Some("1") && coop_block_fits(shared, c as u32, hidden(c)) => Some("block_coop"),
            NetPath::Scalar { .. } if env.as_deref() == Some("1") && fused_shared_bytes(c as u32) + 1024 <= shared.caps.shared_memory => Some("block_fused"),
            _ => None,
        })
        .collect()
}

/// The linear layers the network records as dispatches of their own (plan.rs's `block`, as the
/// model decides): all but those of a fused level's blocks, a level's qkv where its attention
/// computes q, k and v itself (`qkv_in(c)`), and fc1 and fc2 where the MLP runs in one dispatch,
/// with proj where that dispatch takes the projection first (`mlp(fc1)`: Some(takes proj)).
pub fn dispatched_linears(layers: &Layers, fused: &[Option<&'static str>], qkv_in: impl Fn(usize) -> bool, mlp: impl Fn(&LinearSpec) -> Option<bool>) -> Vec<LinearSpec> {
    let mut v = vec![layers.embed, layers.head];
    for (l, fc1) in layers.fc1.iter().enumerate() {
        if fused[l].is_some() {
            continue;
        }
        let mlp = mlp(fc1);
        if !qkv_in(layers.qkv[l].inp as usize) {
            v.push(layers.qkv[l]);
        }
        if mlp != Some(true) {
            v.push(layers.proj[l]);
        }
        if mlp.is_none() {
            v.extend([layers.fc1[l], layers.fc2[l]]);
        }
    }
    v.extend(layers.merge.iter().chain(&layers.expand).copied());
    v
}

/// Pipelines that do not depend on the network's widths (beyond P and whether the package
/// accumulates): the reconstruction's constants are STORED_CONTEXT and ACCUMULATE.
pub fn fixed_variants(input_spec: &[u32], accumulate: bool) -> Vec<Variant> {
    let (input, recon, acc) = ("input", "reconstruct", accumulate as u32);
    vec![
        Variant::new("exposure_partial", &[]),
        Variant::new("exposure_final", &[]),
        Variant::new("prepare", &[]),
        Variant::new(input, input_spec),
        Variant::new(recon, &[0, acc]),
        Variant::new("taau", &[]),
        Variant::new(recon, &[1, acc]),
    ]
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_workgroup_setting_is_checked() {
        assert_eq!(parse_wg("16x8"), Ok((16, 8)));
        assert_eq!(parse_wg("32x1"), Ok((32, 1)));
        assert!(parse_wg("16").unwrap_err().contains("WxH"));
        assert!(parse_wg("12x8").unwrap_err().contains("power of two"));
        assert!(parse_wg("64x1").unwrap_err().contains("power of two"));
        assert!(parse_wg("4x4").unwrap_err().contains("32 to 1024"));
        assert_eq!(parse_wg("32x32"), Ok((32, 32)));
    }

    #[test]
    fn the_input_stage_takes_the_embedding_as_constants_where_it_fits() {
        let bits = |v: f32| half::f16::from_f32(v).to_f32().to_bits();
        let pkg = ModelPackage::untrained(NetworkConfig::default(), 3);
        let p = pkg.config.pixel_embed;
        let (f, pmax) = (PIXEL_FEATURES, b::EMBED_SPEC_P as usize);
        let on = PixelPaths::default();
        let spec = input_spec(&pkg, on);
        assert_eq!(&spec[..2], &[p as u32, 1]);
        assert_eq!(spec.len(), 2 + pmax * (f + 1) + 5, "every constant id the shader declares");
        assert_eq!(spec.len(), b::SPEC_INPUT_WG_Y as usize + 1);
        assert_eq!((b::SPEC_INPUT_WG_X, b::SPEC_INPUT_WG_Y), (b::SPEC_INPUT_STREAM + 1, b::SPEC_INPUT_STREAM + 2));
        assert_eq!(&spec[b::SPEC_INPUT_WG_X as usize..], &[b::INPUT_WG_X, b::INPUT_WG_Y]);
        assert_eq!(b::SPEC_INPUT_HISTORY_A, b::SPEC_INPUT_ACCUMULATE + 1);
        assert_eq!(b::SPEC_INPUT_STREAM, b::SPEC_INPUT_HISTORY_A + 1);
        assert_eq!(spec[b::SPEC_INPUT_STREAM as usize], 1, "the streamed 3x3 goes in as its constant");
        assert_eq!(input_spec(&pkg, PixelPaths { input_stream: false, ..on })[b::SPEC_INPUT_STREAM as usize], 0);
        assert_eq!(spec[b::SPEC_INPUT_ACCUMULATE as usize], 0, "the default config does not accumulate");
        assert_eq!(f32::from_bits(spec[b::SPEC_INPUT_HISTORY_A as usize]), -0.5, "the default history kernel is Catmull-Rom");
        let (w, bias) = (&pkg.tensor("pixel_embed.weight").data, &pkg.tensor("pixel_embed.bias").data);
        // Weight [c][i] at 2 + 16 c + i, bias c at 2 + 16 pmax + c (include/bindings.h), as the
        // f16 the buffer holds.
        assert_eq!(spec[2 + 3 * f + 5], bits(w[3 * f + 5]));
        assert_eq!(spec[2 + pmax * f + p - 1], bits(bias[p - 1]));
        assert!(spec[2..].iter().any(|&v| v != 0));
        // Wider than the constants hold: the weights stay in the buffer.
        let wide = ModelPackage::untrained(NetworkConfig { pixel_embed: pmax + 4, ..NetworkConfig::default() }, 3);
        let spec = input_spec(&wide, on);
        assert_eq!(&spec[..2], &[(pmax + 4) as u32, 0]);
        assert!(spec[2..b::SPEC_INPUT_ACCUMULATE as usize + 1].iter().all(|&v| v == 0));
        // A package that accumulates says so in its constant.
        let acc = ModelPackage::untrained(NetworkConfig { accumulate: true, ..NetworkConfig::default() }, 3);
        assert_eq!(input_spec(&acc, on)[b::SPEC_INPUT_ACCUMULATE as usize], 1);
        // A sharper history kernel goes in as its f32 bits.
        let sharp = ModelPackage::untrained(NetworkConfig { history_a: -0.75, ..NetworkConfig::default() }, 3);
        assert_eq!(input_spec(&sharp, on)[b::SPEC_INPUT_HISTORY_A as usize], (-0.75f32).to_bits());
    }

    #[test]
    fn the_head_pack_holds_the_head_s_tensors_where_the_shader_reads_them() {
        let cfg = NetworkConfig { pixel_head: true, ..NetworkConfig::default() };
        let pkg = ModelPackage::untrained(cfg.clone(), 5);
        let pack = head_pack(&pkg);
        let (c, ho) = (cfg.channels[0], cfg.head_token_channels());
        // mlp_regs_coop.comp's HEAD_PACK_*: the 16 x 16 matrix, gamma, beta, the f32 bias, the weight.
        let (gamma, beta, bias, weight) = (512, 512 + 2 * c, 512 + 4 * c, 512 + 4 * c + 4 * ho);
        assert_eq!(pack.len(), weight + 2 * ho * c);
        let h = |at: usize| half::f16::from_le_bytes([pack[at], pack[at + 1]]).to_f32();
        let r = |v: f32| half::f16::from_f32(v).to_f32();
        let t = |name: &str| pkg.tensor(name).data.clone();
        let (pw, pb, hb) = (t("pixel_head.weight"), t("pixel_head.bias"), t("head.bias"));
        // Row k, column n: pixel_head.weight[n % 8][k % 8] within a pixel, zero across the two.
        assert_eq!(h(2 * (3 * 16 + 5)), r(pw[5 * 8 + 3]));
        assert_eq!(h(2 * (11 * 16 + 14)), r(pw[6 * 8 + 3]));
        assert_eq!(h(2 * (3 * 16 + 13)), 0.0);
        assert_eq!(h(gamma + 2 * 7), r(t("head_norm.weight")[7]));
        assert_eq!(h(beta + 2 * (c - 1)), r(t("head_norm.bias")[c - 1]));
        let b = |o: usize| f32::from_le_bytes(pack[bias + 4 * o..bias + 4 * o + 4].try_into().unwrap());
        assert_eq!(b(21), r(hb[21]) + r(pb[21 % 8]));
        assert_eq!(h(weight + 2 * (5 * c + 9)), r(t("head.weight")[5 * c + 9]));
        // Without the per-pixel path: no matrix, the head's own bias.
        let plain = ModelPackage::untrained(NetworkConfig { pixel_head: false, ..NetworkConfig::default() }, 5);
        let pack = head_pack(&plain);
        assert!(pack[..512].iter().all(|&v| v == 0));
        let b0 = f32::from_le_bytes(pack[bias + 4 * 3..bias + 4 * 4].try_into().unwrap());
        assert_eq!(b0, r(plain.tensor("head.bias").data[3]));
    }

    #[test]
    fn each_linear_layer_takes_one_variant_the_scalar_shader_only_where_no_tile_fits() {
        let cfg = NetworkConfig::default();
        let layers = Layers::with_stream16(&cfg, true).all();
        let t = NetTiles::default();
        let p = cfg.pixel_embed as u32;
        let coop = NetPath::CoopMat;
        let scalar = NetPath::Scalar { why: "test".into() };
        // The H100's 48 KiB: every layer on a cooperative-matrix shader, with its rows a workgroup.
        for l in &layers {
            let (v, rows) = linear_variant(&coop, &t, 48 * 1024, l, p);
            assert!(v.shader != "linear" && rows.is_some(), "{l:?} took {v:?}");
        }
        // The scalar path, and a device whose shared memory fits no tile: the scalar shader.
        for l in &layers {
            assert_eq!(linear_variant(&scalar, &t, 48 * 1024, l, p), (l.variant(p), None));
            assert_eq!(linear_variant(&coop, &t, 1024, l, p), (l.variant(p), None));
        }
    }

    #[test]
    fn only_the_layers_recorded_as_their_own_dispatches_get_pipelines() {
        let cfg = NetworkConfig::default();
        let ly = Layers::with_stream16(&cfg, true);
        let names = |v: &[LinearSpec]| -> Vec<(u32, u32, u32)> { v.iter().map(|l| (l.level, l.inp, l.out)).collect() };
        let none = [None, None, None];
        // Nothing taken by other dispatches: every layer, as Layers::all lists them (as a set).
        let mut all = names(&dispatched_linears(&ly, &none, |_| false, |_| None));
        let mut want = names(&ly.all());
        all.sort_unstable();
        want.sort_unstable();
        assert_eq!(all, want);
        // Level 0's attention computes its q, k and v; level 1's MLP is one dispatch with its
        // projection; level 2's one dispatch without it.
        let got = dispatched_linears(&ly, &none, |c| c == 32, |fc1| match fc1.level {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        });
        let has = |l: &LinearSpec| got.iter().any(|g| (g.level, g.inp, g.out, g.mode, g.ln, g.act) == (l.level, l.inp, l.out, l.mode, l.ln, l.act));
        assert!(!has(&ly.qkv[0]) && has(&ly.proj[0]) && has(&ly.fc1[0]) && has(&ly.fc2[0]));
        assert!(has(&ly.qkv[1]) && !has(&ly.proj[1]) && !has(&ly.fc1[1]) && !has(&ly.fc2[1]));
        assert!(has(&ly.qkv[2]) && has(&ly.proj[2]) && !has(&ly.fc1[2]) && !has(&ly.fc2[2]));
        assert!(has(&ly.embed) && has(&ly.head) && ly.merge.iter().chain(&ly.expand).all(has));
        // A fused level records none of its blocks' layers.
        let fused = dispatched_linears(&ly, &[None, Some("block_coop"), None], |_| false, |_| None);
        assert!(fused.iter().all(|l| !(l.level == 1 && [ly.qkv[1], ly.proj[1], ly.fc1[1], ly.fc2[1]].iter().any(|b| (b.inp, b.out, b.mode) == (l.inp, l.out, l.mode)))));
        assert_eq!(fused.len(), ly.all().len() - 4);
    }

    #[test]
    fn with_f16_streams_every_layer_that_touches_a_stream_takes_f16() {
        let cfg = NetworkConfig::default();
        let (f32s, f16s) = (Layers::new(&cfg), Layers::with_stream16(&cfg, true));
        // Reading a stream: the LayerNorms' layers, the merge's gather, the expansion's input.
        let reads = [f16s.head, f16s.qkv[1], f16s.fc1[2], f16s.merge[0], f16s.expand[1]];
        assert!(reads.iter().all(|l| l.in_f16 == 1));
        // Writing one or adding into one: the embedding, the merge, proj, fc2, the expansion.
        let writes = [f16s.embed, f16s.merge[1], f16s.proj[0], f16s.fc2[2], f16s.expand[0]];
        assert!(writes.iter().all(|l| l.out_f16 == 1));
        assert!([f16s.proj[0], f16s.fc2[2], f16s.expand[0]].iter().all(|l| l.residual == 1));
        // f32 streams: the layers as they were (hip-net's plan reads these).
        let f32_reads = [f32s.head, f32s.qkv[1], f32s.fc1[2], f32s.merge[0], f32s.expand[1]];
        assert!(f32_reads.iter().all(|l| l.in_f16 == 0));
        let f32_writes = [f32s.embed, f32s.merge[1], f32s.proj[0], f32s.fc2[2], f32s.expand[0]];
        assert!(f32_writes.iter().all(|l| l.out_f16 == 0));
        // What is f16 either way stays so: the token rows in, the head, qkv and hidden out,
        // proj's and fc2's f16 activations in.
        for l in [&f32s, &f16s] {
            assert_eq!((l.embed.in_f16, l.head.out_f16, l.qkv[0].out_f16, l.fc1[0].out_f16, l.proj[0].in_f16, l.fc2[0].in_f16), (1, 1, 1, 1, 1, 1));
        }
        // Half the bytes of a residual layer's stream: fc2 at level 0 over 1,000 tokens.
        let (a, b) = (crate::plan::linear_cost(&f32s.fc2[0], 1000, 8, false), crate::plan::linear_cost(&f16s.fc2[0], 1000, 8, false));
        assert_eq!(a.bytes - b.bytes, 1000 * 32 * 2 * 2);
    }
}
