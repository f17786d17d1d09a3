//! The split frame: hip-net's network as the Vulkan engine's external network, between the front
//! and the back, on the engine's exported buffers, with one of three synchronisation tiers
//! (../shared/DESIGN.md), chosen by capability or forced with TESSEL_HIP_SYNC:
//!
//! 1. `timeline`: the engine's timeline semaphore imported into the runtime; the stream waits on
//!    the front's value and signals the back's (the CUDA driver; HIP on Linux cannot import it).
//! 2. `marker`: the front writes its value into an exported marker word; the stream waits on it
//!    (stream wait-value on imported memory) and a host function signals the timeline for the
//!    back (the default on AMD).
//! 3. `host`: the host waits for the front on the timeline, then launches; signals as in 2.
//!
//! One handoff each way per frame.

use std::ffi::c_void;
use std::sync::Arc;

use ash::vk;
use tessel_model::package::ModelPackage;
use vk_stages::runner::ExternalNetwork;
use vk_stages::Engine;

use crate::buffer::ExternalMemory;
use crate::error::{HipError, Result};
use crate::network::{Io, Network};
use crate::platform::{Backend, Context};
use crate::semaphore::ExternalSemaphore;
use crate::stream::Event;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncTier {
    Timeline,
    Marker,
    Host,
}

impl SyncTier {
    pub fn name(self) -> &'static str {
        match self {
            SyncTier::Timeline => "timeline (imported timeline semaphore)",
            SyncTier::Marker => "marker (stream wait on a marker word, host signal)",
            SyncTier::Host => "host (host wait, host signal)",
        }
    }

    /// TESSEL_HIP_SYNC=timeline|marker|host, else the best the runtime can do.
    pub fn choose(backend: Backend) -> Result<SyncTier> {
        match std::env::var("TESSEL_HIP_SYNC").as_deref() {
            Ok("timeline") if backend == Backend::Hip => Err(HipError::Call {
                call: "TESSEL_HIP_SYNC=timeline",
                code: 0,
                name: "HIP on Linux cannot import Vulkan semaphores; use marker or host".into(),
            }),
            Ok("timeline") => Ok(SyncTier::Timeline),
            Ok("marker") => Ok(SyncTier::Marker),
            Ok("host") => Ok(SyncTier::Host),
            Ok(other) => Err(HipError::Call { call: "TESSEL_HIP_SYNC", code: 0, name: format!("'{other}' is not timeline, marker or host") }),
            Err(_) => Ok(if backend == Backend::Cuda { SyncTier::Timeline } else { SyncTier::Marker }),
        }
    }
}

/// What a host function needs to signal the engine's timeline.
struct HostSignal {
    device: ash::Device,
    timeline: vk::Semaphore,
    value: u64,
}

unsafe extern "C" fn signal_timeline(data: *mut c_void) {
    // SAFETY: `data` is a HostSignal slot that lives in the SplitNetwork's ring until at least
    // eight frames later.
    let s = unsafe { &*(data as *const HostSignal) };
    let info = vk::SemaphoreSignalInfo::default().semaphore(s.timeline).value(s.value);
    // A failed signal leaves the back waiting: the runner's fence wait then reports the hang.
    let _ = unsafe { s.device.signal_semaphore(&info) };
}

pub struct SplitNetwork {
    pub net: Network,
    pub tier: SyncTier,
    sem: Option<ExternalSemaphore>,
    marker: Option<ExternalMemory>,
    device: ash::Device,
    timeline: vk::Semaphore,
    /// Host-function arguments, one per frame in flight (never resized: the addresses stay put).
    ring: Vec<HostSignal>,
    next: usize,
    timing: Option<Timing>,
}

/// Events around each frame's network launch, and the times of the finished frames.
struct Timing {
    events: (Event, Event),
    recorded: bool,
    /// Every finished frame's time, when a caller asked for the log (tests).
    log: Option<Arc<std::sync::Mutex<Vec<f32>>>>,
}

fn import(ctx: &Arc<Context>, b: &vk_stages::memory::Buffer) -> Result<ExternalMemory> {
    let fd = b.export_fd().map_err(|e| HipError::Call { call: "vkGetMemoryFdKHR", code: 0, name: e.to_string() })?;
    ExternalMemory::import_opaque_fd(ctx, fd, b.allocation_size, true)
}

impl SplitNetwork {
    /// Imports an exportable engine's token and head buffers (and its timeline semaphore or
    /// marker word, by tier) into `ctx`, builds the network and its eight graphs, and sets the
    /// engine up to hand its buffers over each frame.
    pub fn attach(engine: &mut Engine, ctx: &Arc<Context>, pkg: &ModelPackage, tier: SyncTier) -> Result<SplitNetwork> {
        let tokens = import(ctx, &engine.tokens)?;
        let head = import(ctx, &engine.head)?;
        let sem = match tier {
            SyncTier::Timeline => {
                let fd = engine.export_timeline_fd().map_err(|e| HipError::Call { call: "vkGetSemaphoreFdKHR", code: 0, name: e.to_string() })?;
                Some(ExternalSemaphore::import_timeline_fd(ctx, fd)?)
            }
            _ => None,
        };
        let marker = match (tier, &engine.marker) {
            (SyncTier::Marker, Some(m)) => Some(import(ctx, m)?),
            (SyncTier::Marker, None) => return Err(HipError::Call { call: "marker tier", code: 0, name: "the engine has no marker (create it exportable)".into() }),
            _ => None,
        };
        let mut net = Network::with_io(ctx, pkg, engine.output, Io::Imported(tokens), Io::Imported(head))?;
        net.build_graphs()?;
        engine.external_network = true;
        engine.write_marker = tier == SyncTier::Marker;
        let device = engine.model.shared.device.clone();
        let ring = (0..8).map(|_| HostSignal { device: device.clone(), timeline: engine.timeline, value: 0 }).collect();
        Ok(SplitNetwork { net, tier, sem, marker, device, timeline: engine.timeline, ring, next: 0, timing: None })
    }

    /// Times the network's own launch in every frame from now on (events around the graph on
    /// its stream); each finished frame's time is returned by `network_ms`.
    pub fn enable_timing(&mut self) -> Result<()> {
        let events = (Event::new(&self.net.ctx)?, Event::new(&self.net.ctx)?);
        self.timing = Some(Timing { events, recorded: false, log: None });
        Ok(())
    }

    /// Timing on, and every finished frame's time kept in the returned list as well.
    pub fn timing_log(&mut self) -> Result<Arc<std::sync::Mutex<Vec<f32>>>> {
        self.enable_timing()?;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(t) = self.timing.as_mut() {
            t.log = Some(log.clone());
        }
        Ok(log)
    }

    fn launch_timed(&mut self, phase: usize) -> Result<()> {
        if let Some(t) = self.timing.as_mut() {
            t.recorded = true;
            t.events.0.record(&self.net.stream)?;
            self.net.launch(phase)?;
            t.events.1.record(&self.net.stream)
        } else {
            self.net.launch(phase)
        }
    }

    /// The last frame's network time (after its back finished), when timing is on.
    fn finished_ms(&mut self) -> Result<Option<f64>> {
        let Some(t) = self.timing.as_mut().filter(|t| t.recorded) else { return Ok(None) };
        t.recorded = false;
        t.events.1.synchronize()?;
        let ms = Event::elapsed_ms(&t.events.0, &t.events.1)?;
        if let Some(log) = &t.log {
            log.lock().map_err(|_| HipError::Call { call: "timing", code: 0, name: "poisoned".into() })?.push(ms);
        }
        Ok(Some(ms as f64))
    }

    fn host_signal(&mut self, value: u64) -> Result<()> {
        let slot = &mut self.ring[self.next % 8];
        self.next += 1;
        slot.value = value;
        let data = slot as *mut HostSignal as *mut c_void;
        // SAFETY: the slot outlives the callback (see `signal_timeline`).
        unsafe { self.net.stream.launch_host_func(signal_timeline, data) }
    }

    fn enqueue_tier(&mut self, phase: usize, wait: u64, signal: u64) -> Result<()> {
        match self.tier {
            SyncTier::Timeline => {
                let sem = self.sem.as_ref().expect("timeline tier has its semaphore");
                sem.wait(&self.net.stream, wait)?;
                self.launch_timed(phase)?;
                let sem = self.sem.as_ref().expect("timeline tier has its semaphore");
                sem.signal(&self.net.stream, signal)
            }
            SyncTier::Marker => {
                let m = self.marker.as_ref().expect("marker tier has its marker").ptr();
                // SAFETY: the marker is imported memory this network owns.
                unsafe { self.net.stream.wait_value64(m, wait)? };
                self.launch_timed(phase)?;
                self.host_signal(signal)
            }
            SyncTier::Host => {
                let sems = [self.timeline];
                let vals = [wait];
                let info = vk::SemaphoreWaitInfo::default().semaphores(&sems).values(&vals);
                unsafe { self.device.wait_semaphores(&info, 10_000_000_000) }.map_err(|r| HipError::Call { call: "vkWaitSemaphores", code: r.as_raw(), name: format!("{r:?}") })?;
                self.launch_timed(phase)?;
                self.host_signal(signal)
            }
        }
    }
}

impl ExternalNetwork for SplitNetwork {
    fn enqueue(&mut self, phase: usize, wait: u64, signal: u64) -> std::result::Result<(), String> {
        self.enqueue_tier(phase, wait, signal).map_err(|e| e.to_string())
    }
    fn front_signals(&self) -> bool {
        self.tier != SyncTier::Marker
    }
    fn network_ms(&mut self) -> Option<f64> {
        self.finished_ms().ok().flatten()
    }
}
