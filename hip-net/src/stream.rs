//! Streams (non-blocking, at the device's greatest priority), events for GPU timing, and stream
//! capture into executable graphs.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::buffer::DevicePtr;
use crate::cuda;
use crate::error::{record_drop_error, Result};
use crate::hip_sys;
use crate::platform::{Api, Context};

/// A non-blocking stream. Work on it does not wait for the legacy default stream.
pub struct Stream {
    ctx: Arc<Context>,
    raw: *mut c_void,
    priority: i32,
}

// SAFETY: streams may be used from any thread (each call binds the context first).
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A non-blocking stream at the device's greatest priority (the lowest number of the range).
    pub fn new(ctx: &Arc<Context>) -> Result<Stream> {
        let (_, greatest) = ctx.stream_priority_range()?;
        Self::with_priority(ctx, greatest)
    }

    /// A non-blocking stream at `priority` (clamped by the runtime into its range).
    pub fn with_priority(ctx: &Arc<Context>, priority: i32) -> Result<Stream> {
        ctx.bind()?;
        let mut raw: *mut c_void = std::ptr::null_mut();
        match ctx.api() {
            // SAFETY: out-pointer to a local.
            Api::Hip(h) => h.check("hipStreamCreateWithPriority", unsafe {
                h.hipStreamCreateWithPriority()?(&mut raw, hip_sys::hipStreamNonBlocking, priority)
            })?,
            Api::Cuda(_) => cuda::check("cuStreamCreateWithPriority", unsafe {
                sys::cuStreamCreateWithPriority(
                    (&mut raw as *mut *mut c_void).cast(),
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                    priority,
                )
            })?,
        }
        Ok(Stream {
            ctx: ctx.clone(),
            raw,
            priority,
        })
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The priority asked for at creation.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// The runtime's handle (hipStream_t / CUstream).
    pub fn raw(&self) -> *mut c_void {
        self.raw
    }

    /// Waits until everything enqueued so far has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        match self.ctx.api() {
            // SAFETY: a live stream.
            Api::Hip(h) => h.check("hipStreamSynchronize", unsafe {
                h.hipStreamSynchronize()?(self.raw)
            }),
            Api::Cuda(_) => cuda::check("cuStreamSynchronize", unsafe {
                sys::cuStreamSynchronize(self.raw.cast())
            }),
        }
    }

    /// Captures what `record` enqueues on this stream into a graph and instantiates it. Capture is
    /// thread-local: other threads may keep using the runtime meanwhile. The capture is always
    /// ended, so an error in `record` leaves the stream usable (and is returned).
    pub fn capture(&self, record: impl FnOnce(&Stream) -> Result<()>) -> Result<GraphExec> {
        self.ctx.bind()?;
        let mut graph: *mut c_void = std::ptr::null_mut();
        match self.ctx.api() {
            Api::Hip(h) => {
                let begin = h.hipStreamBeginCapture()?;
                let end = h.hipStreamEndCapture()?;
                let mode = hip_sys::hipStreamCaptureModeThreadLocal;
                // SAFETY: a live stream; out-pointer to a local.
                h.check("hipStreamBeginCapture", unsafe { begin(self.raw, mode) })?;
                let recorded = record(self);
                let ended = h.check("hipStreamEndCapture", unsafe { end(self.raw, &mut graph) });
                if let Err(e) = recorded.and(ended) {
                    self.destroy_graph(graph);
                    return Err(e);
                }
                let mut exec: *mut c_void = std::ptr::null_mut();
                let inst = h.hipGraphInstantiate()?;
                // SAFETY: a graph just captured; no error node or log wanted.
                let r = unsafe {
                    inst(
                        &mut exec,
                        graph,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        0,
                    )
                };
                self.destroy_graph(graph);
                h.check("hipGraphInstantiate", r)?;
                Ok(GraphExec {
                    ctx: self.ctx.clone(),
                    raw: exec,
                })
            }
            Api::Cuda(_) => {
                let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
                // SAFETY: a live stream; out-pointers to locals.
                cuda::check("cuStreamBeginCapture_v2", unsafe {
                    sys::cuStreamBeginCapture_v2(self.raw.cast(), mode)
                })?;
                let recorded = record(self);
                let ended = cuda::check("cuStreamEndCapture", unsafe {
                    sys::cuStreamEndCapture(
                        self.raw.cast(),
                        (&mut graph as *mut *mut c_void).cast(),
                    )
                });
                if let Err(e) = recorded.and(ended) {
                    self.destroy_graph(graph);
                    return Err(e);
                }
                let mut exec: *mut c_void = std::ptr::null_mut();
                let r = unsafe {
                    sys::cuGraphInstantiateWithFlags(
                        (&mut exec as *mut *mut c_void).cast(),
                        graph.cast(),
                        0,
                    )
                };
                self.destroy_graph(graph);
                cuda::check("cuGraphInstantiateWithFlags", r)?;
                Ok(GraphExec {
                    ctx: self.ctx.clone(),
                    raw: exec,
                })
            }
        }
    }

    fn destroy_graph(&self, graph: *mut c_void) {
        if graph.is_null() {
            return;
        }
        let r = match self.ctx.api() {
            // SAFETY: a graph from EndCapture, destroyed once.
            Api::Hip(h) => h
                .hipGraphDestroy()
                .and_then(|f| h.check("hipGraphDestroy", unsafe { f(graph) })),
            Api::Cuda(_) => cuda::check("cuGraphDestroy", unsafe {
                sys::cuGraphDestroy(graph.cast())
            }),
        };
        if let Err(e) = r {
            record_drop_error("graph", &e);
        }
    }

    /// Makes the stream wait until the 64-bit word at `addr` is ≥ `value` (the marker tier:
    /// hipStreamWaitValue64 / cuStreamWaitValue64_v2). Keep waits outside captured graphs.
    ///
    /// # Safety
    /// `addr` must be a device address of at least 8 bytes, 8-byte aligned, that stays valid
    /// until the wait has completed.
    pub unsafe fn wait_value64(&self, addr: DevicePtr, value: u64) -> Result<()> {
        self.ctx.bind()?;
        match self.ctx.api() {
            Api::Hip(h) => h.check(
                "hipStreamWaitValue64",
                h.hipStreamWaitValue64()?(
                    self.raw,
                    addr.0 as *mut c_void,
                    value,
                    hip_sys::hipStreamWaitValueGte,
                    u64::MAX,
                ),
            ),
            Api::Cuda(_) => cuda::check(
                "cuStreamWaitValue64_v2",
                sys::cuStreamWaitValue64_v2(
                    self.raw.cast(),
                    addr.0,
                    value,
                    sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
                ),
            ),
        }
    }

    /// Enqueues a host function: it runs on a runtime thread once the work before it has
    /// finished, and work after it waits for it to return. It must not call the runtime.
    ///
    /// # Safety
    /// `user_data` must stay valid until `f` has run; `f` must not unwind.
    pub unsafe fn launch_host_func(
        &self,
        f: unsafe extern "C" fn(*mut c_void),
        user_data: *mut c_void,
    ) -> Result<()> {
        self.ctx.bind()?;
        match self.ctx.api() {
            Api::Hip(h) => h.check(
                "hipLaunchHostFunc",
                h.hipLaunchHostFunc()?(self.raw, Some(f), user_data),
            ),
            Api::Cuda(_) => cuda::check(
                "cuLaunchHostFunc",
                sys::cuLaunchHostFunc(self.raw.cast(), Some(f), user_data),
            ),
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let r = self.ctx.bind().and_then(|_| match self.ctx.api() {
            // SAFETY: the stream is destroyed once; pending work still completes.
            Api::Hip(h) => h
                .hipStreamDestroy()
                .and_then(|f| h.check("hipStreamDestroy", unsafe { f(self.raw) })),
            Api::Cuda(_) => cuda::check("cuStreamDestroy_v2", unsafe {
                sys::cuStreamDestroy_v2(self.raw.cast())
            }),
        });
        if let Err(e) = r {
            record_drop_error("stream", &e);
        }
    }
}

/// An instantiated graph (one per window phase); launch it on any stream of its context.
pub struct GraphExec {
    ctx: Arc<Context>,
    raw: *mut c_void,
}

// SAFETY: as for Stream.
unsafe impl Send for GraphExec {}
unsafe impl Sync for GraphExec {}

impl GraphExec {
    /// Enqueues the whole graph on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.ctx.bind()?;
        match self.ctx.api() {
            // SAFETY: a live graph and stream.
            Api::Hip(h) => h.check("hipGraphLaunch", unsafe {
                h.hipGraphLaunch()?(self.raw, stream.raw)
            }),
            Api::Cuda(_) => cuda::check("cuGraphLaunch", unsafe {
                sys::cuGraphLaunch(self.raw.cast(), stream.raw.cast())
            }),
        }
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        let r = self.ctx.bind().and_then(|_| match self.ctx.api() {
            // SAFETY: destroyed once.
            Api::Hip(h) => h
                .hipGraphExecDestroy()
                .and_then(|f| h.check("hipGraphExecDestroy", unsafe { f(self.raw) })),
            Api::Cuda(_) => cuda::check("cuGraphExecDestroy", unsafe {
                sys::cuGraphExecDestroy(self.raw.cast())
            }),
        });
        if let Err(e) = r {
            record_drop_error("graph exec", &e);
        }
    }
}

/// A GPU event, for timing: record two on a stream, then [`Event::elapsed_ms`].
pub struct Event {
    ctx: Arc<Context>,
    raw: *mut c_void,
}

// SAFETY: as for Stream.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// An event with timing enabled.
    pub fn new(ctx: &Arc<Context>) -> Result<Event> {
        ctx.bind()?;
        let mut raw: *mut c_void = std::ptr::null_mut();
        match ctx.api() {
            // SAFETY: out-pointer to a local.
            Api::Hip(h) => h.check("hipEventCreate", unsafe { h.hipEventCreate()?(&mut raw) })?,
            Api::Cuda(_) => cuda::check("cuEventCreate", unsafe {
                sys::cuEventCreate(
                    (&mut raw as *mut *mut c_void).cast(),
                    sys::CUevent_flags::CU_EVENT_DEFAULT as u32,
                )
            })?,
        }
        Ok(Event {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// Records the event at the current end of `stream`.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        self.ctx.bind()?;
        match self.ctx.api() {
            // SAFETY: a live event and stream.
            Api::Hip(h) => h.check("hipEventRecord", unsafe {
                h.hipEventRecord()?(self.raw, stream.raw)
            }),
            Api::Cuda(_) => cuda::check("cuEventRecord", unsafe {
                sys::cuEventRecord(self.raw.cast(), stream.raw.cast())
            }),
        }
    }

    /// Waits until the work before the recorded point has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.bind()?;
        match self.ctx.api() {
            // SAFETY: a live event.
            Api::Hip(h) => h.check("hipEventSynchronize", unsafe {
                h.hipEventSynchronize()?(self.raw)
            }),
            Api::Cuda(_) => cuda::check("cuEventSynchronize", unsafe {
                sys::cuEventSynchronize(self.raw.cast())
            }),
        }
    }

    /// Milliseconds of GPU time between `start` and `end`; waits for `end` first.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        end.synchronize()?;
        let mut ms = 0f32;
        match end.ctx.api() {
            // SAFETY: two recorded events of one context.
            Api::Hip(h) => h.check("hipEventElapsedTime", unsafe {
                h.hipEventElapsedTime()?(&mut ms, start.raw, end.raw)
            })?,
            Api::Cuda(_) => cuda::check("cuEventElapsedTime_v2", unsafe {
                sys::cuEventElapsedTime_v2(&mut ms, start.raw.cast(), end.raw.cast())
            })?,
        }
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let r = self.ctx.bind().and_then(|_| match self.ctx.api() {
            // SAFETY: destroyed once.
            Api::Hip(h) => h
                .hipEventDestroy()
                .and_then(|f| h.check("hipEventDestroy", unsafe { f(self.raw) })),
            Api::Cuda(_) => cuda::check("cuEventDestroy_v2", unsafe {
                sys::cuEventDestroy_v2(self.raw.cast())
            }),
        });
        if let Err(e) = r {
            record_drop_error("event", &e);
        }
    }
}
