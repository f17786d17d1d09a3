//! A host-side driver of one Engine, for the CLI, the checks and the tests: it uploads a frame,
//! records and submits it, waits, and reads back the output (and, when asked, the token, head
//! and history buffers) with the GPU's own timestamps. A game drives the Engine directly.

use std::sync::Arc;

use ash::vk;
use half::f16;
use tessel_model::frame::FrameData;
use tessel_model::pipeline::{Evaluation, StageTimes};
use tessel_model::sequence::Settings;

use crate::device::DeviceShared;
use crate::engine::{Controls, Engine, FrameInput, QUERIES_PER_FRAME, STAGE_QUERIES};
use crate::error::{Check, Result, VkError};
use crate::memory::{Buffer, Location};
use crate::model::Model;
use crate::params::{FRAME_PARAMS_BYTES, OFFSET_EXPOSURE, OFFSET_SANITIZED};

/// A network that runs in another API between the front and the back (hip-net), on the engine's
/// exported token and head buffers: it enqueues, on its own queue, a wait until the engine's
/// timeline reaches `wait`, the network of `phase`, and a signal of `signal`.
pub trait ExternalNetwork {
    fn enqueue(&mut self, phase: usize, wait: u64, signal: u64) -> std::result::Result<(), String>;
    /// Whether the front's submission signals `wait` on the timeline (false when the network
    /// learns of the front some other way and the host signals the back's value: a queue signal
    /// arriving after it would move the timeline backwards).
    fn front_signals(&self) -> bool {
        true
    }
    /// GPU milliseconds of the network itself in the frame just finished (its own events), when
    /// it measures them.
    fn network_ms(&mut self) -> Option<f64> {
        None
    }
}

/// Which device buffers to read back after each frame (the output always).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadBack {
    pub tokens: bool,
    pub head: bool,
    pub history: bool,
}

/// GPU time of one frame from timestamps, milliseconds.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct GpuTimes {
    pub prepare_ms: f64,
    pub input_ms: f64,
    pub network_ms: f64,
    pub reconstruct_ms: f64,
    pub frame_ms: f64,
    /// Per network layer (TESSEL_PROFILE=1): label and milliseconds since the previous point.
    pub layers: Vec<(String, f64)>,
    /// Per network layer (TESSEL_PROFILE=1): bytes moved and FLOPs, at the least.
    pub layer_costs: Vec<(u64, u64)>,
    /// With an external network: its own GPU time (`network_ms` is then the time from the
    /// token buffer written to the back's start, handoffs included).
    pub external_network_ms: Option<f64>,
}

pub struct Runner {
    pub engine: Engine,
    shared: Arc<DeviceShared>,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    /// The back's command buffer in a split frame.
    cmd_back: vk::CommandBuffer,
    fence: vk::Fence,
    upload: Buffer,
    readback: Buffer,
    pub settings: Settings,
    pub read: ReadBack,
    /// Read the output image back (on by default; a benchmark may turn it off: the Evaluation's
    /// output is then empty).
    pub read_output: bool,
    /// Submit the front and the rest as two submissions joined by the engine's timeline
    /// semaphore (the split frame an external network runs inside); results are identical.
    pub split: bool,
    /// The network in another API (implies `split`; the engine must be exportable and
    /// `external_network` set).
    pub external: Option<Box<dyn ExternalNetwork>>,
    pub controls: Controls,
    last_history: Vec<f32>,
    /// The last evaluated frame's values (for `rerun`).
    last_input: Option<FrameInput>,
}

/// Offsets inside the read-back buffer.
struct Layout {
    output: u64,
    tokens: u64,
    head: u64,
    history: u64,
    params: u64,
    end: u64,
}

impl Runner {
    pub fn new(model: &Arc<Model>, settings: Settings, capacity: (usize, usize), output: (usize, usize)) -> Result<Runner> {
        Self::with_engine(Engine::new(model, capacity, output, false)?, settings)
    }

    /// A runner around an engine made by the caller (e.g. with exportable token and head buffers).
    pub fn with_engine(engine: Engine, settings: Settings) -> Result<Runner> {
        let shared = engine.model.shared.clone();
        let capacity = engine.capacity;
        let rpix = (capacity.0 * capacity.1) as u64;
        let upload = Buffer::new(&shared, "upload", rpix * (16 + 8 + 4), Location::Host, false)?;
        let lay = Self::layout(&engine);
        let readback = Buffer::new(&shared, "read-back", lay.end, Location::HostRead, false)?;
        let d = &shared.device;
        let pool = unsafe {
            d.create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(shared.queue_family).flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .call("vkCreateCommandPool")?;
        let cmds = unsafe { d.allocate_command_buffers(&vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(2)) }
            .call("vkAllocateCommandBuffers")?;
        let (cmd, cmd_back) = (cmds[0], cmds[1]);
        let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }.call("vkCreateFence")?;
        Ok(Runner {
            engine,
            shared,
            pool,
            cmd,
            cmd_back,
            fence,
            split: false,
            external: None,
            upload,
            readback,
            settings,
            read: ReadBack::default(),
            read_output: true,
            controls: Controls::Head,
            last_input: None,
            last_history: Vec::new(),
        })
    }

    fn layout(e: &Engine) -> Layout {
        let opix = (e.output.0 * e.output.1) as u64;
        let (tb, hb) = e.token_bytes();
        let output = 0;
        let tokens = output + opix * 16;
        let head = tokens + tb;
        let history = head + hb;
        let params = history + opix * 16;
        Layout { output, tokens, head, history, params, end: params + FRAME_PARAMS_BYTES }
    }

    fn check_frame(&self, f: &FrameData) -> Result<()> {
        let (rw, rh) = f.render;
        let (cw, ch) = self.engine.capacity;
        if rw == 0 || rh == 0 || rw > cw || rh > ch {
            return Err(VkError::Size(format!("frame render size {rw}x{rh} is outside the engine's capacity {cw}x{ch}")));
        }
        f.check_planes().map_err(VkError::Size)
    }

    /// Copies a frame's planes into the upload buffer (the next `run` copies them to the device).
    pub fn upload(&mut self, f: &FrameData) -> Result<()> {
        self.check_frame(f)?;
        let n = f.render.0 * f.render.1;
        let bytes = self.upload.bytes_mut();
        bytes[..n * 16].copy_from_slice(bytemuck::cast_slice(&f.color));
        bytes[n * 16..n * 24].copy_from_slice(bytemuck::cast_slice(&f.motion));
        bytes[n * 24..n * 28].copy_from_slice(bytemuck::cast_slice(&f.depth));
        Ok(())
    }

    fn frame_input(&self, f: &FrameData) -> FrameInput {
        FrameInput {
            render: f.render,
            jitter: f.jitter,
            reset: f.reset,
            exposure: self.settings.exposure,
            motion_units: self.settings.motion_units,
            depth_inverted: self.settings.depth_inverted,
        }
    }

    /// Uploads, runs and reads back one frame.
    pub fn evaluate(&mut self, f: &FrameData) -> Result<(Evaluation, GpuTimes)> {
        self.upload(f)?;
        let input = self.frame_input(f);
        self.last_input = Some(input);
        let jitter_fixed = f.jitter.iter().filter(|j| !j.is_finite()).count();
        let (mut ev, t) = self.run(&input)?;
        ev.sanitized += jitter_fixed;
        Ok((ev, t))
    }

    /// Runs the last evaluated frame again on the inputs already in the engine: no host copy,
    /// no upload copy, no reset. Back to back, these keep the GPU busy between frames (a
    /// benchmark of the GPU's own time that no host work dilutes).
    pub fn rerun(&mut self) -> Result<(Evaluation, GpuTimes)> {
        let mut input = self.last_input.ok_or_else(|| VkError::Size("rerun before any frame was evaluated".into()))?;
        input.reset = false;
        self.run_frame(&input, false)
    }

    /// Records, submits and waits for one frame whose planes are in the upload buffer.
    pub fn run(&mut self, input: &FrameInput) -> Result<(Evaluation, GpuTimes)> {
        self.run_frame(input, true)
    }

    /// `run`, copying the upload buffer to the engine's inputs first where `upload` says so.
    fn run_frame(&mut self, input: &FrameInput, upload: bool) -> Result<(Evaluation, GpuTimes)> {
        let d = self.shared.device.clone();
        let cmd = self.cmd;
        let n = (input.render.0 * input.render.1) as u64;
        let lay = Self::layout(&self.engine);
        let phase = tessel_model::shifts::phase_of(self.engine.counter);
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()).call("vkResetCommandBuffer")?;
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))
                .call("vkBeginCommandBuffer")?;
            let e = &self.engine;
            if upload {
                let up = self.upload.buffer;
                d.cmd_copy_buffer(cmd, up, e.color.buffer, &[vk::BufferCopy::default().src_offset(0).size(n * 16)]);
                d.cmd_copy_buffer(cmd, up, e.motion.buffer, &[vk::BufferCopy::default().src_offset(n * 16).size(n * 8)]);
                d.cmd_copy_buffer(cmd, up, e.depth.buffer, &[vk::BufferCopy::default().src_offset(n * 24).size(n * 4)]);
            }
            e.barrier(cmd);
        }
        let e = &mut self.engine;
        let next = e.next_frame();
        let (slot, hist_write) = (next.slot, next.history_write as usize);
        // Frame N: the front signals 2N+1; the back waits for 2N+1, or for 2N+2, which the
        // external network signals after its own wait for 2N+1.
        let front_value = 2 * e.counter + 1;
        let back_wait = if self.external.is_some() { front_value + 1 } else { front_value };
        e.record_front_with(cmd, input, self.controls.needs_network())?;
        let split = self.split || self.external.is_some();
        let cmd = if split {
            let back = self.cmd_back;
            unsafe {
                d.end_command_buffer(cmd).call("vkEndCommandBuffer")?;
                let sems = [e.timeline];
                let vals = [front_value];
                let mut tl = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&vals);
                let cmds = [cmd];
                let mut submit = vk::SubmitInfo::default().command_buffers(&cmds);
                if self.external.as_ref().map_or(true, |x| x.front_signals()) {
                    submit = submit.signal_semaphores(&sems).push_next(&mut tl);
                }
                d.queue_submit(self.shared.queue, &[submit], vk::Fence::null()).call("vkQueueSubmit (front)")?;
                if let Some(x) = self.external.as_mut() {
                    x.enqueue(phase, front_value, front_value + 1).map_err(VkError::External)?;
                }
                d.reset_command_buffer(back, vk::CommandBufferResetFlags::empty()).call("vkResetCommandBuffer")?;
                d.begin_command_buffer(back, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))
                    .call("vkBeginCommandBuffer")?;
            }
            back
        } else {
            cmd
        };
        if matches!(self.controls, Controls::Head) && self.external.is_none() {
            e.record_network(cmd)?;
        }
        e.record_back(cmd, self.controls)?;
        let queries = e.queries_written();
        unsafe {
            let rb = self.readback.buffer;
            let (ow, oh) = e.output;
            let opix = (ow * oh) as u64;
            let (tb, hb) = e.token_bytes();
            if self.read_output {
                d.cmd_copy_buffer(cmd, e.output_rgba.buffer, rb, &[vk::BufferCopy::default().dst_offset(lay.output).size(opix * 16)]);
            }
            if self.read.tokens {
                d.cmd_copy_buffer(cmd, e.tokens.buffer, rb, &[vk::BufferCopy::default().dst_offset(lay.tokens).size(tb)]);
            }
            if self.read.head {
                d.cmd_copy_buffer(cmd, e.head.buffer, rb, &[vk::BufferCopy::default().dst_offset(lay.head).size(hb)]);
            }
            if self.read.history {
                d.cmd_copy_buffer(cmd, e.history[hist_write].buffer, rb, &[vk::BufferCopy::default().dst_offset(lay.history).size(opix * 16)]);
            }
            d.cmd_copy_buffer(
                cmd,
                e.params.buffer,
                rb,
                &[vk::BufferCopy::default().src_offset(Engine::params_offset(slot)).dst_offset(lay.params).size(FRAME_PARAMS_BYTES)],
            );
            let m = [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::TRANSFER_WRITE).dst_access_mask(vk::AccessFlags::HOST_READ)];
            d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST, vk::DependencyFlags::empty(), &m, &[], &[]);
            d.end_command_buffer(cmd).call("vkEndCommandBuffer")?;
            let cmds = [cmd];
            let sems = [e.timeline];
            let vals = [back_wait];
            let stages = [vk::PipelineStageFlags::COMPUTE_SHADER];
            let mut tl = vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&vals);
            let mut submit = vk::SubmitInfo::default().command_buffers(&cmds);
            if split {
                submit = submit.wait_semaphores(&sems).wait_dst_stage_mask(&stages).push_next(&mut tl);
            }
            d.queue_submit(self.shared.queue, &[submit], self.fence).call("vkQueueSubmit")?;
            d.wait_for_fences(&[self.fence], true, u64::MAX).call("vkWaitForFences")?;
            d.reset_fences(&[self.fence]).call("vkResetFences")?;
        }
        let mut times = self.read_times(slot, queries)?;
        times.external_network_ms = self.external.as_mut().and_then(|x| x.network_ms());
        let rb = self.readback.bytes();
        let (ow, oh) = self.engine.output;
        let f32s = |off: u64, count: usize| -> Vec<f32> { bytemuck::cast_slice::<u8, f32>(&rb[off as usize..off as usize + count * 4]).to_vec() };
        let f16s = |off: u64, count: usize| -> Vec<f32> {
            rb[off as usize..off as usize + count * 2].chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect()
        };
        let output = if self.read_output { f32s(lay.output, ow * oh * 4) } else { Vec::new() };
        let (tb, hb) = self.engine.token_bytes();
        let tokens = if self.read.tokens { f16s(lay.tokens, tb as usize / 2) } else { Vec::new() };
        let head = if self.read.head { f16s(lay.head, hb as usize / 2) } else { Vec::new() };
        if self.read.history {
            self.last_history = f16s(lay.history, ow * oh * 8);
        }
        let p = &rb[lay.params as usize..];
        let exposure = f32::from_le_bytes(p[OFFSET_EXPOSURE..OFFSET_EXPOSURE + 4].try_into().unwrap());
        let sanitized = u32::from_le_bytes(p[OFFSET_SANITIZED..OFFSET_SANITIZED + 4].try_into().unwrap()) as usize;
        let st = StageTimes { prepare_ms: times.prepare_ms, input_ms: times.input_ms, network_ms: times.network_ms, reconstruct_ms: times.reconstruct_ms };
        Ok((Evaluation { output, times: st, exposure, sanitized, tokens, head, phase }, times))
    }

    fn read_times(&self, slot: u32, written: u32) -> Result<GpuTimes> {
        let caps = &self.shared.caps;
        if !caps.timestamps || written < STAGE_QUERIES {
            return Ok(GpuTimes::default());
        }
        let mut raw = vec![0u64; written as usize];
        unsafe {
            self.shared.device.get_query_pool_results(self.engine.queries, slot * QUERIES_PER_FRAME, &mut raw, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT)
        }
        .call("vkGetQueryPoolResults")?;
        let ms = |a: u64, b: u64| (b.wrapping_sub(a)) as f64 * caps.timestamp_period_ns as f64 * 1e-6;
        let k = raw.len();
        let labels = self.engine.timestamp_labels();
        let mut layers = Vec::new();
        if self.engine.profile && labels.len() == k {
            for i in 3..k - 2 {
                layers.push((labels[i].clone(), ms(raw[i - 1], raw[i])));
            }
        }
        Ok(GpuTimes {
            prepare_ms: ms(raw[0], raw[1]),
            input_ms: ms(raw[1], raw[2]),
            network_ms: ms(raw[2], raw[k - 2]),
            reconstruct_ms: ms(raw[k - 2], raw[k - 1]),
            frame_ms: ms(raw[0], raw[k - 1]),
            layer_costs: if layers.is_empty() { Vec::new() } else { self.engine.layer_costs().iter().map(|c| (c.bytes, c.flops)).collect() },
            layers,
            external_network_ms: None,
        })
    }

    /// History colour (tonemapped RGB, f16 values) written by the last frame, when
    /// `read.history` was on.
    pub fn history_rgb(&self) -> Vec<f32> {
        self.history_channels(&[0, 1, 2])
    }

    /// Channels of the last frame's history record (0-2 colour, 3 nearness, 4-5 memory).
    pub fn history_channels(&self, ch: &[usize]) -> Vec<f32> {
        self.last_history.chunks_exact(8).flat_map(|p| ch.iter().map(|&c| p[c]).collect::<Vec<_>>()).collect()
    }

    pub fn device(&self) -> &DeviceShared {
        &self.shared
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        unsafe {
            let d = &self.shared.device;
            let _ = d.device_wait_idle();
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}
