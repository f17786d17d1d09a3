//! The native network inside the Vulkan engine's command buffer (NVIDIA, VK_NVX_binary_import):
//! the same PTX, weights and plan as [`crate::Network`], launched by the engine between its
//! front and back with no other runtime in the frame and so no handoff. The CUDA driver is asked
//! once, at attach, for the device's compute capability (which PTX to hand over); the frame
//! itself never touches it.
//!
//! Kill switch: `TESSEL_VK_NATIVE=0` keeps the shaders' network.

use std::collections::HashMap;

use tessel_model::config::{NetworkConfig, PHASES};
use tessel_model::package::ModelPackage;
use vk_stages::native::{NativeKernel, NativeLaunch, NativeNetwork};
use vk_stages::{DeviceShared, Engine};

use crate::module::{code_object_for, require_kernels, wgmma_object};
use crate::network::matrix_choice;
use crate::platform::{match_uuid, Prefer, Runtime};

/// The code object and matrix-core path the native network of `cfg` would run with inside a
/// command buffer on `shared`, or why it cannot, in a few words: the kill switch, no
/// VK_NVX_binary_import, no CUDA driver to tell the architecture, no matrix-core kernels for it.
/// Only enumerates devices: no context is created.
///
/// The sm_90a object (warpgroup products, weights in 10-45 KiB of shared memory a workgroup) is
/// taken where [`wgmma_object`] allows it and the engine submits to a compute-only queue family:
/// there it runs the network in 0.59 ms at 4K on the H200 against the sm_90 object's 0.64, while
/// on the graphics family, whose kernels get a small share of the SM's shared memory, it took
/// 1.26 ms against 0.65 (BENCHMARKS.md, fourteenth and thirty-sixth sessions).
/// `TESSEL_HIP_WGMMA=0` keeps the sm_90 object.
pub fn target(shared: &DeviceShared, cfg: &NetworkConfig) -> Result<Target, String> {
    if std::env::var("TESSEL_VK_NATIVE").is_ok_and(|v| v == "0") {
        return Err("off: TESSEL_VK_NATIVE=0".into());
    }
    let caps = &shared.caps;
    if !caps.binary_import {
        return Err(format!("{} has no VK_NVX_binary_import", caps.name));
    }
    let one = |e: &dyn std::fmt::Display| e.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
    let rt = Runtime::open(Prefer::Cuda).map_err(|e| format!("the CUDA driver, which tells the compute capability, is not present: {}", one(&e)))?;
    let devices = rt.devices().map_err(|e| one(&e))?;
    let ordinal = match_uuid(&devices, caps.uuid).map_err(|e| one(&e))?;
    let arch = &devices.iter().find(|d| d.ordinal == ordinal).ok_or("the matched device is not in the driver's list")?.arch;
    let plain = code_object_for(arch).map_err(|e| one(&e))?;
    let (object, wgmma) = match wgmma_object(arch, cfg) {
        Ok(o) if caps.queue.is_some_and(|q| q.compute_only) => (o, None),
        Ok(_) => (plain, Some("sm_90a not taken: the queue family has graphics, where its shared memory halves its occupancy".to_string())),
        Err(why) if arch == "sm_90" => (plain, Some(format!("sm_90a {why}"))),
        Err(_) => (plain, None),
    };
    let matrix = matrix_choice(object.target).map_err(|why| format!("matrix kernels {why} ({arch})"))?;
    if !matrix.fuses_blocks() {
        return Err(format!("{} runs on the HIP stream only; inside the command buffer the fused blocks run or nothing", matrix.describe()));
    }
    Ok(Target { object, matrix, wgmma })
}

/// What [`target`] chose.
pub struct Target {
    pub object: &'static tessel_kernels::CodeObject,
    pub matrix: tessel_kernels::Matrix,
    /// Why a device of compute capability 9.0 runs the plain sm_90 object; None otherwise.
    pub wgmma: Option<String>,
}

/// Builds the native network for `engine`'s buffers and installs it; returns the start-up
/// line's words ("fused mma.sync m16n8k16 kernels, sm_90 PTX, 8 launches, streams f16 at levels 0-2"),
/// or why not.
pub fn attach(engine: &mut Engine, pkg: &ModelPackage) -> Result<String, String> {
    let cfg = &pkg.config;
    let Target { object, matrix, wgmma } = target(&engine.model.shared, cfg)?;
    let (blob, offsets) = crate::weights::device_blob(pkg);
    let names: Vec<&str> = object.kernels.iter().map(|k| k.name).collect();
    let needed = tessel_kernels::kernels_for(object.target);
    require_kernels(&names, &needed).map_err(|e| e.to_string())?;
    let shared = &engine.model.shared;
    let weights = vk_stages::memory::upload(shared, "native weights", &blob).map_err(|e| e.to_string())?;
    let tensors: HashMap<String, u64> = offsets.into_iter().map(|(k, v)| (k, weights.address + v)).collect();
    let bufs = engine.net_buffers();
    let mut plan = crate::plan::build(cfg, &engine.grid, &bufs, &tensors, matrix.into());
    let prefetch = crate::plan::prefetch_words(crate::plan::prefetch_choice(&mut plan, weights.address, blob.len()));
    // Every level's stream in f16: nothing but these kernels touches the engine's residual
    // buffers while they run the network.
    let stream = crate::plan::stream16_words(crate::plan::stream16_choice(&mut plan, &bufs, cfg, &engine.grid));
    let hints = crate::plan::cache_hints_words(crate::plan::cache_hints_choice(&mut plan));
    let order = crate::plan::order_words(crate::plan::order_choice(&mut plan));
    let copies = crate::plan::copies_choice(&mut plan, Some(matrix)).map(|w| format!(", {w}")).unwrap_or_default();
    // Only the kernels the plan launches: the 48 KiB limit applies to what runs.
    let mut kernels: Vec<NativeKernel> = Vec::new();
    for l in &plan {
        if !kernels.iter().any(|k| k.name == l.kernel) {
            let info = object.kernels.iter().find(|k| k.name == l.kernel).ok_or_else(|| format!("kernel {} is not in the {} code object", l.kernel, object.target))?;
            kernels.push(NativeKernel { name: info.name, shared_bytes: info.lds });
        }
    }
    let mut native = NativeNetwork::new(shared, object.bytes, &kernels, weights).map_err(|e| e.to_string())?;
    let pulled = crate::plan::pull_words(crate::plan::pulls(&plan));
    let wgmma = wgmma.map(|w| format!(" ({w})")).unwrap_or_default();
    let vectors = tessel_kernels::wgmma_build_words(matrix).map(|w| format!(", {w}")).unwrap_or_default();
    let describe = format!("fused {} kernels, {} PTX{wgmma}, {} launches, {stream}, {pulled}, {hints}, {order}, {prefetch}{vectors}{copies}", matrix.describe(), object.target, plan.len());
    let launches = plan
        .iter()
        .map(|l| NativeLaunch { label: l.label.clone(), kernel: l.kernel.to_string(), grid: l.grid, block: l.block, args: (0..PHASES).map(|p| l.arg_bytes(p)).collect(), cost: l.cost })
        .collect();
    native.set_launches(launches).map_err(|e| e.to_string())?;
    engine.set_native(native);
    Ok(describe)
}
