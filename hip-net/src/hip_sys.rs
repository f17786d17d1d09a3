//! A small hand-declared sys layer over the HIP runtime (libamdhip64), opened at run time with
//! libloading and never linked. Only the entry points tessel needs are declared.
//!
//! Types, constants and struct layouts follow ROCm's `include/hip/hip_runtime_api.h` of HIP 6.3
//! (ROCm/HIP, 2024-10); the layouts used here (`hipExternalMemoryHandleDesc`,
//! `hipExternalMemoryBufferDesc`, `hipDeviceProp_tR0600`'s `gcnArchName` offset) are unchanged in
//! the ROCm 7 header (ROCm/rocm-systems `projects/hip`, 2025).
//!
//! Every entry point is resolved once when the library opens; a missing one is `None` and calling
//! it through [`HipLib`]'s accessors gives [`HipError::SymbolMissing`], never a panic.

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr};
use std::sync::OnceLock;

use libloading::Library;

use crate::error::{HipError, Result};

/// Library names tried, in order.
pub const CANDIDATES: [&str; 4] = [
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];

pub type hipError_t = c_int;
pub type hipDevice_t = c_int;
pub type hipStream_t = *mut c_void;
pub type hipEvent_t = *mut c_void;
pub type hipModule_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipGraphExec_t = *mut c_void;
pub type hipGraphNode_t = *mut c_void;
pub type hipExternalMemory_t = *mut c_void;
pub type hipDeviceptr_t = *mut c_void;
pub type hipHostFn_t = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

pub const hipSuccess: hipError_t = 0;
pub const hipStreamNonBlocking: c_uint = 0x01;
pub const hipEventDefault: c_uint = 0x0;
pub const hipStreamWaitValueGte: c_uint = 0x0;
pub const hipStreamWaitValueEq: c_uint = 0x1;
/// `hipStreamCaptureMode`: Global = 0, ThreadLocal = 1, Relaxed = 2.
pub const hipStreamCaptureModeThreadLocal: c_int = 1;
/// `hipExternalMemoryHandleType`: OpaqueFd = 1.
pub const hipExternalMemoryHandleTypeOpaqueFd: c_int = 1;
/// `hipExternalMemoryDedicated` flag.
pub const hipExternalMemoryDedicated: c_uint = 0x1;

/// `hipUUID` (`char bytes[16]`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct hipUUID {
    pub bytes: [u8; 16],
}

/// The `win32` member of the handle union (two pointers).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalMemoryHandleWin32 {
    pub handle: *mut c_void,
    pub name: *const c_void,
}

/// The anonymous `handle` union of `hipExternalMemoryHandleDesc`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipExternalMemoryHandleUnion {
    pub fd: c_int,
    pub win32: hipExternalMemoryHandleWin32,
    pub nvSciBufObject: *const c_void,
}

/// `hipExternalMemoryHandleDesc` (`hipExternalMemoryHandleDesc_st`): 104 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalMemoryHandleDesc {
    /// `hipExternalMemoryHandleType` (a C enum: int).
    pub type_: c_int,
    pub handle: hipExternalMemoryHandleUnion,
    pub size: c_ulonglong,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// `hipExternalMemoryBufferDesc` (`hipExternalMemoryBufferDesc_st`): 88 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipExternalMemoryBufferDesc {
    pub offset: c_ulonglong,
    pub size: c_ulonglong,
    pub flags: c_uint,
    pub reserved: [c_uint; 16],
}

/// `hipDeviceProp_tR0600`: only its size and the offsets read here are declared; the struct is
/// read from a zeroed byte block larger than it.
pub mod device_prop {
    /// `sizeof(hipDeviceProp_tR0600)` on x86-64 (HIP 6.3 and ROCm 7 headers).
    pub const SIZE: usize = 1472;
    /// Offset of `char name[256]`.
    pub const NAME: usize = 0;
    /// Offset of `hipUUID uuid`.
    pub const UUID: usize = 256;
    /// Offset of `char gcnArchName[256]`.
    pub const GCN_ARCH_NAME: usize = 1160;
    /// Bytes handed to hipGetDeviceProperties (room for a larger future layout).
    pub const BLOCK: usize = 8192;
}

macro_rules! hip_fns {
    ($( $name:ident : fn($($arg:ty),* $(,)?) -> $ret:ty; )*) => {
        /// The resolved entry points (`None`: the library lacks it).
        pub struct HipFns {
            $( pub $name: Option<unsafe extern "C" fn($($arg),*) -> $ret>, )*
        }

        impl HipFns {
            /// # Safety
            /// `lib` must be a HIP runtime whose symbols have the declared signatures.
            unsafe fn resolve(lib: &Library) -> Self {
                HipFns {
                    $( $name: lib
                        .get::<unsafe extern "C" fn($($arg),*) -> $ret>(
                            concat!(stringify!($name), "\0").as_bytes())
                        .ok()
                        .map(|s| *s), )*
                }
            }

            /// Names of the entry points the library lacks.
            pub fn missing(&self) -> Vec<&'static str> {
                let mut m = Vec::new();
                $( if self.$name.is_none() { m.push(stringify!($name)); } )*
                m
            }
        }

        impl HipLib {
            $(
                /// The entry point, or `SymbolMissing`.
                #[inline]
                pub fn $name(&self) -> Result<unsafe extern "C" fn($($arg),*) -> $ret> {
                    self.fns.$name.ok_or_else(|| self.symbol_missing(stringify!($name)))
                }
            )*
        }
    };
}

hip_fns! {
    hipInit: fn(c_uint) -> hipError_t;
    hipRuntimeGetVersion: fn(*mut c_int) -> hipError_t;
    hipGetErrorName: fn(hipError_t) -> *const c_char;
    hipGetDeviceCount: fn(*mut c_int) -> hipError_t;
    hipDeviceGet: fn(*mut hipDevice_t, c_int) -> hipError_t;
    hipDeviceGetName: fn(*mut c_char, c_int, hipDevice_t) -> hipError_t;
    hipDeviceGetUuid: fn(*mut hipUUID, hipDevice_t) -> hipError_t;
    hipGetDevicePropertiesR0600: fn(*mut c_void, c_int) -> hipError_t;
    hipGetDeviceProperties: fn(*mut c_void, c_int) -> hipError_t;
    hipSetDevice: fn(c_int) -> hipError_t;
    hipDeviceGetStreamPriorityRange: fn(*mut c_int, *mut c_int) -> hipError_t;
    hipStreamCreateWithPriority: fn(*mut hipStream_t, c_uint, c_int) -> hipError_t;
    hipStreamSynchronize: fn(hipStream_t) -> hipError_t;
    hipStreamDestroy: fn(hipStream_t) -> hipError_t;
    hipMalloc: fn(*mut *mut c_void, usize) -> hipError_t;
    hipFree: fn(*mut c_void) -> hipError_t;
    hipMemcpyHtoD: fn(hipDeviceptr_t, *mut c_void, usize) -> hipError_t;
    hipMemcpyDtoH: fn(*mut c_void, hipDeviceptr_t, usize) -> hipError_t;
    hipMemcpyHtoDAsync: fn(hipDeviceptr_t, *mut c_void, usize, hipStream_t) -> hipError_t;
    hipMemcpyDtoHAsync: fn(*mut c_void, hipDeviceptr_t, usize, hipStream_t) -> hipError_t;
    hipMemcpyDtoDAsync: fn(hipDeviceptr_t, hipDeviceptr_t, usize, hipStream_t) -> hipError_t;
    hipMemsetD8: fn(hipDeviceptr_t, u8, usize) -> hipError_t;
    hipMemsetD8Async: fn(hipDeviceptr_t, u8, usize, hipStream_t) -> hipError_t;
    hipModuleLoadData: fn(*mut hipModule_t, *const c_void) -> hipError_t;
    hipModuleGetFunction: fn(*mut hipFunction_t, hipModule_t, *const c_char) -> hipError_t;
    hipModuleUnload: fn(hipModule_t) -> hipError_t;
    hipModuleLaunchKernel: fn(
        hipFunction_t, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
        hipStream_t, *mut *mut c_void, *mut *mut c_void,
    ) -> hipError_t;
    hipEventCreate: fn(*mut hipEvent_t) -> hipError_t;
    hipEventRecord: fn(hipEvent_t, hipStream_t) -> hipError_t;
    hipEventSynchronize: fn(hipEvent_t) -> hipError_t;
    hipEventElapsedTime: fn(*mut f32, hipEvent_t, hipEvent_t) -> hipError_t;
    hipEventDestroy: fn(hipEvent_t) -> hipError_t;
    hipImportExternalMemory: fn(*mut hipExternalMemory_t, *const hipExternalMemoryHandleDesc)
        -> hipError_t;
    hipExternalMemoryGetMappedBuffer: fn(
        *mut *mut c_void, hipExternalMemory_t, *const hipExternalMemoryBufferDesc,
    ) -> hipError_t;
    hipDestroyExternalMemory: fn(hipExternalMemory_t) -> hipError_t;
    hipStreamBeginCapture: fn(hipStream_t, c_int) -> hipError_t;
    hipStreamEndCapture: fn(hipStream_t, *mut hipGraph_t) -> hipError_t;
    hipGraphInstantiate: fn(*mut hipGraphExec_t, hipGraph_t, *mut hipGraphNode_t, *mut c_char, usize)
        -> hipError_t;
    hipGraphLaunch: fn(hipGraphExec_t, hipStream_t) -> hipError_t;
    hipGraphExecDestroy: fn(hipGraphExec_t) -> hipError_t;
    hipGraphDestroy: fn(hipGraph_t) -> hipError_t;
    hipStreamWaitValue64: fn(hipStream_t, *mut c_void, u64, c_uint, u64) -> hipError_t;
    hipLaunchHostFunc: fn(hipStream_t, hipHostFn_t, *mut c_void) -> hipError_t;
}

/// Entry points without which the runtime is refused at open. The others (memset, stream-wait,
/// host functions, UUID and properties queries) are looked up when used.
pub const REQUIRED: [&str; 30] = [
    "hipInit",
    "hipGetErrorName",
    "hipGetDeviceCount",
    "hipDeviceGet",
    "hipDeviceGetName",
    "hipSetDevice",
    "hipDeviceGetStreamPriorityRange",
    "hipStreamCreateWithPriority",
    "hipStreamSynchronize",
    "hipStreamDestroy",
    "hipMalloc",
    "hipFree",
    "hipMemcpyHtoD",
    "hipMemcpyDtoH",
    "hipMemcpyHtoDAsync",
    "hipMemcpyDtoHAsync",
    "hipModuleLoadData",
    "hipModuleGetFunction",
    "hipModuleUnload",
    "hipModuleLaunchKernel",
    "hipEventCreate",
    "hipEventRecord",
    "hipEventSynchronize",
    "hipEventElapsedTime",
    "hipEventDestroy",
    "hipStreamBeginCapture",
    "hipStreamEndCapture",
    "hipGraphInstantiate",
    "hipGraphLaunch",
    "hipGraphExecDestroy",
];

/// An opened HIP runtime: the library (kept loaded for the life of the process) and its entry
/// points.
pub struct HipLib {
    /// The candidate name that loaded.
    pub name: String,
    pub fns: HipFns,
    _lib: Library,
}

// SAFETY: the struct holds only a library handle and plain function pointers; the HIP runtime is
// thread-safe.
unsafe impl Send for HipLib {}
unsafe impl Sync for HipLib {}

/// Why the HIP runtime could not be opened.
#[derive(Debug, Clone)]
pub struct LoadFailure {
    pub tried: Vec<String>,
    pub why: String,
}

impl HipLib {
    fn symbol_missing(&self, symbol: &str) -> HipError {
        HipError::SymbolMissing {
            symbol: symbol.to_string(),
            library: self.name.clone(),
        }
    }

    /// Maps a return code to `Ok` or to [`HipError::Call`] named with hipGetErrorName.
    pub fn check(&self, call: &'static str, code: hipError_t) -> Result<()> {
        if code == hipSuccess {
            return Ok(());
        }
        Err(HipError::Call {
            call,
            code,
            name: self.error_name(code),
        })
    }

    /// hipGetErrorName of a code, or "unknown".
    pub fn error_name(&self, code: hipError_t) -> String {
        let Some(f) = self.fns.hipGetErrorName else {
            return "unknown".to_string();
        };
        // SAFETY: hipGetErrorName returns a static NUL-terminated string (or null).
        unsafe {
            let p = f(code);
            if p.is_null() {
                "unknown".to_string()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        }
    }
}

/// Opens the first of `candidates` that loads and resolves the entry points; refuses a library
/// that lacks any of [`REQUIRED`] (so a wrong library is never called through).
pub fn load_from(candidates: &[&str]) -> std::result::Result<HipLib, LoadFailure> {
    let tried: Vec<String> = candidates.iter().map(|s| s.to_string()).collect();
    let mut errors: Vec<(String, String)> = Vec::new();
    for name in candidates {
        // SAFETY: loading runs the library's initialisers; the HIP runtime's are benign.
        match unsafe { Library::new(name) } {
            Ok(lib) => {
                // SAFETY: the symbols are declared with HIP's signatures.
                let fns = unsafe { HipFns::resolve(&lib) };
                let missing: Vec<&str> = fns
                    .missing()
                    .into_iter()
                    .filter(|m| REQUIRED.contains(m))
                    .collect();
                if !missing.is_empty() {
                    errors.push((
                        name.to_string(),
                        format!("loaded but lacks {}", missing.join(", ")),
                    ));
                    continue;
                }
                return Ok(HipLib {
                    name: name.to_string(),
                    fns,
                    _lib: lib,
                });
            }
            Err(e) => {
                let text = e.to_string();
                let reason = text
                    .strip_prefix(&format!("{name}: "))
                    .unwrap_or(&text)
                    .to_string();
                errors.push((name.to_string(), reason));
            }
        }
    }
    Err(LoadFailure {
        tried,
        why: format!("HIP runtime not present: {}", tried_text(&errors)),
    })
}

/// "tried a, b (reason); c (other reason)": the names grouped by why each failed, in order.
pub(crate) fn tried_text(errors: &[(String, String)]) -> String {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for (name, reason) in errors {
        match groups.iter_mut().find(|(_, r)| *r == reason.as_str()) {
            Some((names, _)) => names.push(name),
            None => groups.push((vec![name], reason)),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(names, r)| format!("{} ({r})", names.join(", ")))
        .collect();
    format!("tried {}", parts.join("; "))
}

static HIP: OnceLock<std::result::Result<HipLib, LoadFailure>> = OnceLock::new();

/// The process's HIP runtime, opened once from [`CANDIDATES`].
pub fn lib() -> std::result::Result<&'static HipLib, &'static LoadFailure> {
    HIP.get_or_init(|| load_from(&CANDIDATES)).as_ref()
}

/// Whether the HIP runtime loads (with every required entry point).
pub fn is_present() -> bool {
    lib().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn descriptor_layouts_match_the_header() {
        // sizeof/offsetof as gcc computes them from hip_runtime_api.h on x86-64.
        assert_eq!(size_of::<hipExternalMemoryHandleDesc>(), 104);
        assert_eq!(align_of::<hipExternalMemoryHandleDesc>(), 8);
        assert_eq!(offset_of!(hipExternalMemoryHandleDesc, handle), 8);
        assert_eq!(offset_of!(hipExternalMemoryHandleDesc, size), 24);
        assert_eq!(offset_of!(hipExternalMemoryHandleDesc, flags), 32);
        assert_eq!(offset_of!(hipExternalMemoryHandleDesc, reserved), 36);
        assert_eq!(size_of::<hipExternalMemoryBufferDesc>(), 88);
        assert_eq!(offset_of!(hipExternalMemoryBufferDesc, flags), 16);
        assert_eq!(size_of::<hipUUID>(), 16);
        // The CUDA twins have the same layout (HIP mirrors them).
        assert_eq!(
            size_of::<hipExternalMemoryHandleDesc>(),
            size_of::<cudarc::driver::sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC>()
        );
        assert_eq!(
            size_of::<hipExternalMemoryBufferDesc>(),
            size_of::<cudarc::driver::sys::CUDA_EXTERNAL_MEMORY_BUFFER_DESC>()
        );
    }

    #[test]
    fn a_library_without_the_entry_points_is_refused_not_called() {
        // libc loads but has no hip* symbols: an error naming them, no panic.
        let err = load_from(&["libamdhip64.so.99-absent", "libc.so.6"])
            .err()
            .expect("refused");
        assert_eq!(err.tried, vec!["libamdhip64.so.99-absent", "libc.so.6"]);
        assert!(err
            .why
            .starts_with("HIP runtime not present: tried libamdhip64.so.99-absent ("));
        assert!(
            err.why.contains("libc.so.6 (loaded but lacks hipInit, "),
            "{}",
            err.why
        );
        assert!(err.why.contains("hipGraphExecDestroy"), "{}", err.why);
    }

    #[test]
    fn failures_are_grouped_by_reason() {
        let e = |n: &str, r: &str| (n.to_string(), r.to_string());
        let text = tried_text(&[
            e("a.so.7", "absent"),
            e("a.so.6", "absent"),
            e("a.so", "broken"),
        ]);
        assert_eq!(text, "tried a.so.7, a.so.6 (absent); a.so (broken)");
    }
}
