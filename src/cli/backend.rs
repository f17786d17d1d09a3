//! The one interface the subcommands drive every network backend through (replay, check, bench,
//! soak, demo never branch per backend), and `open_backend`, which resolves `--network`.

use std::sync::Arc;

use anyhow::Result;
use tessel_model::frame::FrameData;
use tessel_model::head::FixedHead;
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{Evaluation, HeadSource, Upscaler};
use tessel_model::sequence::Settings;
use tessel_model::taau::TaauParams;
use vk_stages::runner::GpuTimes;

use crate::cli::common::{model_candidates, NetworkChoice};
use crate::cli::hip::open_hip;
use crate::cli::vulkan::{open_vulkan, open_vulkan_taau, vulkan_device};

/// Which buffers a backend hands back besides the output.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras {
    /// Token and head buffers (Evaluation.tokens / .head).
    pub tokens_head: bool,
    /// History colour after the frame (tonemapped RGB).
    pub history: bool,
    /// Leave the output on the device (a benchmark): Evaluation.output comes back empty from a
    /// GPU backend.
    pub no_output: bool,
}

/// One evaluated frame.
pub struct FrameResult {
    /// Output, times (GPU timestamps on a GPU backend, wall time on the CPU), exposure, sanitised
    /// count, tokens/head when asked, phase.
    pub eval: Evaluation,
    /// The GPU's timestamps (whole frame, stages, layers when TESSEL_PROFILE=1); None on the CPU.
    pub gpu: Option<GpuTimes>,
    /// History colour (tonemapped RGB, 3 values per output pixel) when `Extras::history`.
    pub history: Option<Vec<f32>>,
}

/// What a backend says of itself.
pub struct Identity {
    /// Short name: "cpu", "fixed", "none", "vulkan", "hip".
    pub name: &'static str,
    /// The start-up line: what runs, where, and (for auto) why.
    pub label: String,
    /// The model package's name (None for the fixed head and the classical TAAU).
    pub model: Option<String>,
}

pub trait Backend {
    fn identity(&self) -> &Identity;
    fn name(&self) -> &'static str {
        self.identity().name
    }
    fn label(&self) -> &str {
        &self.identity().label
    }
    fn model(&self) -> Option<&str> {
        self.identity().model.as_deref()
    }
    /// True when `evaluate` reports GPU timestamps.
    fn on_gpu(&self) -> bool;
    fn set_extras(&mut self, extras: Extras);
    /// Runs one frame with this backend's own temporal feedback.
    fn evaluate(&mut self, f: &FrameData) -> Result<FrameResult>;
    /// A GPU backend: the last evaluated frame again, its inputs already on the device (no host
    /// upload between frames), GPU timestamps back. None where there is no such thing (the CPU).
    fn rerun(&mut self) -> Result<Option<GpuTimes>> {
        Ok(None)
    }
}

/// The CPU reference (network or fixed head), one `Upscaler`.
pub struct CpuBackend {
    up: Upscaler,
    id: Identity,
    extras: Extras,
}

impl CpuBackend {
    fn boxed(up: Upscaler, name: &'static str, label: String, model: Option<String>) -> Box<dyn Backend> {
        Box::new(CpuBackend { up, id: Identity { name, label, model }, extras: Extras::default() })
    }
}

impl Backend for CpuBackend {
    fn identity(&self) -> &Identity {
        &self.id
    }
    fn on_gpu(&self) -> bool {
        false
    }
    fn set_extras(&mut self, extras: Extras) {
        self.extras = extras;
    }
    fn evaluate(&mut self, f: &FrameData) -> Result<FrameResult> {
        check_planes(f)?;
        let eval = self.up.evaluate(f);
        let history = self.extras.history.then(|| self.up.history.color.data.clone());
        Ok(FrameResult { eval, gpu: None, history })
    }
}

/// The CPU reference would index out of bounds on planes that do not match the render size;
/// refuse them with a clear error instead (the Vulkan runner checks the same).
fn check_planes(f: &FrameData) -> Result<()> {
    f.check_planes().map_err(anyhow::Error::msg)
}

/// The fixed-head TAAU baseline: the model's tuned values, or the defaults without a model.
pub fn open_fixed(model: Option<&ModelPackage>, settings: &Settings, output: (usize, usize)) -> Box<dyn Backend> {
    let (fixed, from) = match model {
        Some(p) => (p.baseline, format!("baseline values of model '{}'", p.name)),
        None => (FixedHead::default(), "default baseline values".to_string()),
    };
    let label = format!("network: fixed (the contract's reconstruction, fixed head: blend {:.3}, sigma {:.3}, clamp {:.3}; {from})", fixed.blend, fixed.sigma, fixed.clamp);
    let up = Upscaler::new(HeadSource::Fixed(fixed), settings.clone(), output);
    CpuBackend::boxed(up, "fixed", label, None)
}

/// The classical TAAU (`--network none`, tessel_model::taau) with its tuned parameters: on the
/// Vulkan device where one opens (shaders/taau.comp; `TESSEL_TAAU_GPU=0` keeps it on the CPU),
/// else on the CPU, saying why. `model` only lends the Vulkan engine its pipelines.
pub fn open_none(model: Option<&ModelPackage>, settings: &Settings, capacity: (usize, usize), output: (usize, usize)) -> Box<dyn Backend> {
    let p = TaauParams::default();
    let what = format!(
        "classical TAAU: gather sigma {:.2}, clip gamma {:.2}, count cap {:.1}, disocclusion {:.2}, reactive {:.2}, thin-feature locks to count {:.1}",
        p.sigma, p.gamma, p.cap, p.depth_tolerance, p.reactive, p.lock_cap
    );
    let why = if std::env::var("TESSEL_TAAU_GPU").is_ok_and(|v| v == "0") {
        "TESSEL_TAAU_GPU=0".to_string()
    } else {
        match vulkan_device() {
            Ok(s) => match open_vulkan_taau(&s, model, p, settings, capacity, output, &what) {
                Ok(b) => return Box::new(b),
                Err(e) => format!("Vulkan failed: {}", one_line(&format!("{e:#}"))),
            },
            Err(e) => format!("no Vulkan: {}", one_line(&e)),
        }
    };
    open_none_cpu(p, settings, output, &format!("{what}; on the CPU: {why}"))
}

/// The classical TAAU with `p` on the CPU (the reference of the Vulkan one).
pub fn open_none_cpu(p: TaauParams, settings: &Settings, output: (usize, usize), what: &str) -> Box<dyn Backend> {
    let up = Upscaler::new(HeadSource::Classic(p), settings.clone(), output);
    CpuBackend::boxed(up, "none", format!("network: none ({what})"), None)
}

/// The f32 CPU reference network. `why` prefixes the label (auto's reason).
pub fn open_cpu(pkg: &ModelPackage, settings: &Settings, output: (usize, usize), why: &str) -> Box<dyn Backend> {
    let trained = if pkg.trained { "" } else { " [UNTRAINED: test weights]" };
    let label = format!("network: {why}cpu reference f32, {} threads; model '{}'{trained}", rayon::current_num_threads(), pkg.name);
    let up = Upscaler::new(HeadSource::Network(Arc::new(Network::from_package(pkg))), settings.clone(), output);
    CpuBackend::boxed(up, "cpu", label, Some(pkg.name.clone()))
}

fn no_model() -> anyhow::Error {
    let looked: Vec<String> = model_candidates().iter().map(|p| p.display().to_string()).collect();
    anyhow::anyhow!(
        "no model package found (looked in: {}). Pass --model DIR, or make an untrained test package with `tessel init-model --out DIR`",
        looked.join(", ")
    )
}


/// Opens the backend `choice` for frames up to `capacity` (render size) at `output`. `model` is
/// the package (None: the fixed-head baseline falls back to default values; the networks need
/// one). `auto` takes Vulkan when a device opens and the model loads on it, else the CPU, and
/// its label says which and why.
pub fn open_backend(
    choice: NetworkChoice,
    model: Option<&ModelPackage>,
    settings: &Settings,
    capacity: (usize, usize),
    output: (usize, usize),
) -> Result<Box<dyn Backend>> {
    match choice {
        NetworkChoice::None => Ok(open_none(model, settings, capacity, output)),
        NetworkChoice::Fixed => Ok(open_fixed(model, settings, output)),
        NetworkChoice::Hip => {
            let pkg = model.ok_or_else(no_model)?;
            let shared = vulkan_device().map_err(|e| anyhow::anyhow!("--network hip needs the Vulkan front and back: {e}"))?;
            open_hip(&shared, pkg, settings, capacity, output, "")
        }
        NetworkChoice::Cpu => Ok(open_cpu(model.ok_or_else(no_model)?, settings, output, "")),
        NetworkChoice::Vulkan => {
            let pkg = model.ok_or_else(no_model)?;
            let shared = vulkan_device().map_err(|e| anyhow::anyhow!("--network vulkan: {e}"))?;
            Ok(Box::new(open_vulkan(&shared, pkg, settings, capacity, output, "")?))
        }
        NetworkChoice::Auto => {
            let pkg = model.ok_or_else(no_model)?;
            // The native network with fused matrix-core kernels is the faster network (BENCHMARKS.md,
            // H200 at 3840x2160: 0.77 ms against the Vulkan shaders' 5.90 ms). Inside the Vulkan
            // command buffer (VK_NVX_binary_import) it needs no handoff, so auto takes that first;
            // then hip between the Vulkan front and back where the fused kernels run; else the
            // Vulkan shaders. It says why either way; a hip that fails to open falls back to
            // Vulkan, saying why.
            let vk = vulkan_device().map_err(anyhow::Error::msg).and_then(|s| {
                let why = match hip_net::in_vulkan::target(&s, &pkg.config) {
                    Ok(hip_net::in_vulkan::Target { matrix: m, .. }) => return Ok(Box::new(open_vulkan(&s, pkg, settings, capacity, output, &format!("auto -> (native {} kernels in the Vulkan command buffer: the faster network, no handoff) ", m.describe()))?) as Box<dyn Backend>),
                    Err(no) => no,
                };
                let why = match crate::cli::hip::matrix_for(&s, &pkg.config) {
                    // Auto takes hip for fused blocks only: the AMD matrix-core kernels (TESSEL_HIP_WMMA=1)
                    // fuse nothing and have not been timed against Vulkan's network.
                    Ok(m) if !m.fuses_blocks() => format!("auto -> (native kernels in Vulkan: {why}; hip: {} only, no fused blocks: --network hip runs it) ", m.describe()),
                    Ok(m) => match open_hip(&s, pkg, settings, capacity, output, &format!("auto -> (native kernels in Vulkan: {why}; hip: fused {} kernels, the faster network) ", m.describe())) {
                        Ok(b) => return Ok(b),
                        Err(e) => format!("auto -> (native kernels in Vulkan: {why}; hip failed to open: {}) ", one_line(&format!("{e:#}"))),
                    },
                    Err(no) => format!("auto -> (native kernels in Vulkan: {why}; hip: {no}) "),
                };
                Ok(Box::new(open_vulkan(&s, pkg, settings, capacity, output, &why)?) as Box<dyn Backend>)
            });
            match vk {
                Ok(b) => Ok(b),
                Err(e) => Ok(open_cpu(pkg, settings, output, &format!("auto -> cpu (no Vulkan: {}); ", one_line(&format!("{e:#}"))))),
            }
        }
    }
}

pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
