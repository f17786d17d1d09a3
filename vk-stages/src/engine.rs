//! The Engine: one per (render capacity, output size). Every buffer it will use is allocated at
//! creation; recording a frame allocates nothing, submits nothing and waits for nothing.
//!
//! Frame N: `record_front` writes its parameters into slot N mod 8 (vkCmdUpdateBuffer inside
//! the caller's command buffer), measures exposure, prepares the inputs and writes the token
//! buffer; `record_network` turns tokens into the head buffer; `record_back` reconstructs the
//! output and writes history N mod 2. The token and head buffers are what an external network
//! (hip-net) shares, exported as OPAQUE_FD where the device can.

use std::sync::Arc;

use ash::vk;
use tessel_model::config::{TokenGrid, TOKEN_PIXELS};
use tessel_model::head::FixedHead;
use tessel_model::sequence::{Exposure, MotionUnits};
use tessel_model::shifts::{phase_of, window_shift};
use tessel_model::taau::TaauParams;

use crate::bindings as b;
use crate::device::DeviceShared;
use crate::error::{Check, Result, VkError};
use crate::memory::{Buffer, Location};
use crate::model::Model;
use crate::native::NativeNetwork;
use crate::params::{FrameParams, FRAME_PARAMS_BYTES};
use crate::plan::{NetBuffers, PlanBuilder, Push, Step};

/// Timestamp queries per frame slot: the stage boundaries, then one per network layer when
/// profiling (TESSEL_PROFILE=1).
pub const QUERIES_PER_FRAME: u32 = 128;
/// Stage boundaries: front start, inputs prepared, tokens written, head written, back done.
pub const STAGE_QUERIES: u32 = 5;

/// Where the next frame recorded goes: its parameter slot and the history it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextFrame {
    pub slot: u32,
    pub history_write: u32,
}

/// One frame's values, known when it is recorded.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput {
    pub render: (usize, usize),
    /// Sample offset from the pixel centre, render px (sanitised here: non-finite -> 0, clamped).
    pub jitter: [f32; 2],
    pub reset: bool,
    pub exposure: Exposure,
    pub motion_units: MotionUnits,
    pub depth_inverted: bool,
}

/// What the reconstruction takes its controls from.
#[derive(Clone, Copy, Debug)]
pub enum Controls {
    /// The head buffer (the network's output).
    Head,
    /// Fixed values everywhere: the contract's reconstruction with a fixed head.
    Fixed(FixedHead),
    /// The classical TAAU (`shaders/taau.comp`, model/src/taau.rs): no network, its own
    /// reconstruction, a sample count in the history.
    Classic(TaauParams),
}

impl Controls {
    /// Whether the frame needs the token buffer and a network (only the head's controls do).
    pub fn needs_network(&self) -> bool {
        matches!(self, Controls::Head)
    }
}

#[derive(Clone, Copy, Debug)]
struct Current {
    slot: u32,
    phase: usize,
    read: u32,
    write: u32,
    /// The front ran the input stage, which stored the context the reconstruction reads.
    tokens: bool,
}

/// Pipelines of the front and back, resolved at creation.
#[derive(Clone, Copy)]
struct FrontBack {
    exposure_partial: vk::Pipeline,
    exposure_final: vk::Pipeline,
    prepare: vk::Pipeline,
    input: vk::Pipeline,
    reconstruct: vk::Pipeline,
    taau: vk::Pipeline,
    /// The reconstruction reading the context the input stage stored.
    reconstruct_stored: vk::Pipeline,
}

pub struct Engine {
    pub model: Arc<Model>,
    shared: Arc<DeviceShared>,
    pub capacity: (usize, usize),
    pub output: (usize, usize),
    pub grid: TokenGrid,
    /// Inputs at render capacity: colour RGBA f32, motion RG f32, depth f32 (filled by the caller).
    pub color: Buffer,
    pub motion: Buffer,
    pub depth: Buffer,
    pub params: Buffer,
    /// Per parameter slot, the frame's position table (shaders/include/context.glsl): output
    /// columns then rows, f32, written by the host into the frame's command buffer.
    positions: Buffer,
    /// Where the host computes the table (allocated at creation).
    position_scratch: Vec<f32>,
    partials: Buffer,
    prep_c: Buffer,
    prep_m: Buffer,
    /// Per output pixel, the history part of the context (colour, validity; vec4) that the
    /// input stage stores for the reconstruction of the same frame.
    context: Buffer,
    pub history: [Buffer; 2],
    pub hist_state: Buffer,
    /// Token and head buffers (docs/NETWORK.md §7), exportable where the device allows.
    pub tokens: Buffer,
    pub head: Buffer,
    /// Output, linear RGBA f32.
    pub output_rgba: Buffer,
    x: Vec<Buffer>,
    qkv: Buffer,
    attn: Buffer,
    hidden: Buffer,
    pub queries: vk::QueryPool,
    /// Timeline semaphore for the split frame: the front's submit signals, the back's waits.
    pub timeline: vk::Semaphore,
    /// Frames recorded so far (the evaluation counter; never restarted).
    pub counter: u64,
    current: Option<Current>,
    /// Per-layer timestamps (TESSEL_PROFILE=1).
    pub profile: bool,
    /// A diagnostic of the per-layer profile (TESSEL_PROFILE_TWICE=1): each profiled dispatch is
    /// recorded twice in a row, so that a layer's interval holds a cold run and a warm one (the
    /// same pipeline just ran). Twice the plain profile's time less this one's is what a layer
    /// loses to being the first of its kind in a while. Its results are not the network's: layers
    /// that add into their stream add twice.
    pub profile_twice: bool,
    /// With an external network on the marker tier: a word the front sets to its timeline value
    /// (2N+1) once the token buffer is written, for the other runtime to wait on
    /// (hipStreamWaitValue64 / cuStreamWaitValue64). Exportable; allocated when the engine is.
    pub marker: Option<Buffer>,
    /// Whether the front writes the marker (the marker tier).
    pub write_marker: bool,
    /// The network runs in another API between front and back: the token buffer is released
    /// to VK_QUEUE_FAMILY_EXTERNAL after the front and the head buffer acquired from it before
    /// the back (and each taken back for the next frame).
    pub external_network: bool,
    next_query: u32,
    plan: Vec<Step>,
    /// Native kernels that replace the shaders' network (`set_native`), where the device runs
    /// them inside the command buffer.
    native: Option<NativeNetwork>,
    fb: FrontBack,
}

fn env_on(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// TESSEL_PROFILE_TWICE=1 with TESSEL_PROFILE=1 ([`Engine::profile_twice`]), said on stderr
/// where it is on, since the frames are then not the network's.
fn profile_twice() -> bool {
    let on = env_on("TESSEL_PROFILE") && env_on("TESSEL_PROFILE_TWICE");
    if on {
        eprintln!("tessel: TESSEL_PROFILE_TWICE=1: every dispatch of the shaders' network runs twice in a row (a profiling diagnostic); the frames are not the network's");
    }
    on
}

impl Engine {
    /// Allocates every buffer for frames up to `capacity` (render size) at `output`.
    /// `exportable`: the token and head buffers can be exported (needs VK_KHR_external_memory_fd).
    pub fn new(model: &Arc<Model>, capacity: (usize, usize), output: (usize, usize), exportable: bool) -> Result<Engine> {
        let shared = model.shared.clone();
        if capacity.0 == 0 || capacity.1 == 0 || output.0 == 0 || output.1 == 0 {
            return Err(VkError::Size(format!("render capacity {capacity:?} and output {output:?} must be non-zero")));
        }
        if capacity.0 > output.0 || capacity.1 > output.1 {
            return Err(VkError::Size(format!("render capacity {}x{} exceeds the output {}x{}", capacity.0, capacity.1, output.0, output.1)));
        }
        if exportable && !shared.caps.external_memory_fd {
            return Err(VkError::MissingFeature { device: shared.caps.name.clone(), feature: "VK_KHR_external_memory_fd (exportable token and head buffers)".into() });
        }
        let cfg = &model.config;
        let grid = TokenGrid::new(cfg, output.0, output.1);
        let rpix = (capacity.0 * capacity.1) as u64;
        let opix = (output.0 * output.1) as u64;
        let dev = |name, bytes| Buffer::new(&shared, name, bytes, Location::Device, false);
        let sizes = crate::plan::net_sizes(cfg, &grid);
        let x = sizes.x.iter().map(|&b| dev("activations", b)).collect::<Result<Vec<_>>>()?;
        let mut hist_state = Buffer::new(&shared, "history state", 16, Location::Host, false)?;
        hist_state.bytes_mut().fill(0);
        let qinfo = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(QUERIES_PER_FRAME * b::PARAM_SLOTS);
        let d = &shared.device;
        let queries = unsafe { d.create_query_pool(&qinfo, None) }.call("vkCreateQueryPool")?;
        let mut tl_info = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE).initial_value(0);
        let mut export = vk::ExportSemaphoreCreateInfo::default().handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut sinfo = vk::SemaphoreCreateInfo::default().push_next(&mut tl_info);
        if exportable && shared.caps.external_semaphore_fd {
            sinfo = sinfo.push_next(&mut export);
        }
        let timeline = unsafe { d.create_semaphore(&sinfo, None) }.call("vkCreateSemaphore")?;
        let fb = {
            let p = &model.pipelines;
            let v = model.fixed_variants();
            FrontBack {
                exposure_partial: p.get(&v[0]),
                exposure_final: p.get(&v[1]),
                prepare: p.get(&v[2]),
                input: p.get(&v[3]),
                reconstruct: p.get(&v[4]),
                taau: p.get(&v[5]),
                reconstruct_stored: p.get(&v[6]),
            }
        };
        let mut engine = Engine {
            model: model.clone(),
            capacity,
            output,
            grid,
            color: dev("colour input", rpix * 16)?,
            motion: dev("motion input", rpix * 8)?,
            depth: dev("depth input", rpix * 4)?,
            params: dev("frame parameters", FRAME_PARAMS_BYTES * b::PARAM_SLOTS as u64)?,
            positions: dev("position tables", Self::positions_bytes(output) * b::PARAM_SLOTS as u64)?,
            position_scratch: Vec::with_capacity(output.0 + output.1),
            partials: dev("exposure partials", rpix.div_ceil(b::WG_REDUCE as u64) * 4)?,
            prep_c: dev("prepared colour", rpix * 16)?,
            prep_m: dev("prepared motion", rpix * 8)?,
            context: dev("pixel context", opix * 16)?,
            history: [dev("history 0", opix * 16)?, dev("history 1", opix * 16)?],
            hist_state,
            tokens: Buffer::new(&shared, "tokens", sizes.tokens, Location::Device, exportable)?,
            head: Buffer::new(&shared, "head", sizes.head, Location::Device, exportable)?,
            output_rgba: dev("output", opix * 16)?,
            x,
            qkv: dev("qkv", sizes.qkv)?,
            attn: dev("attention", sizes.attn)?,
            hidden: dev("mlp hidden", sizes.hidden)?,
            queries,
            timeline,
            counter: 0,
            current: None,
            profile: env_on("TESSEL_PROFILE"),
            profile_twice: profile_twice(),
            external_network: false,
            marker: if exportable { Some(Buffer::new(&shared, "marker", 8, Location::Device, true)?) } else { None },
            write_marker: false,
            next_query: 0,
            plan: Vec::new(),
            native: None,
            fb,
            shared,
        };
        engine.plan = PlanBuilder { model, dims: (0..cfg.levels()).map(|l| grid.level_dims(l)).collect(), bufs: engine.net_buffers(), steps: Vec::new() }.build();
        Ok(engine)
    }

    /// Addresses of the network's buffers (token, head, activations, scratch): what a plan of
    /// native kernels runs on.
    pub fn net_buffers(&self) -> NetBuffers {
        NetBuffers {
            tokens: self.tokens.address,
            head: self.head.address,
            x: self.x.iter().map(|b| b.address).collect(),
            qkv: self.qkv.address,
            attn: self.attn.address,
            hidden: self.hidden.address,
        }
    }

    /// Runs the network as native kernels from now on (made for this engine's buffers).
    pub fn set_native(&mut self, native: NativeNetwork) {
        self.native = Some(native);
    }

    fn d(&self) -> &ash::Device {
        &self.shared.device
    }

    /// A full memory barrier between dependent compute/transfer commands.
    pub fn barrier(&self, cmd: vk::CommandBuffer) {
        let all = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE;
        let m = [vk::MemoryBarrier::default().src_access_mask(all).dst_access_mask(all)];
        let st = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        unsafe { self.d().cmd_pipeline_barrier(cmd, st, st, vk::DependencyFlags::empty(), &m, &[], &[]) };
    }

    fn dispatch_raw(&self, cmd: vk::CommandBuffer, pipeline: vk::Pipeline, push: &Push, groups: (u32, u32, u32)) {
        unsafe {
            self.d().cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            self.d().cmd_push_constants(cmd, self.model.pipelines.layout, vk::ShaderStageFlags::COMPUTE, 0, push.data());
            self.d().cmd_dispatch(cmd, groups.0, groups.1, groups.2);
        }
        self.barrier(cmd);
    }

    fn timestamp(&mut self, cmd: vk::CommandBuffer) {
        let cur = self.current.expect("timestamp outside a frame");
        if self.next_query < QUERIES_PER_FRAME {
            let q = cur.slot * QUERIES_PER_FRAME + self.next_query;
            unsafe { self.d().cmd_write_timestamp(cmd, vk::PipelineStageFlags::ALL_COMMANDS, self.queries, q) };
            self.next_query += 1;
        }
    }

    /// Labels of the timestamps a frame writes, in order: the stage boundaries, with the
    /// per-layer points between "tokens written" and "head written" when profiling.
    pub fn timestamp_labels(&self) -> Vec<String> {
        let mut v: Vec<String> = ["front start", "prepared", "tokens written"].map(String::from).to_vec();
        if self.profile {
            match &self.native {
                Some(n) => v.extend(n.launches().map(|l| l.label.clone())),
                None => v.extend(self.plan.iter().filter_map(|s| s.profile_label.clone())),
            }
        }
        v.push("head written".into());
        v.push("back done".into());
        v
    }

    /// Cost (bytes, FLOPs) of each profiled network step, in the order of the per-layer times.
    pub fn layer_costs(&self) -> Vec<crate::plan::Cost> {
        if let Some(n) = &self.native {
            return n.launches().map(|l| l.cost).collect();
        }
        self.plan.iter().filter(|s| s.profile_label.is_some()).map(|s| s.cost).collect()
    }

    /// Queries written by the last recorded frame.
    pub fn queries_written(&self) -> u32 {
        self.next_query
    }

    /// A queue-family ownership transfer of a whole buffer: to the external owner (`release`)
    /// or back from it.
    fn transfer(&self, cmd: vk::CommandBuffer, buf: &Buffer, release: bool) {
        let (src, dst) = if release { (self.shared.queue_family, vk::QUEUE_FAMILY_EXTERNAL) } else { (vk::QUEUE_FAMILY_EXTERNAL, self.shared.queue_family) };
        let all = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE;
        let b = [vk::BufferMemoryBarrier::default()
            .src_access_mask(if release { all } else { vk::AccessFlags::empty() })
            .dst_access_mask(if release { vk::AccessFlags::empty() } else { all })
            .src_queue_family_index(src)
            .dst_queue_family_index(dst)
            .buffer(buf.buffer)
            .offset(0)
            .size(vk::WHOLE_SIZE)];
        let st = vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER;
        let (a, z) = if release { (st, vk::PipelineStageFlags::BOTTOM_OF_PIPE) } else { (vk::PipelineStageFlags::TOP_OF_PIPE, st) };
        unsafe { self.d().cmd_pipeline_barrier(cmd, a, z, vk::DependencyFlags::empty(), &[], &b, &[]) };
    }

    /// Exports the timeline semaphore (created exportable with the engine's buffers) as an
    /// OPAQUE_FD; the importer owns the fd.
    pub fn export_timeline_fd(&self) -> Result<std::os::fd::OwnedFd> {
        use std::os::fd::FromRawFd;
        let ext = self.shared.ext_semaphore_fd.as_ref().ok_or_else(|| VkError::MissingFeature {
            device: self.shared.caps.name.clone(),
            feature: "VK_KHR_external_semaphore_fd".into(),
        })?;
        let info = vk::SemaphoreGetFdInfoKHR::default().semaphore(self.timeline).handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let fd = unsafe { ext.get_semaphore_fd(&info) }.call("vkGetSemaphoreFdKHR")?;
        Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
    }

    /// The parameter slot and history of the next frame to be recorded (a caller reads that
    /// frame's timestamps, parameters and history back from them).
    pub fn next_frame(&self) -> NextFrame {
        NextFrame { slot: (self.counter % b::PARAM_SLOTS as u64) as u32, history_write: (self.counter % 2) as u32 }
    }

    /// Bytes of one slot's position table.
    fn positions_bytes(output: (usize, usize)) -> u64 {
        ((output.0 + output.1) * 4).div_ceil(256) as u64 * 256
    }

    /// The address of a slot's position table.
    fn positions_at(&self, slot: u32) -> u64 {
        self.positions.address + slot as u64 * Self::positions_bytes(self.output)
    }

    /// Writes the frame's position table into `slot` (vkCmdUpdateBuffer, at most 64 KiB a call):
    /// (x + 0.5) rw / W for every output column, then (y + 0.5) rh / H for every row, in IEEE f32
    /// exactly as the reference computes them.
    fn record_positions(&mut self, cmd: vk::CommandBuffer, slot: u32, render: (usize, usize)) {
        let (ow, oh) = self.output;
        let t = &mut self.position_scratch;
        t.clear();
        t.extend((0..ow).map(|x| (x as f32 + 0.5) * render.0 as f32 / ow as f32));
        t.extend((0..oh).map(|y| (y as f32 + 0.5) * render.1 as f32 / oh as f32));
        let bytes: &[u8] = bytemuck::cast_slice(t);
        let base = slot as u64 * Self::positions_bytes(self.output);
        for (i, chunk) in bytes.chunks(65536).enumerate() {
            unsafe { self.shared.device.cmd_update_buffer(cmd, self.positions.buffer, base + i as u64 * 65536, chunk) };
        }
    }

    /// Byte offset of a slot's parameters in `params`.
    pub fn params_offset(slot: u32) -> u64 {
        slot as u64 * FRAME_PARAMS_BYTES
    }

    /// Records the front: parameters, exposure, prepared inputs, the token buffer.
    /// The inputs (colour, motion, depth at `frame.render`) must already be in the engine's
    /// input buffers, or written by commands before these in the same queue.
    pub fn record_front(&mut self, cmd: vk::CommandBuffer, frame: &FrameInput) -> Result<()> {
        self.record_front_with(cmd, frame, true)
    }

    /// The front, with the input stage (`tokens`) or without it, for a back that reads no head
    /// (fixed controls, the classical TAAU): its timestamp then marks an empty stage.
    pub fn record_front_with(&mut self, cmd: vk::CommandBuffer, frame: &FrameInput, tokens: bool) -> Result<()> {
        if self.current.is_some() {
            return Err(VkError::Size("record_front called twice without record_back".into()));
        }
        let (rw, rh) = frame.render;
        if rw == 0 || rh == 0 || rw > self.capacity.0 || rh > self.capacity.1 {
            return Err(VkError::Size(format!(
                "render size {rw}x{rh} is outside this engine's capacity {}x{} (create an Engine with a larger capacity)",
                self.capacity.0, self.capacity.1
            )));
        }
        let NextFrame { slot, history_write: write } = self.next_frame();
        self.current = Some(Current { slot, phase: phase_of(self.counter), read: 1 - write, write, tokens });
        self.next_query = 0;
        let (ow, oh) = self.output;
        let scale = match frame.motion_units {
            MotionUnits::Render => [ow as f32 / rw as f32, oh as f32 / rh as f32],
            MotionUnits::Output => [1.0, 1.0],
        };
        let jitter = frame.jitter.map(|j| if j.is_finite() { j.clamp(-0.5, 0.5) } else { 0.0 });
        let fp = FrameParams {
            jitter,
            render: [rw as u32, rh as u32],
            out_size: [ow as u32, oh as u32],
            motion_scale: scale,
            auto_exposure: matches!(frame.exposure, Exposure::Auto) as u32,
            reset: frame.reset as u32,
            depth_inverted: frame.depth_inverted as u32,
            hist_read: 1 - write,
            exposure: frame.exposure.value().unwrap_or(1.0),
            sanitized: 0,
            hist_exposure: 1.0,
            hist_valid: 0,
        };
        let d = self.shared.device.clone();
        unsafe { d.cmd_reset_query_pool(cmd, self.queries, slot * QUERIES_PER_FRAME, QUERIES_PER_FRAME) };
        if self.external_network {
            if self.counter == 0 {
                // The external network writes the head before the first back: hand it over.
                self.transfer(cmd, &self.head, true);
            } else {
                self.transfer(cmd, &self.tokens, false);
            }
        }
        self.barrier(cmd);
        self.timestamp(cmd);
        unsafe { d.cmd_update_buffer(cmd, self.params.buffer, Self::params_offset(slot), bytemuck::bytes_of(&fp)) };
        self.record_positions(cmd, slot, (rw, rh));
        self.barrier(cmd);
        let pa = self.params.address + Self::params_offset(slot);
        let rpix = (rw * rh) as u32;
        let groups = rpix.div_ceil(b::WG_REDUCE);
        if frame.exposure == Exposure::Auto {
            let push = Push::new().u64(pa).u64(self.color.address).u64(self.partials.address);
            self.dispatch_raw(cmd, self.fb.exposure_partial, &push, (groups, 1, 1));
        }
        let push = Push::new().u64(pa).u64(self.partials.address).u64(self.hist_state.address).u32(groups);
        self.dispatch_raw(cmd, self.fb.exposure_final, &push, (1, 1, 1));
        let push = Push::new()
            .u64(pa)
            .u64(self.color.address)
            .u64(self.motion.address)
            .u64(self.depth.address)
            .u64(self.prep_c.address)
            .u64(self.prep_m.address);
        self.dispatch_raw(cmd, self.fb.prepare, &push, (groups, 1, 1));
        self.timestamp(cmd);
        if tokens {
            let cur = self.current.unwrap();
            let m = &self.model;
            let push = Push::new()
                .u64(pa)
                .u64(self.prep_c.address)
                .u64(self.prep_m.address)
                .u64(self.history[cur.read as usize].address)
                .u64(m.tensor("pixel_embed.weight"))
                .u64(m.tensor("pixel_embed.bias"))
                .u64(self.tokens.address)
                .u32(self.grid.padded_w as u32)
                .u64(self.positions_at(slot))
                .u64(self.context.address);
            let (wx, wy) = m.pixel_paths.input_wg;
            let px = (self.grid.padded_w * 4) as u32 / wx;
            let py = (self.grid.padded_h * 4) as u32 / wy;
            self.dispatch_raw(cmd, self.fb.input, &push, (px, py, 1));
        }
        self.timestamp(cmd);
        if self.external_network {
            self.transfer(cmd, &self.tokens, true);
            if let (true, Some(m)) = (self.write_marker, &self.marker) {
                // After the tokens (the barrier above orders the transfer behind the dispatch).
                self.barrier(cmd);
                let value = 2 * self.counter + 1;
                unsafe { d.cmd_update_buffer(cmd, m.buffer, 0, &value.to_le_bytes()) };
                let mb = [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::TRANSFER_WRITE).dst_access_mask(vk::AccessFlags::MEMORY_READ)];
                unsafe { d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::BOTTOM_OF_PIPE, vk::DependencyFlags::empty(), &mb, &[], &[]) };
            }
        }
        Ok(())
    }

    /// Records the network: token buffer -> head buffer, with this frame's window shifts.
    /// Replays the plan built at creation: no allocation, only pushes, dispatches and barriers.
    pub fn record_network(&mut self, cmd: vk::CommandBuffer) -> Result<()> {
        let cur = self.current.ok_or_else(|| VkError::Size("record_network before record_front".into()))?;
        if let Some(native) = self.native.take() {
            let profile = self.profile;
            native.record(cmd, cur.phase, || {
                if profile {
                    self.timestamp(cmd);
                }
            });
            self.native = Some(native);
            self.timestamp(cmd);
            return Ok(());
        }
        let plan = std::mem::take(&mut self.plan);
        for step in &plan {
            let mut push = step.push;
            if let Some((layer, at)) = step.shift_layer {
                let (sx, sy) = window_shift(layer, cur.phase);
                push.set_u32(at, sx as u32);
                push.set_u32(at + 4, sy as u32);
            }
            self.dispatch_raw(cmd, step.pipeline, &push, step.groups);
            if self.profile_twice {
                self.dispatch_raw(cmd, step.pipeline, &push, step.groups);
            }
            if self.profile && step.profile_label.is_some() {
                self.timestamp(cmd);
            }
        }
        self.plan = plan;
        self.timestamp(cmd);
        Ok(())
    }

    /// Records the back: reconstruction from the head buffer (or fixed controls), the output
    /// and the new history. Ends the frame.
    pub fn record_back(&mut self, cmd: vk::CommandBuffer, controls: Controls) -> Result<()> {
        let cur = self.current.ok_or_else(|| VkError::Size("record_back before record_front".into()))?;
        if self.next_query == 3 {
            // No network was recorded here (fixed controls, or a network in another API): the
            // stage boundaries keep their indices, and "head written" marks the back's start.
            self.timestamp(cmd);
        }
        let (head, fixed) = match controls {
            Controls::Head => (self.head.address, FixedHead::default()),
            Controls::Fixed(f) => (0, f),
            Controls::Classic(p) => return self.record_taau(cmd, cur, p),
        };
        if self.external_network && matches!(controls, Controls::Head) {
            self.transfer(cmd, &self.head, false);
        }
        let push = self
            .back_push(cur)
            .u64(head)
            .u64(self.output_rgba.address)
            .u32(self.grid.padded_w as u32)
            .u32(cur.write)
            .f32(fixed.blend)
            .f32(fixed.sigma)
            .f32(fixed.clamp)
            .u64(self.positions_at(cur.slot))
            .u64(self.context.address);
        let pipeline = if cur.tokens { self.fb.reconstruct_stored } else { self.fb.reconstruct };
        self.dispatch_back(cmd, pipeline, &push);
        if self.external_network && matches!(controls, Controls::Head) {
            self.transfer(cmd, &self.head, true);
        }
        self.current = None;
        self.counter += 1;
        Ok(())
    }

    /// The back of the classical TAAU: output and history (colour, nearness, sample count).
    fn record_taau(&mut self, cmd: vk::CommandBuffer, cur: Current, p: TaauParams) -> Result<()> {
        let push = self
            .back_push(cur)
            .u64(self.output_rgba.address)
            .u64(self.positions_at(cur.slot))
            .u32(cur.write)
            .f32(p.sigma)
            .f32(p.confidence_sigma)
            .f32(p.gamma)
            .f32(p.box_floor)
            .f32(p.cap)
            .f32(p.cap_static)
            .f32(p.keys_a)
            .f32(p.depth_tolerance)
            .f32(p.reactive)
            .f32(p.disagree)
            .f32(p.disagree_floor)
            .f32(p.motion_edge)
            .f32(p.lock_threshold)
            .f32(p.lock_cap)
            .f32(p.lock_decay);
        self.dispatch_back(cmd, self.fb.taau, &push);
        self.current = None;
        self.counter += 1;
        Ok(())
    }

    /// The push constants both backs begin with: the frame's parameters, the prepared inputs,
    /// the history read and written, the history state.
    fn back_push(&self, cur: Current) -> Push {
        Push::new()
            .u64(self.params.address + Self::params_offset(cur.slot))
            .u64(self.prep_c.address)
            .u64(self.prep_m.address)
            .u64(self.history[cur.read as usize].address)
            .u64(self.history[cur.write as usize].address)
            .u64(self.hist_state.address)
    }

    /// A back pass over the output pixels, then the "back done" timestamp.
    fn dispatch_back(&mut self, cmd: vk::CommandBuffer, pipeline: vk::Pipeline, push: &Push) {
        let (ow, oh) = self.output;
        let groups = ((ow as u32).div_ceil(b::WG_PIXELS_X), (oh as u32).div_ceil(b::WG_PIXELS_Y), 1);
        self.dispatch_raw(cmd, pipeline, push, groups);
        self.timestamp(cmd);
    }

    /// Front, network and back in one command buffer.
    pub fn record_frame(&mut self, cmd: vk::CommandBuffer, frame: &FrameInput) -> Result<()> {
        self.record_front(cmd, frame)?;
        self.record_network(cmd)?;
        self.record_back(cmd, Controls::Head)
    }

    /// Bytes per token of the token and head buffers, and their sizes (docs/NETWORK.md §7).
    pub fn token_bytes(&self) -> (u64, u64) {
        let t = self.grid.level_tokens(0) as u64;
        (t * self.model.config.token_channels() as u64 * 2, t * (TOKEN_PIXELS * 8) as u64 * 2)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        unsafe {
            let _ = self.shared.device.device_wait_idle();
            self.shared.device.destroy_query_pool(self.queries, None);
            self.shared.device.destroy_semaphore(self.timeline, None);
        }
    }
}
