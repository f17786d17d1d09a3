//! Device memory: buffers this layer allocates, and Vulkan allocations imported as OPAQUE_FD.

use std::ffi::c_void;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::sync::Arc;

use cudarc::driver::sys;

use crate::cuda;
use crate::error::{record_drop_error, HipError, Result};
use crate::hip_sys;
use crate::platform::{Api, Context};
use crate::stream::Stream;

/// A device address (CUdeviceptr / hipDeviceptr_t as an integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The address `bytes` further on.
    pub fn offset(self, bytes: u64) -> DevicePtr {
        DevicePtr(self.0 + bytes)
    }
}

/// Device memory allocated by this layer, freed on drop.
pub struct DeviceBuffer {
    ctx: Arc<Context>,
    ptr: u64,
    len: usize,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceBuffer({:#x}, {} bytes)", self.ptr, self.len)
    }
}

fn fits(what: &'static str, got: usize, capacity: usize) -> Result<()> {
    if got > capacity {
        return Err(HipError::Size {
            what,
            got,
            capacity,
        });
    }
    Ok(())
}

impl DeviceBuffer {
    /// `len` bytes of device memory (uninitialised). A zero-length buffer allocates nothing.
    pub fn alloc(ctx: &Arc<Context>, len: usize) -> Result<DeviceBuffer> {
        let mut ptr = 0u64;
        if len > 0 {
            ctx.bind()?;
            match ctx.api() {
                // SAFETY: out-pointer to a local of pointer size.
                Api::Hip(h) => h.check("hipMalloc", unsafe {
                    h.hipMalloc()?((&mut ptr as *mut u64).cast(), len)
                })?,
                Api::Cuda(_) => cuda::check("cuMemAlloc_v2", unsafe {
                    sys::cuMemAlloc_v2(&mut ptr, len)
                })?,
            }
        }
        Ok(DeviceBuffer {
            ctx: ctx.clone(),
            ptr,
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr)
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Copies `src` to the start of the buffer, returning when the copy is done. It does not
    /// wait for work on non-blocking streams: synchronise those first, or use [`Self::upload_on`].
    pub fn upload(&self, src: &[u8]) -> Result<()> {
        fits("upload", src.len(), self.len)?;
        if src.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        match self.ctx.api() {
            // SAFETY: src.len() bytes fit the allocation; HIP does not write through `src`.
            Api::Hip(h) => h.check("hipMemcpyHtoD", unsafe {
                h.hipMemcpyHtoD()?(
                    self.ptr as *mut c_void,
                    src.as_ptr() as *mut c_void,
                    src.len(),
                )
            }),
            Api::Cuda(_) => cuda::check("cuMemcpyHtoD_v2", unsafe {
                sys::cuMemcpyHtoD_v2(self.ptr, src.as_ptr().cast(), src.len())
            }),
        }
    }

    /// Copies the start of the buffer into `dst`, returning when the copy is done (see
    /// [`Self::upload`] on ordering).
    pub fn download(&self, dst: &mut [u8]) -> Result<()> {
        fits("download", dst.len(), self.len)?;
        if dst.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        match self.ctx.api() {
            // SAFETY: dst.len() bytes fit the allocation and `dst`.
            Api::Hip(h) => h.check("hipMemcpyDtoH", unsafe {
                h.hipMemcpyDtoH()?(dst.as_mut_ptr().cast(), self.ptr as *mut c_void, dst.len())
            }),
            Api::Cuda(_) => cuda::check("cuMemcpyDtoH_v2", unsafe {
                sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), self.ptr, dst.len())
            }),
        }
    }

    /// Copies `src` to the start of the buffer in `stream` order, and waits for the stream.
    pub fn upload_on(&self, stream: &Stream, src: &[u8]) -> Result<()> {
        fits("upload", src.len(), self.len)?;
        if src.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let s = stream.raw();
        match self.ctx.api() {
            // SAFETY: as in upload; `src` outlives the copy (the stream is synchronised below).
            Api::Hip(h) => h.check("hipMemcpyHtoDAsync", unsafe {
                h.hipMemcpyHtoDAsync()?(
                    self.ptr as *mut c_void,
                    src.as_ptr() as *mut c_void,
                    src.len(),
                    s,
                )
            })?,
            Api::Cuda(_) => cuda::check("cuMemcpyHtoDAsync_v2", unsafe {
                sys::cuMemcpyHtoDAsync_v2(self.ptr, src.as_ptr().cast(), src.len(), s.cast())
            })?,
        }
        stream.synchronize()
    }

    /// Copies the start of the buffer into `dst` in `stream` order (after the work enqueued
    /// before), and waits for the stream.
    pub fn download_on(&self, stream: &Stream, dst: &mut [u8]) -> Result<()> {
        fits("download", dst.len(), self.len)?;
        if dst.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        let s = stream.raw();
        match self.ctx.api() {
            // SAFETY: as in download; `dst` outlives the copy (synchronised below).
            Api::Hip(h) => h.check("hipMemcpyDtoHAsync", unsafe {
                h.hipMemcpyDtoHAsync()?(
                    dst.as_mut_ptr().cast(),
                    self.ptr as *mut c_void,
                    dst.len(),
                    s,
                )
            })?,
            Api::Cuda(_) => cuda::check("cuMemcpyDtoHAsync_v2", unsafe {
                sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), self.ptr, dst.len(), s.cast())
            })?,
        }
        stream.synchronize()
    }

    /// Enqueues copying the whole of `src` (no longer than this buffer) into the start of this
    /// one on `stream` (does not wait). Both must belong to this buffer's context.
    pub fn copy_from_on(&self, src: &DeviceBuffer, stream: &Stream) -> Result<()> {
        fits("device copy", src.len, self.len)?;
        if src.len == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        let s = stream.raw();
        match self.ctx.api() {
            // SAFETY: two live allocations of this context, `src.len` bytes of each (checked).
            Api::Hip(h) => h.check("hipMemcpyDtoDAsync", unsafe {
                h.hipMemcpyDtoDAsync()?(self.ptr as *mut c_void, src.ptr as *mut c_void, src.len, s)
            }),
            Api::Cuda(_) => cuda::check("cuMemcpyDtoDAsync_v2", unsafe {
                sys::cuMemcpyDtoDAsync_v2(self.ptr, src.ptr, src.len, s.cast())
            }),
        }
    }

    /// Enqueues filling the whole buffer with `byte` on `stream` (does not wait).
    pub fn fill_on(&self, stream: &Stream, byte: u8) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        let s = stream.raw();
        match self.ctx.api() {
            // SAFETY: the whole allocation.
            Api::Hip(h) => h.check("hipMemsetD8Async", unsafe {
                h.hipMemsetD8Async()?(self.ptr as *mut c_void, byte, self.len, s)
            }),
            Api::Cuda(_) => cuda::check("cuMemsetD8Async", unsafe {
                sys::cuMemsetD8Async(self.ptr, byte, self.len, s.cast())
            }),
        }
    }
}

fn free(ctx: &Context, ptr: u64) -> Result<()> {
    ctx.bind()?;
    match ctx.api() {
        // SAFETY: an allocation (or mapped buffer) of this context, freed once.
        Api::Hip(h) => h
            .hipFree()
            .and_then(|f| h.check("hipFree", unsafe { f(ptr as *mut c_void) })),
        Api::Cuda(_) => cuda::check("cuMemFree_v2", unsafe { sys::cuMemFree_v2(ptr) }),
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            if let Err(e) = free(&self.ctx, self.ptr) {
                record_drop_error("device buffer", &e);
            }
        }
    }
}

// SAFETY: device memory is not tied to a thread; each call binds the context.
unsafe impl Send for DeviceBuffer {}
unsafe impl Sync for DeviceBuffer {}

/// Memory of another API (a Vulkan allocation exported as OPAQUE_FD) mapped as one device buffer.
/// Drop unmaps it and destroys the import.
pub struct ExternalMemory {
    ctx: Arc<Context>,
    raw: *mut c_void,
    ptr: u64,
    size: u64,
}

// SAFETY: as for DeviceBuffer.
unsafe impl Send for ExternalMemory {}
unsafe impl Sync for ExternalMemory {}

impl ExternalMemory {
    /// Imports the `size` bytes behind `fd` (the whole Vulkan allocation; `dedicated` when it was
    /// a dedicated allocation) and maps them as one buffer from offset 0.
    ///
    /// The fd is taken by value: on success the runtime owns it (the CUDA driver closes it when
    /// the import is destroyed, and this type never closes it); on failure it is closed here.
    pub fn import_opaque_fd(
        ctx: &Arc<Context>,
        fd: OwnedFd,
        size: u64,
        dedicated: bool,
    ) -> Result<ExternalMemory> {
        ctx.bind()?;
        let mut raw: *mut c_void = std::ptr::null_mut();
        match ctx.api() {
            Api::Hip(h) => {
                let import = h.hipImportExternalMemory()?;
                let map = h.hipExternalMemoryGetMappedBuffer()?;
                h.hipDestroyExternalMemory()?;
                let desc = hip_sys::hipExternalMemoryHandleDesc {
                    type_: hip_sys::hipExternalMemoryHandleTypeOpaqueFd,
                    handle: hip_sys::hipExternalMemoryHandleUnion { fd: fd.as_raw_fd() },
                    size,
                    flags: if dedicated {
                        hip_sys::hipExternalMemoryDedicated
                    } else {
                        0
                    },
                    reserved: [0; 16],
                };
                // SAFETY: a descriptor laid out as hip_runtime_api.h's; `fd` is open.
                h.check("hipImportExternalMemory", unsafe {
                    import(&mut raw, &desc)
                })?;
                let _ = fd.into_raw_fd(); // the runtime owns it now
                let mut imported = ExternalMemory {
                    ctx: ctx.clone(),
                    raw,
                    ptr: 0,
                    size,
                };
                let buf = hip_sys::hipExternalMemoryBufferDesc {
                    offset: 0,
                    size,
                    flags: 0,
                    reserved: [0; 16],
                };
                let mut p: *mut c_void = std::ptr::null_mut();
                // SAFETY: maps the whole import.
                h.check("hipExternalMemoryGetMappedBuffer", unsafe {
                    map(&mut p, raw, &buf)
                })?;
                imported.ptr = p as u64;
                Ok(imported)
            }
            Api::Cuda(_) => {
                // A struct literal: std::mem::zeroed aborts on the enum field.
                let desc = sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
                    type_:
                        sys::CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
                    handle: sys::CUDA_EXTERNAL_MEMORY_HANDLE_DESC_st__bindgen_ty_1 {
                        fd: fd.as_raw_fd(),
                    },
                    size,
                    flags: if dedicated { 1 } else { 0 }, // CUDA_EXTERNAL_MEMORY_DEDICATED
                    reserved: [0; 16],
                };
                // SAFETY: a valid descriptor; `fd` is open.
                cuda::check("cuImportExternalMemory", unsafe {
                    sys::cuImportExternalMemory((&mut raw as *mut *mut c_void).cast(), &desc)
                })?;
                let _ = fd.into_raw_fd(); // the driver owns it now
                let mut imported = ExternalMemory {
                    ctx: ctx.clone(),
                    raw,
                    ptr: 0,
                    size,
                };
                let buf = sys::CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
                    offset: 0,
                    size,
                    flags: 0,
                    reserved: [0; 16],
                };
                let mut p = 0u64;
                // SAFETY: maps the whole import.
                cuda::check("cuExternalMemoryGetMappedBuffer", unsafe {
                    sys::cuExternalMemoryGetMappedBuffer(&mut p, raw.cast(), &buf)
                })?;
                imported.ptr = p;
                Ok(imported)
            }
        }
    }

    /// The mapped buffer's device address.
    pub fn ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr)
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Drop for ExternalMemory {
    fn drop(&mut self) {
        if self.ptr != 0 {
            if let Err(e) = free(&self.ctx, self.ptr) {
                record_drop_error("external memory mapping", &e);
            }
        }
        let r = self.ctx.bind().and_then(|_| match self.ctx.api() {
            // SAFETY: the import, destroyed once after its mapping was freed.
            Api::Hip(h) => h
                .hipDestroyExternalMemory()
                .and_then(|f| h.check("hipDestroyExternalMemory", unsafe { f(self.raw) })),
            Api::Cuda(_) => cuda::check("cuDestroyExternalMemory", unsafe {
                sys::cuDestroyExternalMemory(self.raw.cast())
            }),
        });
        if let Err(e) = r {
            record_drop_error("external memory", &e);
        }
    }
}
