//! The network on the GPU runtime: weights uploaded once, the kernels of the device's
//! architecture loaded, every buffer allocated at creation, the plan replayed on a non-blocking
//! stream at the device's greatest priority, directly or as one of eight captured graphs (one per
//! window phase). Standalone, it owns its token and head buffers; the split frame will import
//! the Vulkan engine's instead.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use tessel_model::config::{TokenGrid, PHASES};
use tessel_model::package::ModelPackage;

use crate::buffer::{DeviceBuffer, DevicePtr, ExternalMemory};
use crate::error::Result;
use crate::module::{load_model_kernels, Function, Module};
use crate::plan::{build, cache_hints_choice, net_sizes, stream16_choice, Buffers, Launch};
use crate::platform::Context;
use crate::stream::{Event, GraphExec, Stream};

/// Where the token and head buffers live.
pub enum Io {
    /// The network's own (standalone mode: tokens uploaded, head downloaded).
    Own(DeviceBuffer),
    /// The Vulkan engine's, imported from its exported fds (the split frame).
    Imported(ExternalMemory),
}

impl Io {
    pub fn ptr(&self) -> DevicePtr {
        match self {
            Io::Own(b) => b.ptr(),
            Io::Imported(m) => m.ptr(),
        }
    }
    pub fn len(&self) -> usize {
        match self {
            Io::Own(b) => b.len(),
            Io::Imported(m) => m.size() as usize,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct Network {
    pub ctx: Arc<Context>,
    pub stream: Stream,
    _module: Arc<Module>,
    functions: HashMap<String, Function>,
    _weights: DeviceBuffer,
    pub tokens: Io,
    pub head: Io,
    _scratch: Vec<DeviceBuffer>,
    pub grid: TokenGrid,
    plan: Vec<Launch>,
    graphs: Vec<GraphExec>,
    matrix: std::result::Result<tessel_kernels::Matrix, String>,
    /// How many levels store their residual streams in f16 (plan::stream16_choice), or why none.
    stream16: std::result::Result<usize, &'static str>,
    /// The fused blocks' cache hints for the token and head rows (plan::cache_hints_choice), or why not.
    cache_hints: std::result::Result<(), &'static str>,
    /// The fused blocks' weight prefetch (plan::prefetch_choice), or why not.
    prefetch: std::result::Result<(), &'static str>,
    /// The sm_90a blocks' copies in the start-up line's words (plan::copies_choice).
    copies: Option<String>,
    /// Which fused launches take their windows in reverse order (plan::order_choice), or why none does.
    order: std::result::Result<crate::plan::Order, &'static str>,
}

/// How a launch fills the device: its workgroups, how many one multiprocessor holds at once, and
/// the multiprocessors ([`Network::launch_waves`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waves {
    pub workgroups: u32,
    pub per_sm: u32,
    pub sms: u32,
}

impl Waves {
    /// Workgroups over the device's room for them at once: 1.29 is a full wave and a second
    /// one 29 % full, which takes as long as two full ones where every workgroup's time is alike.
    pub fn waves(&self) -> f64 {
        self.workgroups as f64 / (self.per_sm * self.sms).max(1) as f64
    }
}

/// The matrix-core path for a code object's target, or why the portable kernels run:
/// `TESSEL_HIP_MATRIX=0` (the kill switch) or no matrix kernels for the target.
/// `TESSEL_HIP_WMMA=1` asks for the matrix-core linear layers and attention instead (AMD WMMA on gfx11 and
/// gfx12, MFMA on gfx90a and gfx942, emulated on NVIDIA): opt-in until they have run on AMD
/// hardware, and checked at load (`Network::with_io`).
pub fn matrix_choice(target: &str) -> std::result::Result<tessel_kernels::Matrix, String> {
    if std::env::var("TESSEL_HIP_MATRIX").is_ok_and(|v| v == "0") {
        return Err("off: TESSEL_HIP_MATRIX=0".into());
    }
    if std::env::var("TESSEL_HIP_WMMA").is_ok_and(|v| v == "1") {
        return tessel_kernels::wmma_path(target).ok_or_else(|| format!("TESSEL_HIP_WMMA=1, but {target} has no WMMA kernels"));
    }
    tessel_kernels::matrix_path(target).ok_or_else(|| {
        if tessel_kernels::wmma_path(target).is_some() {
            format!("not taken on {target}: its matrix-core kernels have not run on AMD hardware yet (TESSEL_HIP_WMMA=1 takes them)")
        } else {
            format!("none written for {target}")
        }
    })
}

impl Network {
    /// Uploads a package and allocates everything for one output size (standalone buffers).
    pub fn new(ctx: &Arc<Context>, pkg: &ModelPackage, output: (usize, usize)) -> Result<Network> {
        let grid = TokenGrid::new(&pkg.config, output.0, output.1);
        let sz = net_sizes(&pkg.config, &grid);
        let tokens = Io::Own(DeviceBuffer::alloc(ctx, sz.tokens as usize)?);
        let head = Io::Own(DeviceBuffer::alloc(ctx, sz.head as usize)?);
        Self::with_io(ctx, pkg, output, tokens, head)
    }

    /// The same on token and head buffers imported from the Vulkan engine (the split frame).
    /// Their sizes must be at least what the output size needs.
    pub fn with_io(ctx: &Arc<Context>, pkg: &ModelPackage, output: (usize, usize), tokens: Io, head: Io) -> Result<Network> {
        let cfg = &pkg.config;
        let grid = TokenGrid::new(cfg, output.0, output.1);
        let stream = Stream::new(ctx)?;
        let (module, fns, target) = load_model_kernels(ctx, cfg)?;
        let functions: HashMap<String, Function> = fns.into_iter().map(|f| (f.name().to_string(), f)).collect();
        let mut matrix = matrix_choice(target);
        if let Some(m) = matrix.as_ref().ok().copied().filter(|m| !m.fuses_blocks()) {
            // The AMD matrix-core path, not yet run on AMD hardware: checked against the portable
            // kernels before any frame.
            if let Err(why) = crate::wmma_check::check(ctx, &stream, &functions, m.wmma_threads())? {
                matrix = Err(format!("the AMD matrix-core kernels (TESSEL_HIP_WMMA=1) {why}; the portable kernels run"));
            }
        }
        let (blob, offsets) = crate::weights::device_blob(pkg);
        let weights = DeviceBuffer::alloc(ctx, blob.len())?;
        weights.upload_on(&stream, &blob)?;
        let tensors: HashMap<String, u64> = offsets.into_iter().map(|(k, v)| (k, weights.ptr().0 + v)).collect();
        let sz = net_sizes(cfg, &grid);
        for (what, io, need) in [("token buffer", &tokens, sz.tokens), ("head buffer", &head, sz.head)] {
            if (io.len() as u64) < need {
                return Err(crate::error::HipError::Size { what, got: io.len(), capacity: need as usize });
            }
        }
        let mut scratch = Vec::new();
        for bytes in sz.x.iter().chain([sz.qkv, sz.attn, sz.hidden].iter()) {
            scratch.push(DeviceBuffer::alloc(ctx, *bytes as usize)?);
        }
        let l = cfg.levels();
        let bufs = Buffers {
            tokens: tokens.ptr().0,
            head: head.ptr().0,
            x: scratch[..l].iter().map(|b| b.ptr().0).collect(),
            qkv: scratch[l].ptr().0,
            attn: scratch[l + 1].ptr().0,
            hidden: scratch[l + 2].ptr().0,
        };
        let mut plan = build(cfg, &grid, &bufs, &tensors, matrix.as_ref().map_or(crate::plan::Kernels::Portable, |m| (*m).into()));
        let stream16 = stream16_choice(&mut plan, &bufs, cfg, &grid);
        let cache_hints = cache_hints_choice(&mut plan);
        let prefetch = crate::plan::prefetch_choice(&mut plan, weights.ptr().0, weights.len());
        let copies = crate::plan::copies_choice(&mut plan, matrix.as_ref().ok().copied());
        let order = crate::plan::order_choice(&mut plan);
        Ok(Network { ctx: ctx.clone(), stream, _module: module, functions, _weights: weights, tokens, head, _scratch: scratch, grid, plan, graphs: Vec::new(), matrix, stream16, cache_hints, prefetch, copies, order })
    }

    /// Enqueues one launch of the plan for a window phase.
    fn launch_step(&self, l: &Launch, phase: usize) -> Result<()> {
        let mut bytes = l.arg_bytes(phase);
        let mut params = [bytes.as_mut_ptr() as *mut c_void];
        // The argument bytes match the kernel's one struct parameter (plan.rs), and every
        // address in them belongs to buffers this Network owns.
        unsafe { self.functions[l.kernel].launch(&self.stream, l.grid, l.block, 0, &mut params) }
    }

    /// Enqueues the plan for a window phase (no graph).
    pub fn enqueue(&self, phase: usize) -> Result<()> {
        self.plan.iter().try_for_each(|l| self.launch_step(l, phase))
    }

    /// Captures the eight phases into eight immutable graphs (once).
    /// TESSEL_HIP_GRAPHS=0 keeps enqueueing the launches one by one (the kill switch).
    pub fn build_graphs(&mut self) -> Result<()> {
        if std::env::var("TESSEL_HIP_GRAPHS").is_ok_and(|v| v == "0") {
            return Ok(());
        }
        if self.graphs.is_empty() {
            for phase in 0..PHASES {
                let g = self.stream.capture(|_| self.enqueue(phase))?;
                self.graphs.push(g);
            }
        }
        Ok(())
    }

    /// Launches the graph of a phase (after `build_graphs`), else enqueues the plan.
    pub fn launch(&self, phase: usize) -> Result<()> {
        match self.graphs.get(phase % PHASES) {
            Some(g) => g.launch(&self.stream),
            None => self.enqueue(phase),
        }
    }

    /// Standalone evaluation: token buffer (f16 bytes) in, head buffer (f16 bytes) out.
    pub fn evaluate(&self, tokens: &[u8], phase: usize, head: &mut [u8]) -> Result<()> {
        let (Io::Own(t), Io::Own(h)) = (&self.tokens, &self.head) else {
            return Err(crate::error::HipError::Size { what: "standalone evaluation (the buffers are imported)", got: 0, capacity: 0 });
        };
        t.upload_on(&self.stream, tokens)?;
        self.launch(phase)?;
        h.download_on(&self.stream, head)
    }

    /// GPU milliseconds of `frames` launches after `warmup`, each between two events: the
    /// per-frame times.
    pub fn time(&self, warmup: usize, frames: usize) -> Result<Vec<f32>> {
        let (a, b) = (Event::new(&self.ctx)?, Event::new(&self.ctx)?);
        for i in 0..warmup {
            self.launch(i)?;
        }
        let mut out = Vec::with_capacity(frames);
        for i in 0..frames {
            a.record(&self.stream)?;
            self.launch(i)?;
            b.record(&self.stream)?;
            b.synchronize()?;
            out.push(Event::elapsed_ms(&a, &b)?);
        }
        Ok(out)
    }

    /// GPU milliseconds of each launch (events around each, launched directly), the median over
    /// `frames` evaluations after one warm-up: (label, kernel, ms, what it must move and compute)
    /// in plan order.
    /// With TESSEL_PROFILE_TWICE=1 (a diagnostic), each launch is made twice in a row inside its
    /// events: twice the plain time less this one's is what a launch loses to being the first of
    /// its kernel in a while (its results are not the network's).
    pub fn profile(&self, frames: usize) -> Result<Vec<(String, &'static str, f32, crate::plan::Cost)>> {
        let twice = std::env::var("TESSEL_PROFILE_TWICE").is_ok_and(|v| v == "1");
        if twice {
            eprintln!("tessel: TESSEL_PROFILE_TWICE=1: each launch of the native network's profile runs twice in a row");
        }
        let events = (0..=self.plan.len()).map(|_| Event::new(&self.ctx)).collect::<Result<Vec<_>>>()?;
        let mut times = vec![Vec::with_capacity(frames); self.plan.len()];
        for f in 0..=frames {
            events[0].record(&self.stream)?;
            for (i, l) in self.plan.iter().enumerate() {
                self.launch_step(l, f)?;
                if twice {
                    self.launch_step(l, f)?;
                }
                events[i + 1].record(&self.stream)?;
            }
            events[self.plan.len()].synchronize()?;
            if f > 0 {
                for (i, t) in times.iter_mut().enumerate() {
                    t.push(Event::elapsed_ms(&events[i], &events[i + 1])?);
                }
            }
        }
        Ok(self
            .plan
            .iter()
            .zip(times)
            .map(|(l, mut t)| {
                t.sort_by(|a, b| a.total_cmp(b));
                (l.label.clone(), l.kernel, t[t.len() / 2], l.cost)
            })
            .collect())
    }

    /// Whether frames launch captured graphs (else the plan is enqueued launch by launch).
    pub fn uses_graphs(&self) -> bool {
        !self.graphs.is_empty()
    }

    pub fn launches(&self) -> usize {
        self.plan.len()
    }

    /// The matrix-core path in use, or why the portable kernels run.
    pub fn matrix(&self) -> std::result::Result<tessel_kernels::Matrix, &str> {
        self.matrix.as_ref().copied().map_err(|s| s.as_str())
    }

    /// Whether a decoder level's first block pulls the expansion of the level above (plan.rs's
    /// `BlockIn::Pull`; `TESSEL_HIP_PULL=0` keeps the expansions in the level above's last block).
    pub fn pulls(&self) -> bool {
        crate::plan::pulls(&self.plan)
    }

    /// How many levels, from level 0, store their residual streams in f16, or why none.
    pub fn stream16(&self) -> std::result::Result<usize, &'static str> {
        self.stream16
    }

    /// Whether the fused blocks read the token rows and store the head with cache hints, or why not.
    pub fn cache_hints(&self) -> std::result::Result<(), &'static str> {
        self.cache_hints
    }

    /// Which fused launches take their windows in reverse order, or why none does.
    pub fn order(&self) -> std::result::Result<crate::plan::Order, &'static str> {
        self.order
    }

    /// Whether the fused blocks prefetch the weights into L2 a launch ahead, or why not.
    pub fn prefetch(&self) -> std::result::Result<(), &'static str> {
        self.prefetch
    }

    /// How the sm_90a fused blocks copy their weights and write their stream (plan::copies_choice),
    /// in the start-up line's words; None where the kernels are not sm_90a's.
    pub fn copies(&self) -> Option<&str> {
        self.copies.as_deref()
    }

    /// Per launch of the plan: its workgroups, how many of them one multiprocessor holds at once
    /// and the device's multiprocessors (CUDA driver; None on HIP): how many waves a launch takes.
    pub fn launch_waves(&self) -> Result<Vec<Option<Waves>>> {
        let Some(sms) = self.ctx.multiprocessors()? else { return Ok(vec![None; self.plan.len()]) };
        let mut out = Vec::new();
        for l in &self.plan {
            let per_sm = self.functions[l.kernel].workgroups_per_sm(l.block.0 * l.block.1 * l.block.2)?;
            out.push(per_sm.map(|per_sm| Waves { workgroups: l.grid.0 * l.grid.1 * l.grid.2, per_sm, sms }));
        }
        Ok(out)
    }

    /// One line per kernel the plan launches: registers and local (spill) bytes per thread
    /// from the CUDA driver's JIT (None on HIP: the code object's figures are static).
    pub fn jit_report(&self) -> Result<Vec<(String, i32, i32)>> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for l in &self.plan {
            if seen.insert(l.kernel) {
                if let Some((regs, local)) = self.functions[l.kernel].jit_resources()? {
                    out.push((l.kernel.to_string(), regs, local));
                }
            }
        }
        Ok(out)
    }
}
