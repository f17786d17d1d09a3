//! Code modules (PTX text on the CUDA driver, HSACO code objects on HIP) and their kernels.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use tessel_model::config::NetworkConfig;

use cudarc::driver::sys;

use crate::cuda;
use crate::error::{record_drop_error, HipError, Result};
use crate::platform::{Api, Context};
use crate::stream::Stream;

/// A loaded module; unloaded when the last [`Function`] from it and the module itself are gone.
pub struct Module {
    ctx: Arc<Context>,
    raw: *mut c_void,
    label: String,
}

// SAFETY: modules are context-wide, not thread-bound.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

/// Whether `bytes` is a binary image (ELF: cubin or HSACO; a CUDA fatbin; a clang offload
/// bundle) rather than PTX text.
fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
        || bytes.starts_with(&0xBA55_ED50u32.to_le_bytes())
        || bytes.starts_with(b"__CLANG_OFFLOAD_BUNDLE__")
}

impl Module {
    /// Loads a module: PTX text (NUL-terminated here if it is not already) or a cubin on the
    /// CUDA driver, an HSACO ELF on HIP.
    pub fn load(ctx: &Arc<Context>, bytes: &[u8]) -> Result<Arc<Module>> {
        let mut owned;
        let image: &[u8] = if !is_binary(bytes) && bytes.last() != Some(&0) {
            owned = Vec::with_capacity(bytes.len() + 1);
            owned.extend_from_slice(bytes);
            owned.push(0);
            &owned
        } else {
            bytes
        };
        ctx.bind()?;
        let mut raw: *mut c_void = std::ptr::null_mut();
        match ctx.api() {
            // SAFETY: a whole image (or NUL-terminated text) the runtime reads only during the call.
            Api::Hip(h) => h.check("hipModuleLoadData", unsafe {
                h.hipModuleLoadData()?(&mut raw, image.as_ptr().cast())
            })?,
            Api::Cuda(_) => cuda::check("cuModuleLoadData", unsafe {
                sys::cuModuleLoadData((&mut raw as *mut *mut c_void).cast(), image.as_ptr().cast())
            })?,
        }
        let label = format!(
            "the module for {} ({})",
            ctx.device().arch,
            ctx.device().name
        );
        Ok(Arc::new(Module {
            ctx: ctx.clone(),
            raw,
            label,
        }))
    }

    /// "the module for sm_90 (NVIDIA H200)".
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The kernel `name`, or `KernelMissing` naming it, this module's architecture and the
    /// runtime's answer.
    pub fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        let missing = |why: String| HipError::KernelMissing {
            kernel: name.to_string(),
            module: format!("{} ({why})", self.label),
        };
        let c = CString::new(name).map_err(|_| missing("the name holds a NUL".into()))?;
        self.ctx.bind()?;
        let mut raw: *mut c_void = std::ptr::null_mut();
        let r = match self.ctx.api() {
            // SAFETY: a live module; out-pointer to a local.
            Api::Hip(h) => h.check("hipModuleGetFunction", unsafe {
                h.hipModuleGetFunction()?(&mut raw, self.raw, c.as_ptr())
            }),
            Api::Cuda(_) => cuda::check("cuModuleGetFunction", unsafe {
                sys::cuModuleGetFunction(
                    (&mut raw as *mut *mut c_void).cast(),
                    self.raw.cast(),
                    c.as_ptr(),
                )
            }),
        };
        match r {
            Ok(()) => Ok(Function {
                module: self.clone(),
                raw,
                name: name.to_string(),
            }),
            Err(HipError::Call {
                call,
                name: code_name,
                ..
            }) => Err(missing(format!("{call}: {code_name}"))),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let r = self.ctx.bind().and_then(|_| match self.ctx.api() {
            // SAFETY: unloaded once, after every Function (they hold an Arc to the module).
            Api::Hip(h) => h
                .hipModuleUnload()
                .and_then(|f| h.check("hipModuleUnload", unsafe { f(self.raw) })),
            Api::Cuda(_) => cuda::check("cuModuleUnload", unsafe {
                sys::cuModuleUnload(self.raw.cast())
            }),
        });
        if let Err(e) = r {
            record_drop_error("module", &e);
        }
    }
}

/// A kernel of a loaded module.
pub struct Function {
    module: Arc<Module>,
    raw: *mut c_void,
    name: String,
}

// SAFETY: as for Module.
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

impl Function {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// Registers per thread and local (spill) bytes per thread that the CUDA driver's JIT gave
    /// the kernel; None on HIP, whose code objects carry these figures already
    /// (`tessel_kernels::KernelInfo`, checked statically).
    pub fn jit_resources(&self) -> Result<Option<(i32, i32)>> {
        let ctx = &self.module.ctx;
        ctx.bind()?;
        match ctx.api() {
            Api::Hip(_) => Ok(None),
            Api::Cuda(_) => {
                let (mut regs, mut local) = (0i32, 0i32);
                // SAFETY: a live function handle and two out-parameters.
                unsafe {
                    cuda::check("cuFuncGetAttribute", sys::cuFuncGetAttribute(&mut regs, sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS, self.raw.cast()))?;
                    cuda::check("cuFuncGetAttribute", sys::cuFuncGetAttribute(&mut local, sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, self.raw.cast()))?;
                }
                Ok(Some((regs, local)))
            }
        }
    }

    /// How many workgroups of `threads` threads (no dynamic shared memory) the CUDA driver can
    /// keep on one multiprocessor at once, with the registers and shared memory its JIT gave the
    /// kernel; None on HIP (not asked there).
    pub fn workgroups_per_sm(&self, threads: u32) -> Result<Option<u32>> {
        let ctx = &self.module.ctx;
        ctx.bind()?;
        match ctx.api() {
            Api::Hip(_) => Ok(None),
            Api::Cuda(_) => {
                let mut n = 0i32;
                // SAFETY: a live function handle and an out-parameter.
                let r = unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, self.raw.cast(), threads as i32, 0) };
                cuda::check("cuOccupancyMaxActiveBlocksPerMultiprocessor", r)?;
                Ok(Some(n as u32))
            }
        }
    }

    /// Enqueues the kernel on `stream` with `shared_bytes` of dynamic shared memory.
    /// `params` holds one pointer per kernel argument, each pointing at the argument's value
    /// (the cuLaunchKernel / hipModuleLaunchKernel `kernelParams` form).
    ///
    /// # Safety
    /// `params` must match the kernel's signature in number, order and sizes, and every device
    /// address passed must stay valid until the kernel has finished.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let ctx = &self.module.ctx;
        ctx.bind()?;
        let p = if params.is_empty() {
            std::ptr::null_mut()
        } else {
            params.as_mut_ptr()
        };
        match ctx.api() {
            Api::Hip(h) => h.check(
                "hipModuleLaunchKernel",
                h.hipModuleLaunchKernel()?(
                    self.raw,
                    grid.0,
                    grid.1,
                    grid.2,
                    block.0,
                    block.1,
                    block.2,
                    shared_bytes,
                    stream.raw(),
                    p,
                    std::ptr::null_mut(),
                ),
            ),
            Api::Cuda(_) => cuda::check(
                "cuLaunchKernel",
                sys::cuLaunchKernel(
                    self.raw.cast(),
                    grid.0,
                    grid.1,
                    grid.2,
                    block.0,
                    block.1,
                    block.2,
                    shared_bytes,
                    stream.raw().cast(),
                    p,
                    std::ptr::null_mut(),
                ),
            ),
        }
    }
}

/// Checks that every kernel in `needed` is in `available` (a module's manifest); otherwise
/// `KernelMissing` naming each missing kernel (comma-separated) and what the module has.
pub fn require_kernels(available: &[&str], needed: &[&str]) -> Result<()> {
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|n| !available.contains(n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(HipError::KernelMissing {
        kernel: missing.join(", "),
        module: format!("the module (it has: {})", available.join(", ")),
    })
}

/// The embedded code object (`kernels/`) for a device architecture: the HSACO of that exact
/// "gfx…" target on AMD; on NVIDIA the PTX of the highest "sm_XY" target not above the device's.
/// None is `NoCodeObject` naming the architecture.
pub fn code_object_for(arch: &str) -> Result<&'static tessel_kernels::CodeObject> {
    let none = || HipError::NoCodeObject {
        arch: arch.to_string(),
    };
    if let Some(cc) = arch.strip_prefix("sm_") {
        let cc: u32 = cc.parse().map_err(|_| none())?;
        return tessel_kernels::ptx_for(cc / 10, cc % 10).ok_or_else(none);
    }
    tessel_kernels::code_object(arch).ok_or_else(none)
}

/// The sm_90a object (warpgroup products) for a device of architecture `arch` running `cfg`, or
/// why not: `TESSEL_HIP_WGMMA=0` (the kill switch), a device other than compute capability 9.0,
/// or a fused block whose weights the sm_90a kernels cannot hold (`tessel_kernels::wgmma_fits`).
pub fn wgmma_object(arch: &str, cfg: &NetworkConfig) -> std::result::Result<&'static tessel_kernels::CodeObject, String> {
    if std::env::var("TESSEL_HIP_WGMMA").is_ok_and(|v| v == "0") {
        return Err("off: TESSEL_HIP_WGMMA=0".into());
    }
    let cc: u32 = arch.strip_prefix("sm_").and_then(|v| v.parse().ok()).ok_or_else(|| format!("none for {arch}"))?;
    let object = tessel_kernels::ptx_wgmma_for(cc / 10, cc % 10).ok_or_else(|| format!("none for {arch} (sm_90a runs on compute capability 9.0 only)"))?;
    if let Some(c) = cfg.channels.iter().find(|c| !tessel_kernels::wgmma_fits(**c, cfg.mlp_ratio * **c)) {
        return Err(format!("not for a level of {c} channels with an MLP of {}", cfg.mlp_ratio * c));
    }
    if !tessel_kernels::wgmma_widths_fit(&cfg.channels) {
        return Err(format!("not for levels narrower than the one below ({:?})", cfg.channels));
    }
    Ok(object)
}

/// The code object the network of `cfg` runs on `arch`: the sm_90a object where
/// [`wgmma_object`] allows it, else [`code_object_for`].
pub fn code_object_for_model(arch: &str, cfg: &NetworkConfig) -> Result<&'static tessel_kernels::CodeObject> {
    match wgmma_object(arch, cfg) {
        Ok(object) => Ok(object),
        Err(_) => code_object_for(arch),
    }
}

/// Loads the network's kernels for the context's device: picks the code object
/// ([`code_object_for`]), checks its manifest against every kernel its target should hold
/// ([`tessel_kernels::kernels_for`]: the portable kernels and, where written, the matrix-core
/// ones) with [`require_kernels`], loads it, and looks every kernel up. Also returns the code
/// object's target.
pub fn load_network_kernels(ctx: &Arc<Context>) -> Result<(Arc<Module>, Vec<Function>, &'static str)> {
    load_kernels(ctx, code_object_for(&ctx.device().arch)?)
}

/// [`load_network_kernels`] with the code object for the model's network
/// ([`code_object_for_model`]).
pub fn load_model_kernels(ctx: &Arc<Context>, cfg: &NetworkConfig) -> Result<(Arc<Module>, Vec<Function>, &'static str)> {
    load_kernels(ctx, code_object_for_model(&ctx.device().arch, cfg)?)
}

fn load_kernels(ctx: &Arc<Context>, object: &'static tessel_kernels::CodeObject) -> Result<(Arc<Module>, Vec<Function>, &'static str)> {
    let names: Vec<&str> = object.kernels.iter().map(|k| k.name).collect();
    let needed = tessel_kernels::kernels_for(object.target);
    require_kernels(&names, &needed).map_err(|e| match e {
        HipError::KernelMissing { kernel, module } => HipError::KernelMissing {
            kernel,
            module: module.replacen(
                "the module",
                &format!("the {} code object", object.target),
                1,
            ),
        },
        e => e,
    })?;
    let module = Module::load(ctx, object.bytes)?;
    let functions = needed
        .iter()
        .map(|k| module.function(k))
        .collect::<Result<Vec<_>>>()?;
    Ok((module, functions, object.target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_90a_where_the_model_fits() {
        let cfg = NetworkConfig::default();
        // (Unless the kill switch is set in this test's environment.)
        if std::env::var("TESSEL_HIP_WGMMA").is_err() {
            assert_eq!(code_object_for_model("sm_90", &cfg).unwrap().target, "sm_90a");
        }
        assert_eq!(code_object_for_model("sm_80", &cfg).unwrap().target, "sm_80");
        assert_eq!(code_object_for_model("sm_120", &cfg).unwrap().target, "sm_90", "sm_90a runs on 9.0 only");
        let wide_mlp = NetworkConfig { mlp_ratio: 4, ..cfg.clone() };
        assert_eq!(code_object_for_model("sm_90", &wide_mlp).unwrap().target, "sm_90");
        assert!(wgmma_object("sm_90", &wide_mlp).unwrap_err().contains("MLP of 128"));
        let narrow_mlp = NetworkConfig { mlp_ratio: 1, ..cfg.clone() };
        assert!(wgmma_object("sm_90", &narrow_mlp).unwrap_err().contains("MLP of 32"), "every width streams for an MLP of 2C");
        assert_eq!(code_object_for_model("gfx1100", &cfg).unwrap().target, "gfx1100");
    }

    #[test]
    fn code_objects_are_picked_by_architecture() {
        assert_eq!(code_object_for("gfx1100").unwrap().target, "gfx1100");
        assert_eq!(code_object_for("gfx942").unwrap().target, "gfx942");
        assert_eq!(code_object_for("sm_90").unwrap().target, "sm_90");
        // Ada (8.9) and Blackwell (12.0) take the highest PTX not above them.
        assert_eq!(code_object_for("sm_89").unwrap().target, "sm_80");
        assert_eq!(code_object_for("sm_120").unwrap().target, "sm_90");
        for arch in ["gfx9999", "sm_75", "sm_x", ""] {
            let err = code_object_for(arch).unwrap_err();
            assert_eq!(
                err,
                HipError::NoCodeObject {
                    arch: arch.to_string()
                }
            );
            assert!(err.to_string().ends_with(&format!("architecture {arch}")));
        }
    }

    #[test]
    fn binary_images_are_told_from_ptx_text() {
        assert!(is_binary(b"\x7fELF\x02\x01"));
        assert!(is_binary(&0xBA55_ED50u32.to_le_bytes()));
        assert!(!is_binary(b"//\n.version 7.8\n.target sm_90\n"));
        assert!(!is_binary(code_object_for("sm_90").unwrap().bytes));
        assert!(is_binary(code_object_for("gfx1100").unwrap().bytes));
    }
}
