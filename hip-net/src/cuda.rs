//! The CUDA driver side: cudarc's `sys` (dynamic loading of libcuda) with the checks cudarc leaves
//! out. cudarc panics when the library or a symbol is missing, so nothing here calls through
//! `sys` before [`open`] has found the library and every entry point hip-net uses.

use std::ffi::{c_int, CStr};
use std::sync::OnceLock;

use cudarc::driver::sys;

use crate::error::{HipError, Result};

/// Every driver entry point hip-net calls (cudarc resolves these exact names).
pub const USED: [&str; 39] = [
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetUuid_v2",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxGetStreamPriorityRange",
    "cuStreamCreateWithPriority",
    "cuStreamSynchronize",
    "cuStreamDestroy_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemsetD8_v2",
    "cuMemsetD8Async",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuImportExternalMemory",
    "cuExternalMemoryGetMappedBuffer",
    "cuDestroyExternalMemory",
    "cuStreamBeginCapture_v2",
    "cuStreamEndCapture",
    "cuGraphInstantiateWithFlags",
    "cuGraphLaunch",
];

/// Entry points needed only by the graph, marker and semaphore paths, the copy-rate probe and the
/// kernels' report (registers, spills, workgroups an SM), checked with [`USED`].
pub const USED_MORE: [&str; 11] = [
    "cuFuncGetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuMemcpyDtoDAsync_v2",
    "cuGraphExecDestroy",
    "cuGraphDestroy",
    "cuStreamWaitValue64_v2",
    "cuLaunchHostFunc",
    "cuImportExternalSemaphore",
    "cuWaitExternalSemaphoresAsync",
    "cuSignalExternalSemaphoresAsync",
    "cuDestroyExternalSemaphore",
];

/// The library names cudarc tries for the driver, in its order.
pub fn candidates() -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for n in cudarc::get_lib_name_candidates("cuda") {
        if !v.contains(&n) {
            v.push(n);
        }
    }
    v
}

/// "tried libcuda.so, libcuda.so.1, ... and N other names": the Linux names in full, the rest
/// (other platforms' spellings that cudarc also tries) counted.
pub(crate) fn tried_summary(tried: &[String]) -> String {
    let (linux, other): (Vec<&String>, Vec<&String>) =
        tried.iter().partition(|n| n.starts_with("libcuda.so"));
    let names: Vec<&str> = linux.iter().map(|s| s.as_str()).collect();
    if other.is_empty() {
        format!("tried {}", names.join(", "))
    } else {
        format!("tried {} and {} other names", names.join(", "), other.len())
    }
}

/// The opened driver: which file loaded and its version.
#[derive(Debug, Clone)]
pub struct CudaDriver {
    pub library: String,
    /// cuDriverGetVersion: 1000 × major + 10 × minor.
    pub version: i32,
}

/// Why the driver could not be opened.
#[derive(Debug, Clone)]
pub struct LoadFailure {
    pub tried: Vec<String>,
    pub why: String,
}

static DRIVER: OnceLock<std::result::Result<CudaDriver, LoadFailure>> = OnceLock::new();

/// Finds libcuda, checks every entry point, and runs cuInit once.
pub fn open() -> std::result::Result<&'static CudaDriver, &'static LoadFailure> {
    DRIVER.get_or_init(open_once).as_ref()
}

/// Whether the driver opens (library, symbols and cuInit).
pub fn is_present() -> bool {
    open().is_ok()
}

fn open_once() -> std::result::Result<CudaDriver, LoadFailure> {
    let tried = candidates();
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        // Say why for the name a Linux driver installs (the rest are other platforms' names).
        // SAFETY: as above.
        let reason = match unsafe { libloading::Library::new("libcuda.so.1") } {
            Err(e) => {
                let t = e.to_string();
                t.strip_prefix("libcuda.so.1: ").unwrap_or(&t).to_string()
            }
            Ok(_) => "no candidate loaded".to_string(),
        };
        let why = format!(
            "CUDA driver not present: {} ({reason})",
            tried_summary(&tried)
        );
        return Err(LoadFailure { tried, why });
    }
    let library = tried
        .iter()
        // SAFETY: as above.
        .find(|n| unsafe { libloading::Library::new(n.as_str()) }.is_ok())
        .cloned()
        .unwrap_or_else(|| "libcuda".to_string());
    // SAFETY: the library is present, so culib() does not panic; `get` only looks a name up.
    let lib = unsafe { sys::culib() };
    let missing: Vec<&str> = USED
        .iter()
        .chain(USED_MORE.iter())
        .copied()
        .filter(|s| unsafe { lib.get::<*const ()>(s.as_bytes()) }.is_err())
        .collect();
    if !missing.is_empty() {
        return Err(LoadFailure {
            tried,
            why: format!(
                "CUDA driver {library} lacks {} (driver too old?)",
                missing.join(", ")
            ),
        });
    }
    // SAFETY: every symbol used is present.
    if let Err(e) = check("cuInit", unsafe { sys::cuInit(0) }) {
        return Err(LoadFailure {
            tried,
            why: format!("CUDA driver unusable: {e}"),
        });
    }
    let mut version: c_int = 0;
    // SAFETY: as above.
    let _ = unsafe { sys::cuDriverGetVersion(&mut version) };
    Ok(CudaDriver { library, version })
}

/// Maps a CUresult to `Ok` or to [`HipError::Call`] named with cuGetErrorName.
/// Only call once [`open`] succeeded (it calls into the driver for the name).
pub fn check(call: &'static str, r: sys::CUresult) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut p = std::ptr::null();
    // SAFETY: cuGetErrorName writes a static NUL-terminated string or leaves null.
    let name = unsafe {
        if sys::cuGetErrorName(r, &mut p) == sys::CUresult::CUDA_SUCCESS && !p.is_null() {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        } else {
            format!("{r:?}")
        }
    };
    Err(HipError::Call {
        call,
        code: r as i32,
        name,
    })
}
