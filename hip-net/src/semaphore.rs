//! A Vulkan timeline semaphore imported into the runtime (synchronisation tier 1 of
//! ../shared/DESIGN.md): the network's stream waits on the front's value and signals the back's.
//! The CUDA driver imports OPAQUE_FD timeline semaphores; HIP on Linux cannot import Vulkan
//! semaphores at all, so on AMD the marker tier is used instead.

use std::ffi::c_void;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::sync::Arc;

use cudarc::driver::sys;

use crate::cuda;
use crate::error::{HipError, Result};
use crate::platform::{Api, Context};
use crate::stream::Stream;

pub struct ExternalSemaphore {
    ctx: Arc<Context>,
    raw: sys::CUexternalSemaphore,
}

// The handle is only used through &self on streams of its context.
unsafe impl Send for ExternalSemaphore {}
unsafe impl Sync for ExternalSemaphore {}

impl ExternalSemaphore {
    /// Imports a timeline semaphore exported as OPAQUE_FD. On success the driver owns the fd;
    /// on failure it is closed here.
    pub fn import_timeline_fd(ctx: &Arc<Context>, fd: OwnedFd) -> Result<ExternalSemaphore> {
        ctx.bind()?;
        match ctx.api() {
            Api::Hip(_) => Err(HipError::Call {
                call: "hipImportExternalSemaphore",
                code: 0,
                name: "HIP on Linux cannot import Vulkan semaphores (use the marker tier)".into(),
            }),
            Api::Cuda(_) => {
                // A struct literal: std::mem::zeroed aborts on the enum field.
                let desc = sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
                    type_: sys::CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
                    handle: sys::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st__bindgen_ty_1 { fd: fd.as_raw_fd() },
                    flags: 0,
                    reserved: [0; 16],
                };
                let mut raw: sys::CUexternalSemaphore = std::ptr::null_mut();
                // SAFETY: a valid descriptor; `fd` is open.
                cuda::check("cuImportExternalSemaphore", unsafe { sys::cuImportExternalSemaphore(&mut raw, &desc) })?;
                let _ = fd.into_raw_fd(); // the driver owns it now
                Ok(ExternalSemaphore { ctx: ctx.clone(), raw })
            }
        }
    }

    /// Enqueues a wait until the semaphore reaches `value`.
    pub fn wait(&self, stream: &Stream, value: u64) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: plain-old-data parameters (no enum fields); only the fence value is used.
        let mut p: sys::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS = unsafe { std::mem::zeroed() };
        p.params.fence.value = value;
        cuda::check("cuWaitExternalSemaphoresAsync", unsafe {
            sys::cuWaitExternalSemaphoresAsync(&self.raw, &p, 1, stream.raw() as sys::CUstream)
        })
    }

    /// Enqueues a signal of `value`.
    pub fn signal(&self, stream: &Stream, value: u64) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: as for `wait`.
        let mut p: sys::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS = unsafe { std::mem::zeroed() };
        p.params.fence.value = value;
        cuda::check("cuSignalExternalSemaphoresAsync", unsafe {
            sys::cuSignalExternalSemaphoresAsync(&self.raw, &p, 1, stream.raw() as sys::CUstream)
        })
    }

    pub fn raw(&self) -> *mut c_void {
        self.raw as *mut c_void
    }
}

impl Drop for ExternalSemaphore {
    fn drop(&mut self) {
        if let Err(e) = self.ctx.bind().and_then(|_| cuda::check("cuDestroyExternalSemaphore", unsafe { sys::cuDestroyExternalSemaphore(self.raw) })) {
            crate::error::record_drop_error("external semaphore", &e);
        }
    }
}
