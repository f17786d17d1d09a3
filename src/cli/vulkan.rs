//! The Vulkan backend: one `vk_stages::Runner` behind the `Backend` interface, and the device,
//! opened once per process and shared by every backend and `tessel info`.

use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use tessel_model::frame::FrameData;
use tessel_model::package::ModelPackage;
use tessel_model::sequence::Settings;
use vk_stages::model::NetPath;
use vk_stages::runner::ReadBack;
use tessel_model::taau::TaauParams;
use vk_stages::engine::Controls;
use vk_stages::{Caps, DeviceShared, Model, Runner};

use crate::cli::backend::{Backend, Extras, FrameResult, Identity};

static DEVICE: OnceLock<Result<Arc<DeviceShared>, String>> = OnceLock::new();

/// The best Vulkan device, opened on first use; the error says why there is none.
pub fn vulkan_device() -> Result<Arc<DeviceShared>, String> {
    DEVICE.get_or_init(|| DeviceShared::open().map_err(|e| e.to_string())).clone()
}

/// What the start-up line says about the device a model runs on: name, f16, subgroup, the
/// network path (cooperative matrix or scalar, and why), the sync tier.
pub fn device_line(c: &Caps, path: &NetPath) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let coop = match path {
        NetPath::CoopMat if c.coopmat_forced => "yes (f16 16x16x16, forced by TESSEL_VK_COOPMAT_ANY_SIZE=1: outside the Vulkan spec)".to_string(),
        NetPath::CoopMat => "yes (f16 16x16x16)".to_string(),
        NetPath::Scalar { why } => format!("not used (scalar path: {why})"),
    };
    format!(
        "{} ({}): f16 storage {}, f16 math {}, subgroup {}, cooperative matrix: {coop}, sync: single command buffer, {}",
        c.name,
        c.driver,
        yes(c.storage_16bit),
        yes(c.f16_arithmetic),
        c.subgroup_size,
        c.queue.map(|q| q.describe()).unwrap_or_default()
    )
}

pub struct VulkanBackend {
    pub(crate) runner: Runner,
    /// Named "vulkan", "none" (the classical TAAU, no network), or "hip" when the network runs
    /// natively between the Vulkan front and back.
    pub(crate) id: Identity,
}

/// Loads `pkg` on the device and makes a runner for frames up to `capacity` at `output`. Where
/// the device launches native kernels from a command buffer (VK_NVX_binary_import), the network
/// runs as the native network's fused kernels inside the frame's command buffer
/// (`TESSEL_VK_NATIVE=0`: the shaders); the label says which and why.
pub fn open_vulkan(
    shared: &Arc<DeviceShared>,
    pkg: &ModelPackage,
    settings: &Settings,
    capacity: (usize, usize),
    output: (usize, usize),
    why: &str,
) -> Result<VulkanBackend> {
    let model = Model::new(shared, pkg).with_context(|| format!("loading model '{}' on Vulkan device {}", pkg.name, shared.caps.name))?;
    let mut runner = Runner::new(&model, settings.clone(), capacity, output)
        .with_context(|| format!("Vulkan engine for {}x{} -> {}x{}", capacity.0, capacity.1, output.0, output.1))?;
    let native = hip_net::in_vulkan::attach(&mut runner.engine, pkg);
    let trained = if pkg.trained { "" } else { " [UNTRAINED: test weights]" };
    let network = match &native {
        Ok(d) => format!("network: native kernels in the command buffer ({d}; VK_NVX_binary_import; TESSEL_VK_NATIVE=0 for the shaders)"),
        Err(no) => {
            let fused: Vec<String> = model.fused.iter().enumerate().filter_map(|(l, f)| f.map(|s| format!("{l} ({s})"))).collect();
            let fused = if fused.is_empty() { String::new() } else { format!(", fused blocks on levels {} (TESSEL_VK_FUSED=1)", fused.join(", ")) };
            let coop = match &model.path {
                NetPath::CoopMat => "cooperative matrix f16 16x16x16".to_string(),
                NetPath::Scalar { why } => format!("scalar path: {why}"),
            };
            let tiles = model.tiles.describe(model.path == NetPath::CoopMat, model.attention_coop, model.regs_why.as_deref());
            format!("network: shaders ({coop}{fused}; {tiles}; native kernels: {no})")
        }
    };
    let front = model.pixel_paths.describe();
    let label = format!("network: {why}vulkan on {}, {front}, {network}; model '{}'{trained}", device_line(&shared.caps, &model.path), pkg.name);
    Ok(VulkanBackend { runner, id: Identity { name: "vulkan", label, model: Some(pkg.name.clone()) } })
}

/// The classical TAAU (`--network none`) on the Vulkan device: the engine's front without the
/// input stage, then `shaders/taau.comp`. The engine's pipelines come from `pkg` (or, without
/// one, from an untrained package of the default config: no network runs either way).
pub fn open_vulkan_taau(
    shared: &Arc<DeviceShared>,
    pkg: Option<&ModelPackage>,
    params: TaauParams,
    settings: &Settings,
    capacity: (usize, usize),
    output: (usize, usize),
    what: &str,
) -> Result<VulkanBackend> {
    let untrained;
    let pkg = match pkg {
        Some(p) => p,
        None => {
            untrained = ModelPackage::untrained(Default::default(), 0);
            &untrained
        }
    };
    let model = Model::new(shared, pkg).with_context(|| format!("the classical TAAU's pipelines on Vulkan device {}", shared.caps.name))?;
    let mut runner = Runner::new(&model, settings.clone(), capacity, output)
        .with_context(|| format!("Vulkan engine for {}x{} -> {}x{}", capacity.0, capacity.1, output.0, output.1))?;
    runner.controls = Controls::Classic(params);
    let c = &shared.caps;
    let label = format!("network: none ({what}; on Vulkan: {} ({}), shaders/taau.comp; TESSEL_TAAU_GPU=0 for the CPU)", c.name, c.driver);
    Ok(VulkanBackend { runner, id: Identity { name: "none", label, model: None } })
}

impl Backend for VulkanBackend {
    fn identity(&self) -> &Identity {
        &self.id
    }
    fn on_gpu(&self) -> bool {
        true
    }
    fn set_extras(&mut self, e: Extras) {
        self.runner.read = ReadBack { tokens: e.tokens_head, head: e.tokens_head, history: e.history };
        self.runner.read_output = !e.no_output;
    }
    fn evaluate(&mut self, f: &FrameData) -> Result<FrameResult> {
        let (eval, gpu) = self.runner.evaluate(f)?;
        let history = self.runner.read.history.then(|| self.runner.history_rgb().to_vec());
        Ok(FrameResult { eval, gpu: Some(gpu), history })
    }
    fn rerun(&mut self) -> Result<Option<vk_stages::runner::GpuTimes>> {
        Ok(Some(self.runner.rerun()?.1))
    }
}
