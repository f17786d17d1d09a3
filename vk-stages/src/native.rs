//! Native kernels inside the engine's command buffer (VK_NVX_binary_import, NVIDIA): a CUDA
//! module made from PTX text, its functions by name, the weights in the layouts the kernels
//! read, and a list of launches that `Engine::record_network` replays instead of the shaders'
//! plan. The engine knows nothing of the kernels: the caller (hip-net, from the plan its own
//! network runs) supplies the PTX, the weights and the launches with their argument bytes.
//!
//! No other runtime is involved: no CUDA context, no handoff. Static plus dynamic shared memory
//! of every kernel must stay within 48 KiB here (going over loses the device instead of
//! returning an error), so `NativeNetwork::new` refuses a kernel declared above the device's
//! limit, and `set_launches` a launch of a kernel that was not declared.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;

use crate::device::DeviceShared;
use crate::error::{Check, Result, VkError};
use crate::memory::Buffer;
use crate::plan::Cost;

/// One kernel launch of the native network.
#[derive(Clone, Debug)]
pub struct NativeLaunch {
    /// What it computes ("enc1.0", "dec0.0+head"): the per-layer timestamp's label.
    pub label: String,
    /// The kernel's name in the module.
    pub kernel: String,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    /// The kernel's one by-value struct argument, for each window phase (index = phase).
    pub args: Vec<Vec<u8>>,
    /// What it must move and compute at the least (the per-kernel table).
    pub cost: Cost,
}

/// A kernel the module holds, with the static shared memory it declares (bytes).
#[derive(Clone, Copy, Debug)]
pub struct NativeKernel<'a> {
    pub name: &'a str,
    pub shared_bytes: u32,
}

/// A CUDA module and its functions, created through VK_NVX_binary_import; destroyed on drop.
struct NativeModule {
    shared: Arc<DeviceShared>,
    module: vk::CuModuleNVX,
    functions: HashMap<String, vk::CuFunctionNVX>,
}

impl NativeModule {
    fn new(shared: &Arc<DeviceShared>, ptx: &[u8], kernels: &[NativeKernel]) -> Result<NativeModule> {
        let nvx = shared.binary_import.as_ref().ok_or_else(|| VkError::MissingFeature {
            device: shared.caps.name.clone(),
            feature: "VK_NVX_binary_import (native kernels in a command buffer)".into(),
        })?;
        let info = vk::CuModuleCreateInfoNVX { data_size: ptx.len(), p_data: ptx.as_ptr().cast(), ..Default::default() };
        let mut module = vk::CuModuleNVX::null();
        // SAFETY: the create info points at `ptx`, alive for the call.
        unsafe { (nvx.fp().create_cu_module_nvx)(nvx.device(), &info, std::ptr::null(), &mut module) }.result().call("vkCreateCuModuleNVX")?;
        let mut out = NativeModule { shared: shared.clone(), module, functions: HashMap::new() };
        for k in kernels {
            let name = CString::new(k.name).map_err(|_| VkError::Size(format!("kernel name {:?} holds a NUL", k.name)))?;
            let info = vk::CuFunctionCreateInfoNVX { module, p_name: name.as_ptr(), ..Default::default() };
            let mut f = vk::CuFunctionNVX::null();
            // SAFETY: `name` outlives the call; `module` is live.
            unsafe { (nvx.fp().create_cu_function_nvx)(nvx.device(), &info, std::ptr::null(), &mut f) }
                .result()
                .map_err(|r| VkError::Size(format!("vkCreateCuFunctionNVX({}) failed: {r:?} (is the kernel in the module?)", k.name)))?;
            out.functions.insert(k.name.to_string(), f);
        }
        Ok(out)
    }
}

impl Drop for NativeModule {
    fn drop(&mut self) {
        if let Some(nvx) = self.shared.binary_import.as_ref() {
            // SAFETY: the engine that recorded launches of these functions waited for the device
            // to go idle before its fields (this module among them) were dropped.
            unsafe {
                for f in self.functions.values() {
                    (nvx.fp().destroy_cu_function_nvx)(nvx.device(), *f, std::ptr::null());
                }
                (nvx.fp().destroy_cu_module_nvx)(nvx.device(), self.module, std::ptr::null());
            }
        }
    }
}

/// The network as native kernels: module, weights, launches.
pub struct NativeNetwork {
    module: NativeModule,
    /// The weights as the kernels read them (the launches' arguments hold their addresses).
    _weights: Buffer,
    launches: Vec<(vk::CuFunctionNVX, NativeLaunch)>,
}

impl NativeNetwork {
    /// Creates the module from `ptx` (NUL-terminated text) with `kernels`; keeps `weights`, the
    /// device buffer the launches will read. The launches follow with `set_launches`.
    pub fn new(shared: &Arc<DeviceShared>, ptx: &[u8], kernels: &[NativeKernel], weights: Buffer) -> Result<NativeNetwork> {
        let limit = shared.caps.shared_memory.min(48 * 1024);
        if let Some(k) = kernels.iter().find(|k| k.shared_bytes > limit) {
            return Err(VkError::MissingFeature {
                device: shared.caps.name.clone(),
                feature: format!("{} bytes of shared memory for kernel {} (native kernels in a command buffer may use {limit})", k.shared_bytes, k.name),
            });
        }
        let module = NativeModule::new(shared, ptx, kernels)?;
        Ok(NativeNetwork { module, _weights: weights, launches: Vec::new() })
    }

    /// The launches a frame records, each resolved to a function of the module.
    pub fn set_launches(&mut self, launches: Vec<NativeLaunch>) -> Result<()> {
        let mut out = Vec::with_capacity(launches.len());
        for l in launches {
            let &f = self.module.functions.get(&l.kernel).ok_or_else(|| VkError::Size(format!("launch {}: kernel {} was not created", l.label, l.kernel)))?;
            if l.args.is_empty() {
                return Err(VkError::Size(format!("launch {}: no argument bytes", l.label)));
            }
            out.push((f, l));
        }
        self.launches = out;
        Ok(())
    }

    pub fn launches(&self) -> impl Iterator<Item = &NativeLaunch> {
        self.launches.iter().map(|(_, l)| l)
    }

    /// Records every launch for a window phase, each followed by a full barrier (consecutive
    /// native launches overlap otherwise); `after` runs after each barrier (the profile's
    /// timestamps). Allocates nothing: the argument bytes were made at creation.
    pub fn record(&self, cmd: vk::CommandBuffer, phase: usize, mut after: impl FnMut()) {
        let shared = &self.module.shared;
        let nvx = shared.binary_import.as_ref().expect("a NativeNetwork exists only where VK_NVX_binary_import is enabled");
        full_barrier(shared, cmd);
        for (f, l) in &self.launches {
            let args = &l.args[phase % l.args.len()];
            let params = [args.as_ptr() as *const std::ffi::c_void];
            let info = vk::CuLaunchInfoNVX {
                function: *f,
                grid_dim_x: l.grid.0,
                grid_dim_y: l.grid.1,
                grid_dim_z: l.grid.2,
                block_dim_x: l.block.0,
                block_dim_y: l.block.1,
                block_dim_z: l.block.2,
                shared_mem_bytes: 0,
                param_count: 1,
                p_params: params.as_ptr(),
                ..Default::default()
            };
            // SAFETY: the parameters are read at record time; every address in them belongs to
            // buffers the engine or this network owns.
            unsafe { (nvx.fp().cmd_cu_launch_kernel_nvx)(cmd, &info) };
            full_barrier(shared, cmd);
            after();
        }
    }
}

/// ALL_COMMANDS → ALL_COMMANDS, memory reads and writes: native launches belong to no
/// pipeline stage the shaders' barriers name.
fn full_barrier(shared: &DeviceShared, cmd: vk::CommandBuffer) {
    let all = vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE;
    let m = [vk::MemoryBarrier::default().src_access_mask(all).dst_access_mask(all)];
    let st = vk::PipelineStageFlags::ALL_COMMANDS;
    unsafe { shared.device.cmd_pipeline_barrier(cmd, st, st, vk::DependencyFlags::empty(), &m, &[], &[]) };
}
