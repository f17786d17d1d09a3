//! The native network backend (`--network hip`): the Vulkan engine's front and back with the
//! network of hip-net between them, on the engine's exported token and head buffers, joined by
//! its timeline semaphore imported into the runtime (synchronisation tier 1).

use std::sync::Arc;

use anyhow::{Context as _, Result};
use hip_net::{Context, Prefer, Runtime, SplitNetwork, SyncTier};
use tessel_model::package::ModelPackage;
use tessel_model::sequence::Settings;
use vk_stages::{DeviceShared, Engine, Model, Runner};

use crate::cli::backend::{one_line, Backend, Identity};
use crate::cli::vulkan::{device_line, VulkanBackend};

/// The runtime (TESSEL_HIP_RUNTIME=auto|hip|cuda picks; default auto) or why there is none.
pub fn runtime() -> Result<Runtime> {
    let prefer = std::env::var("TESSEL_HIP_RUNTIME").ok().and_then(|v| v.parse::<Prefer>().ok()).unwrap_or(Prefer::Auto);
    Runtime::open(prefer).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Opens the split-frame backend on the Vulkan device `shared`.
pub fn open_hip(shared: &Arc<DeviceShared>, pkg: &ModelPackage, settings: &Settings, capacity: (usize, usize), output: (usize, usize), why: &str) -> Result<Box<dyn Backend>> {
    let rt = runtime().context("--network hip")?;
    let caps = &shared.caps;
    anyhow::ensure!(
        caps.external_memory_fd && caps.external_semaphore_fd,
        "--network hip: Vulkan device {} cannot export memory and semaphores (VK_KHR_external_memory_fd, VK_KHR_external_semaphore_fd)",
        caps.name
    );
    let ctx = Context::new(&rt, caps.uuid).map_err(|e| anyhow::anyhow!("--network hip: {e}"))?;
    let tier = SyncTier::choose(rt.backend()).map_err(|e| anyhow::anyhow!("--network hip: {e}"))?;
    let model = Model::new(shared, pkg).with_context(|| format!("loading model '{}' on {}", pkg.name, caps.name))?;
    let mut engine = Engine::new(&model, capacity, output, true)?;
    let mut split = SplitNetwork::attach(&mut engine, &ctx, pkg, tier).map_err(|e| anyhow::anyhow!("--network hip: {e}"))?;
    // The network's own GPU time per frame (events on its stream), beside the Vulkan side's.
    split.enable_timing().map_err(|e| anyhow::anyhow!("--network hip: {e}"))?;
    let mut runner = Runner::with_engine(engine, settings.clone())?;
    let graphs = split.net.uses_graphs();
    let kernels = match split.net.matrix() {
        Ok(tessel_kernels::Matrix::MmaSync) if ctx.device().arch == "sm_90" => {
            // A device sm_90a could serve: say why it does not.
            let why = hip_net::wgmma_object("sm_90", &pkg.config).err().unwrap_or_default();
            format!("native kernels, fused blocks on {} (sm_90a {why})", tessel_kernels::Matrix::MmaSync.describe())
        }
        Ok(m) if m.fuses_blocks() => format!("native kernels, fused blocks on {}{}", m.describe(), tessel_kernels::wgmma_build_words(m).map(|w| format!(" ({w})")).unwrap_or_default()),
        Ok(m) => format!("native kernels on {}, nothing fused", m.describe()),
        Err(why) => format!("native portable kernels, matrix cores {why}"),
    };
    let kernels = format!(
        "{kernels}, {}, {}, {}, {}, {}{}",
        hip_net::plan::stream16_words(split.net.stream16()),
        hip_net::plan::pull_words(split.net.pulls()),
        hip_net::plan::cache_hints_words(split.net.cache_hints()),
        hip_net::plan::order_words(split.net.order()),
        hip_net::plan::prefetch_words(split.net.prefetch()),
        split.net.copies().map(|w| format!(", {w}")).unwrap_or_default()
    );
    runner.external = Some(Box::new(split));
    let trained = if pkg.trained { "" } else { " [UNTRAINED: test weights]" };
    let label = format!(
        "network: {why}hip ({kernels}, {}, {} on {} {}) between the Vulkan front and back on {}, sync: {}; model '{}'{trained}",
        if graphs { "8 phase graphs" } else { "direct launches: TESSEL_HIP_GRAPHS=0" },
        rt.describe(),
        ctx.device().name,
        ctx.device().arch,
        device_line(caps, &model.path).replace(", sync: single command buffer", ""),
        tier.name(),
        pkg.name
    );
    Ok(Box::new(VulkanBackend { runner, id: Identity { name: "hip", label, model: Some(pkg.name.clone()) } }))
}

/// Whether the native network would run fused matrix-core kernels on the Vulkan device
/// `shared` (the runtime loads, a device matches its UUID, that device's code object has them and
/// TESSEL_HIP_MATRIX is not 0: `hip_net::matrix_choice`, as the network decides), or why not, in
/// a few words. It only enumerates devices: no context is created for the answer.
pub fn matrix_for(shared: &DeviceShared, cfg: &tessel_model::config::NetworkConfig) -> std::result::Result<tessel_kernels::Matrix, String> {
    // The libraries tried are listed by `tessel info` and `--network hip`; auto's line keeps the
    // verdicts ("HIP runtime not present; CUDA driver not present").
    let rt = runtime().map_err(|e| e.to_string().split("; ").map(|part| part.split(':').next().unwrap_or(part).trim().to_string()).collect::<Vec<_>>().join("; "))?;
    let devices = rt.devices().map_err(|e| one_line(&e.to_string()))?;
    let ordinal = hip_net::match_uuid(&devices, shared.caps.uuid).map_err(|e| one_line(&e.to_string()))?;
    let arch = &devices.iter().find(|d| d.ordinal == ordinal).ok_or("the matched device is not in the runtime's list")?.arch;
    let object = hip_net::code_object_for_model(arch, cfg).map_err(|e| e.to_string())?;
    hip_net::matrix_choice(object.target).map_err(|why| format!("matrix kernels {why} ({arch}); the portable kernels are slower than Vulkan's network"))
}

