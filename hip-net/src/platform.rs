//! The runtime (HIP or the CUDA driver), its devices, and a context on the device that matches the
//! Vulkan device's UUID.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Arc;

use cudarc::driver::sys;

use crate::cuda::{self, CudaDriver};
use crate::error::{record_drop_error, uuid_hex, HipError, Result};
use crate::hip_sys::{self, device_prop, HipLib};

/// Which runtime to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    /// HIP when it loads and has a device, else the CUDA driver when it has one, else whichever
    /// loaded.
    Auto,
    Hip,
    Cuda,
}

impl std::str::FromStr for Prefer {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Prefer::Auto),
            "hip" => Ok(Prefer::Hip),
            "cuda" => Ok(Prefer::Cuda),
            _ => Err(format!("unknown runtime {s:?} (auto, hip or cuda)")),
        }
    }
}

/// The runtime under a [`Runtime`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// AMD's HIP runtime (libamdhip64), code objects are HSACO ELF.
    Hip,
    /// NVIDIA's CUDA driver (libcuda), code objects are PTX text (or cubin).
    Cuda,
}

/// The entry points of the opened runtime (both live for the whole process).
#[derive(Clone, Copy)]
pub(crate) enum Api {
    Hip(&'static HipLib),
    Cuda(&'static CudaDriver),
}

/// An opened GPU runtime. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) api: Api,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// One device of the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The runtime's ordinal (HIP device id / CUDA ordinal).
    pub ordinal: usize,
    pub name: String,
    /// Equal to Vulkan's `deviceUUID` for the same GPU (checked on NVIDIA).
    pub uuid: [u8; 16],
    /// "gfx1100"-style on AMD (feature suffixes such as ":sramecc+:xnack-" removed), "sm_90"-style
    /// on NVIDIA.
    pub arch: String,
}

type OpenFailure = (Vec<String>, String);

fn hip_runtime() -> std::result::Result<Runtime, OpenFailure> {
    static INIT: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    let h = hip_sys::lib().map_err(|f| (f.tried.clone(), f.why.clone()))?;
    let init = INIT.get_or_init(|| {
        // SAFETY: hipInit takes flags 0; the library has the symbol (REQUIRED).
        let r = h
            .hipInit()
            .and_then(|f| h.check("hipInit", unsafe { f(0) }));
        r.map_err(|e| format!("HIP runtime {} unusable: {e}", h.name))
    });
    match init {
        Ok(()) => Ok(Runtime { api: Api::Hip(h) }),
        Err(why) => Err((
            hip_sys::CANDIDATES.iter().map(|s| s.to_string()).collect(),
            why.clone(),
        )),
    }
}

fn cuda_runtime() -> std::result::Result<Runtime, OpenFailure> {
    cuda::open()
        .map(|c| Runtime { api: Api::Cuda(c) })
        .map_err(|f| (f.tried.clone(), f.why.clone()))
}

fn missing(failures: Vec<OpenFailure>) -> HipError {
    let mut tried = Vec::new();
    let mut why = Vec::new();
    for (t, w) in failures {
        tried.extend(t);
        why.push(w);
    }
    HipError::RuntimeMissing {
        tried,
        why: why.join("; "),
    }
}

impl Runtime {
    /// Opens a runtime. `Prefer::Hip` / `Prefer::Cuda` open only that one; `Prefer::Auto` takes
    /// HIP when it loads and has a device, else the CUDA driver when it has one, else whichever
    /// loaded. Nothing loading is `RuntimeMissing`, naming every library tried and why each
    /// failed.
    pub fn open(prefer: Prefer) -> Result<Runtime> {
        match prefer {
            Prefer::Hip => hip_runtime().map_err(|f| missing(vec![f])),
            Prefer::Cuda => cuda_runtime().map_err(|f| missing(vec![f])),
            Prefer::Auto => {
                let hip = hip_runtime();
                if let Ok(rt) = &hip {
                    if rt.device_count().unwrap_or(0) > 0 {
                        return Ok(rt.clone());
                    }
                }
                let cuda = cuda_runtime();
                if let Ok(rt) = &cuda {
                    if rt.device_count().unwrap_or(0) > 0 {
                        return Ok(rt.clone());
                    }
                }
                match (hip, cuda) {
                    (Ok(rt), _) | (_, Ok(rt)) => Ok(rt),
                    (Err(h), Err(c)) => Err(missing(vec![h, c])),
                }
            }
        }
    }

    pub fn backend(&self) -> Backend {
        match self.api {
            Api::Hip(_) => Backend::Hip,
            Api::Cuda(_) => Backend::Cuda,
        }
    }

    /// The library file that loaded ("libamdhip64.so.6", "libcuda.so.1").
    pub fn library(&self) -> &str {
        match self.api {
            Api::Hip(h) => &h.name,
            Api::Cuda(c) => &c.library,
        }
    }

    /// The runtime's version number (hipRuntimeGetVersion / cuDriverGetVersion), 0 if unknown.
    pub fn version(&self) -> i32 {
        match self.api {
            Api::Hip(h) => {
                let mut v: c_int = 0;
                // SAFETY: writes one int.
                let ok = h
                    .hipRuntimeGetVersion()
                    .map(|f| unsafe { f(&mut v) } == 0)
                    .unwrap_or(false);
                if ok {
                    v
                } else {
                    0
                }
            }
            Api::Cuda(c) => c.version,
        }
    }

    /// One line: "HIP runtime libamdhip64.so.6 (version 60342134)" or
    /// "CUDA driver libcuda.so.1 (version 13.0)".
    pub fn describe(&self) -> String {
        let v = self.version();
        match self.api {
            Api::Hip(h) => format!("HIP runtime {} (version {v})", h.name),
            Api::Cuda(c) => {
                format!(
                    "CUDA driver {} (version {}.{})",
                    c.library,
                    v / 1000,
                    (v % 1000) / 10
                )
            }
        }
    }

    /// How many devices the runtime sees.
    pub fn device_count(&self) -> Result<usize> {
        let mut n: c_int = 0;
        match self.api {
            // SAFETY: writes one int.
            Api::Hip(h) => h.check("hipGetDeviceCount", unsafe {
                h.hipGetDeviceCount()?(&mut n)
            })?,
            // SAFETY: as above; the driver is open.
            Api::Cuda(_) => {
                cuda::check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut n) })?
            }
        }
        Ok(n.max(0) as usize)
    }

    /// Every device: ordinal, name, UUID, architecture.
    pub fn devices(&self) -> Result<Vec<DeviceInfo>> {
        (0..self.device_count()?).map(|i| self.device(i)).collect()
    }

    fn device(&self, ordinal: usize) -> Result<DeviceInfo> {
        let mut name = [0 as c_char; 256];
        match self.api {
            Api::Hip(h) => {
                let mut dev: hip_sys::hipDevice_t = 0;
                // SAFETY: out-pointers to locals of the declared types and sizes.
                unsafe {
                    h.check(
                        "hipDeviceGet",
                        h.hipDeviceGet()?(&mut dev, ordinal as c_int),
                    )?;
                    h.check(
                        "hipDeviceGetName",
                        h.hipDeviceGetName()?(name.as_mut_ptr(), 256, dev),
                    )?;
                }
                let props = hip_props(h, ordinal as c_int);
                let uuid = match h.hipDeviceGetUuid() {
                    Ok(f) => {
                        let mut u = hip_sys::hipUUID::default();
                        // SAFETY: as above.
                        h.check("hipDeviceGetUuid", unsafe { f(&mut u, dev) })?;
                        u.bytes
                    }
                    Err(e) => {
                        let p = props.as_ref().map_err(|_| e)?;
                        p[device_prop::UUID..device_prop::UUID + 16]
                            .try_into()
                            .unwrap()
                    }
                };
                let arch = props
                    .ok()
                    .and_then(|p| gcn_arch_from_props(&p))
                    .unwrap_or_default();
                Ok(DeviceInfo {
                    ordinal,
                    name: c_name(&name),
                    uuid,
                    arch,
                })
            }
            Api::Cuda(_) => {
                let mut dev: sys::CUdevice = 0;
                let mut uuid = sys::CUuuid { bytes: [0; 16] };
                let (mut major, mut minor) = (0, 0);
                use sys::CUdevice_attribute as A;
                // SAFETY: out-pointers to locals of the declared types and sizes.
                unsafe {
                    cuda::check("cuDeviceGet", sys::cuDeviceGet(&mut dev, ordinal as c_int))?;
                    cuda::check(
                        "cuDeviceGetName",
                        sys::cuDeviceGetName(name.as_mut_ptr(), 256, dev),
                    )?;
                    cuda::check(
                        "cuDeviceGetUuid_v2",
                        sys::cuDeviceGetUuid_v2(&mut uuid, dev),
                    )?;
                    let attr = |v: &mut c_int, a| sys::cuDeviceGetAttribute(v, a, dev);
                    let r = attr(&mut major, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
                    cuda::check("cuDeviceGetAttribute", r)?;
                    let r = attr(&mut minor, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
                    cuda::check("cuDeviceGetAttribute", r)?;
                }
                Ok(DeviceInfo {
                    ordinal,
                    name: c_name(&name),
                    uuid: uuid.bytes.map(|b| b as u8),
                    arch: format!("sm_{major}{minor}"),
                })
            }
        }
    }
}

fn c_name(buf: &[c_char]) -> String {
    // SAFETY: c_char and u8 have the same size; the slice is in bounds.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), buf.len()) };
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// hipGetDeviceProperties(R0600) into a zeroed block larger than the struct.
fn hip_props(h: &HipLib, ordinal: c_int) -> Result<Vec<u8>> {
    let mut block = vec![0u8; device_prop::BLOCK];
    let (call, f) = match h.hipGetDevicePropertiesR0600() {
        Ok(f) => ("hipGetDevicePropertiesR0600", f),
        Err(_) => ("hipGetDeviceProperties", h.hipGetDeviceProperties()?),
    };
    // SAFETY: the block is larger than any hipDeviceProp_t layout.
    h.check(call, unsafe {
        f(block.as_mut_ptr().cast::<c_void>(), ordinal)
    })?;
    Ok(block)
}

/// The architecture from a hipDeviceProp_t block: `gcnArchName` at its R0600 offset, or (an older
/// layout) the first "gfx..." string in the block; feature suffixes removed.
pub fn gcn_arch_from_props(block: &[u8]) -> Option<String> {
    let at = |off: usize| -> Option<String> {
        let rest = block.get(off..)?;
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        std::str::from_utf8(&rest[..end])
            .ok()
            .map(|s| s.to_string())
    };
    if let Some(s) = at(device_prop::GCN_ARCH_NAME).filter(|s| s.starts_with("gfx")) {
        return Some(strip_arch_features(&s).to_string());
    }
    let pos = block.windows(3).position(|w| w == b"gfx")?;
    at(pos).map(|s| strip_arch_features(&s).to_string())
}

/// "gfx90a:sramecc+:xnack-" → "gfx90a".
pub fn strip_arch_features(arch: &str) -> &str {
    arch.split(':').next().unwrap_or(arch)
}

/// The ordinal of the device whose UUID is `uuid`, or `NoMatchingDevice` listing every device's
/// name and UUID.
pub fn match_uuid(devices: &[DeviceInfo], uuid: [u8; 16]) -> Result<usize> {
    devices
        .iter()
        .find(|d| d.uuid == uuid)
        .map(|d| d.ordinal)
        .ok_or_else(|| HipError::NoMatchingDevice {
            want: uuid_hex(&uuid),
            found: devices
                .iter()
                .map(|d| (d.name.clone(), uuid_hex(&d.uuid)))
                .collect(),
        })
}

enum RawCtx {
    Hip {
        ordinal: c_int,
    },
    Cuda {
        dev: sys::CUdevice,
        ctx: sys::CUcontext,
    },
}

/// A device of the runtime made ready for work: on CUDA its primary context (retained, released
/// on drop); on HIP the device id. Every handle holds an `Arc` to it.
pub struct Context {
    runtime: Runtime,
    device: DeviceInfo,
    raw: RawCtx,
}

// SAFETY: CUDA contexts and HIP devices may be used from any thread once made current there
// (`bind`, which every operation calls first).
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    /// The context on the device whose UUID equals `uuid` (the Vulkan device's `deviceUUID`).
    pub fn new(runtime: &Runtime, uuid: [u8; 16]) -> Result<Arc<Context>> {
        let devices = runtime.devices()?;
        let ordinal = match_uuid(&devices, uuid)?;
        let device = devices
            .into_iter()
            .find(|d| d.ordinal == ordinal)
            .expect("matched");
        Self::on(runtime, device)
    }

    /// The context on the device with this ordinal (tests, tools).
    pub fn with_ordinal(runtime: &Runtime, ordinal: usize) -> Result<Arc<Context>> {
        Self::on(runtime, runtime.device(ordinal)?)
    }

    fn on(runtime: &Runtime, device: DeviceInfo) -> Result<Arc<Context>> {
        let raw = match runtime.api {
            Api::Hip(_) => RawCtx::Hip {
                ordinal: device.ordinal as c_int,
            },
            Api::Cuda(_) => {
                let mut dev: sys::CUdevice = 0;
                let mut ctx: sys::CUcontext = std::ptr::null_mut();
                // SAFETY: out-pointers to locals.
                unsafe {
                    cuda::check(
                        "cuDeviceGet",
                        sys::cuDeviceGet(&mut dev, device.ordinal as c_int),
                    )?;
                    cuda::check(
                        "cuDevicePrimaryCtxRetain",
                        sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
                    )?;
                }
                RawCtx::Cuda { dev, ctx }
            }
        };
        let c = Arc::new(Context {
            runtime: runtime.clone(),
            device,
            raw,
        });
        c.bind()?;
        Ok(c)
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    pub fn device(&self) -> &DeviceInfo {
        &self.device
    }

    pub(crate) fn api(&self) -> Api {
        self.runtime.api
    }

    /// The device's multiprocessors (SMs) on the CUDA driver; None on HIP (not asked there).
    pub fn multiprocessors(&self) -> Result<Option<u32>> {
        match self.raw {
            RawCtx::Hip { .. } => Ok(None),
            RawCtx::Cuda { dev, .. } => {
                let mut n: c_int = 0;
                // SAFETY: an out-pointer to a local and a device handle from cuDeviceGet.
                let r = unsafe { sys::cuDeviceGetAttribute(&mut n, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) };
                cuda::check("cuDeviceGetAttribute", r)?;
                Ok(Some(n as u32))
            }
        }
    }

    /// Makes this device current on the calling thread (cuCtxSetCurrent / hipSetDevice).
    pub fn bind(&self) -> Result<()> {
        match (&self.raw, self.runtime.api) {
            // SAFETY: a valid device id.
            (RawCtx::Hip { ordinal }, Api::Hip(h)) => {
                h.check("hipSetDevice", unsafe { h.hipSetDevice()?(*ordinal) })
            }
            // SAFETY: the retained primary context.
            (RawCtx::Cuda { ctx, .. }, _) => {
                cuda::check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(*ctx) })
            }
            (RawCtx::Hip { .. }, Api::Cuda(_)) => unreachable!("a HIP context on the CUDA driver"),
        }
    }

    /// (least, greatest) stream priority; lower numbers are higher priorities on both runtimes.
    pub fn stream_priority_range(&self) -> Result<(i32, i32)> {
        self.bind()?;
        let (mut least, mut greatest) = (0, 0);
        match self.runtime.api {
            // SAFETY: out-pointers to locals.
            Api::Hip(h) => h.check("hipDeviceGetStreamPriorityRange", unsafe {
                h.hipDeviceGetStreamPriorityRange()?(&mut least, &mut greatest)
            })?,
            Api::Cuda(_) => cuda::check("cuCtxGetStreamPriorityRange", unsafe {
                sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
            })?,
        }
        Ok((least, greatest))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if let RawCtx::Cuda { dev, .. } = self.raw {
            // SAFETY: releases the retain made in `on`.
            let r = cuda::check("cuDevicePrimaryCtxRelease_v2", unsafe {
                sys::cuDevicePrimaryCtxRelease_v2(dev)
            });
            if let Err(e) = r {
                record_drop_error("context", &e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_from_props_block() {
        let mut block = vec![0u8; device_prop::BLOCK];
        let s = b"gfx90a:sramecc+:xnack-";
        block[device_prop::GCN_ARCH_NAME..][..s.len()].copy_from_slice(s);
        assert_eq!(gcn_arch_from_props(&block).as_deref(), Some("gfx90a"));
        // An older layout: the name elsewhere in the block.
        let mut old = vec![0u8; device_prop::BLOCK];
        old[900..907].copy_from_slice(b"gfx1100");
        assert_eq!(gcn_arch_from_props(&old).as_deref(), Some("gfx1100"));
        assert_eq!(gcn_arch_from_props(&[0u8; 64]), None);
        assert_eq!(strip_arch_features("gfx942:sramecc+:xnack-"), "gfx942");
        assert_eq!(strip_arch_features("gfx1100"), "gfx1100");
    }

    #[test]
    fn prefer_parses() {
        assert_eq!("auto".parse::<Prefer>(), Ok(Prefer::Auto));
        assert_eq!("HIP".parse::<Prefer>(), Ok(Prefer::Hip));
        assert_eq!("cuda".parse::<Prefer>(), Ok(Prefer::Cuda));
        assert!("vulkan".parse::<Prefer>().unwrap_err().contains("vulkan"));
    }
}
