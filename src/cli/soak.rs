//! `tessel soak`: many frames through one backend (one Vulkan runner), cycling a handful of
//! generated frames. Host RSS is sampled after frame 100, half-way and at the end (on lavapipe the
//! device memory is host memory, so RSS covers it); it must not grow past two bounds, and every
//! output must stay finite.
//!
//! Two bounds, because a driver's allocator may settle late: lavapipe's worker threads have grown
//! their heap in 1 MiB steps over the first ~2,000 frames (up to about 6 MiB, then flat for good);
//! with the streamed input stage (thirty-fourth session) in three steps, at frames 500, 1,000 and
//! about 7,000 (2.9 MiB, then flat through 30,000).
//! A leak grows without end, so the second half of the run must stay within 1 MiB (a leak of
//! 256 bytes a frame fails at 10,000 frames), and the whole run from frame 100 within 8 MiB.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use serde::Serialize;
use tessel_model::frame::FrameData;
use tessel_model::sequence::Settings;

use crate::cli::backend::{open_backend, Extras};
use crate::cli::common::{find_model, median, progress, NetworkChoice};
use crate::scene::{Scene, SceneKind, SceneSpec};

/// RSS is first sampled after this many frames (allocators and drivers have settled by then).
pub const FIRST_SAMPLE: usize = 100;
/// Frames between read-backs of the output (each is checked for non-finite values).
const OUTPUT_EVERY: usize = 50;
const INPUT_FRAMES: usize = 4;
const TRACE_EVERY: usize = 500;
/// Back-to-back reruns of the last frame after the soak (a GPU backend), after at least a fifth
/// as many unmeasured (and `bench::resident`'s warm-up time).
const RESIDENT_FRAMES: usize = 50;

pub struct SoakOptions {
    pub network: NetworkChoice,
    pub model: Option<PathBuf>,
    pub output: (usize, usize),
    pub ratio: f32,
    pub frames: usize,
    /// Largest RSS growth from frame 100 to the end that passes, KiB.
    pub max_growth_kib: u64,
    /// Largest RSS growth over the second half of the run that passes, KiB.
    pub max_late_growth_kib: u64,
    pub json: Option<PathBuf>,
}

#[derive(Serialize)]
pub struct SoakReport {
    pub backend: String,
    pub label: String,
    pub output: [usize; 2],
    pub render: [usize; 2],
    pub frames: usize,
    pub rss_kib_at_100: u64,
    pub rss_kib_at_half: u64,
    pub rss_kib_at_end: u64,
    /// End minus frame 100.
    pub growth_kib: i64,
    pub max_growth_kib: u64,
    /// End minus half-way.
    pub late_growth_kib: i64,
    pub max_late_growth_kib: u64,
    /// (frame, RSS KiB) every 500 frames.
    pub rss_trace: Vec<(usize, u64)>,
    pub mean_wall_ms: f64,
    /// Median GPU time of the whole frame (timestamps), on a GPU backend.
    pub median_gpu_frame_ms: Option<f64>,
    /// The same after the soak, the last frame run again back to back (RESIDENT_FRAMES, no host
    /// work between them): the GPU at full clocks. The soak's own frames are spaced by the host's
    /// scene upload and can run at lower clocks (BENCHMARKS.md, thirty-fifth session: 5.3 against
    /// 1.1 ms at 4K on the H200).
    pub resident_gpu_frame_ms: Option<f64>,
    pub nonfinite_frames: usize,
    pub pass: bool,
}

/// Resident set size of this process, KiB (/proc/self/status VmRSS).
pub fn rss_kib() -> Result<u64> {
    let s = std::fs::read_to_string("/proc/self/status").context("soak reads /proc/self/status (Linux only)")?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:")).context("/proc/self/status has no VmRSS line")?;
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).with_context(|| format!("/proc/self/status: cannot read '{line}'"))
}

pub fn soak(o: &SoakOptions) -> Result<SoakReport> {
    ensure!(o.frames >= 2 * FIRST_SAMPLE, "--frames {}: must be at least {} (RSS is first sampled after frame {FIRST_SAMPLE})", o.frames, 2 * FIRST_SAMPLE);
    ensure!(o.ratio >= 1.0 && o.ratio <= 4.0, "--ratio {}: must lie in 1..=4", o.ratio);
    let pkg = find_model(o.model.as_deref())?;
    let spec = SceneSpec { kind: SceneKind::Traffic, seed: 5, ratio: o.ratio, frames: INPUT_FRAMES, output: o.output, spp: 16, reset_at: None };
    let render = spec.render_size();
    let scene = Scene::new(spec);
    let inputs: Vec<FrameData> = (0..INPUT_FRAMES).map(|t| scene.inputs(t)).collect();
    let mut be = open_backend(o.network, pkg.as_ref(), &Settings::default(), render, o.output)?;
    eprintln!("tessel: {}", be.label());
    // Filled now, so that writing it later touches no new pages.
    let mut gpu_ms = vec![f64::NAN; o.frames];
    let mut trace = Vec::with_capacity(o.frames / TRACE_EVERY + 2);
    let (mut rss100, mut half, mut wall, mut nonfinite) = (0, 0, 0.0, 0);
    let pb = progress(o.frames, "soak");
    for i in 0..o.frames {
        // The output is read back and checked every OUTPUT_EVERY frames (and on the last); in
        // between it stays on the device, as in a game.
        let check = i % OUTPUT_EVERY == 0 || i + 1 == o.frames;
        be.set_extras(Extras { no_output: !check, ..Default::default() });
        let t0 = Instant::now();
        let r = be.evaluate(&inputs[i % INPUT_FRAMES]).with_context(|| format!("soak frame {i}"))?;
        wall += t0.elapsed().as_secs_f64() * 1e3;
        gpu_ms[i] = r.gpu.as_ref().map_or(f64::NAN, |g| g.frame_ms);
        nonfinite += usize::from(!r.eval.output.iter().all(|v| v.is_finite()));
        drop(r);
        if i + 1 == FIRST_SAMPLE {
            rss100 = rss_kib()?;
        }
        if i + 1 == o.frames / 2 {
            half = rss_kib()?;
        }
        if (i + 1) % TRACE_EVERY == 0 {
            trace.push((i + 1, rss_kib()?));
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let end = rss_kib()?;
    let (growth, late) = (end as i64 - rss100 as i64, end as i64 - half as i64);
    let grew = growth > o.max_growth_kib as i64 || late > o.max_late_growth_kib as i64;
    let gpu: Vec<f64> = gpu_ms.iter().copied().filter(|v| v.is_finite()).collect();
    // After the RSS samples: reruns allocate nothing, but nothing after the end sample can count.
    // Without the output's read-back (the last frame read it back): its host work between reruns
    // would keep the GPU at the clocks of a low duty cycle, which is what this pass sets aside
    // (5.0 ms a frame at 4K on the H200 with it, thirty-sixth session).
    be.set_extras(Extras { no_output: true, ..Default::default() });
    let resident = crate::cli::bench::resident(be.as_mut(), RESIDENT_FRAMES / 5, RESIDENT_FRAMES)?;
    let report = SoakReport {
        backend: be.name().to_string(),
        label: be.label().to_string(),
        output: [o.output.0, o.output.1],
        render: [render.0, render.1],
        frames: o.frames,
        rss_kib_at_100: rss100,
        rss_kib_at_half: half,
        rss_kib_at_end: end,
        growth_kib: growth,
        max_growth_kib: o.max_growth_kib,
        late_growth_kib: late,
        max_late_growth_kib: o.max_late_growth_kib,
        rss_trace: trace,
        mean_wall_ms: wall / o.frames as f64,
        median_gpu_frame_ms: (!gpu.is_empty()).then(|| median(&gpu)),
        resident_gpu_frame_ms: resident.map(|r| r.times.frame_ms.median),
        nonfinite_frames: nonfinite,
        pass: !grew && nonfinite == 0,
    };
    print_report(&report);
    if let Some(p) = &o.json {
        tessel_model::error::write_file_atomic(p, &serde_json::to_vec_pretty(&report)?).with_context(|| format!("writing {}", p.display()))?;
    }
    if grew {
        bail!(
            "soak: RSS grew by {growth} KiB from frame {FIRST_SAMPLE} to frame {} (bound {} KiB), {late} KiB over the second half (bound {} KiB)",
            o.frames,
            o.max_growth_kib,
            o.max_late_growth_kib
        );
    }
    if nonfinite > 0 {
        bail!("soak: {nonfinite} frames had non-finite output values");
    }
    Ok(report)
}

fn print_report(r: &SoakReport) {
    say!("soak: {} frames on {}, {}x{} -> {}x{}", r.frames, r.backend, r.render[0], r.render[1], r.output[0], r.output[1]);
    say!(
        "  RSS {} KiB after frame {FIRST_SAMPLE}, {} KiB after frame {}, {} KiB after frame {}",
        r.rss_kib_at_100,
        r.rss_kib_at_half,
        r.frames / 2,
        r.rss_kib_at_end,
        r.frames
    );
    say!(
        "  growth {:+} KiB since frame {FIRST_SAMPLE} (bound {} KiB), {:+} KiB over the second half (bound {} KiB)",
        r.growth_kib, r.max_growth_kib, r.late_growth_kib, r.max_late_growth_kib
    );
    let gpu = r.median_gpu_frame_ms.map_or(String::new(), |g| format!(", GPU frame median {g:.3} ms"));
    say!("  {:.3} ms/frame wall{gpu}; non-finite frames: {}", r.mean_wall_ms, r.nonfinite_frames);
    if let (Some(spaced), Some(resident)) = (r.median_gpu_frame_ms, r.resident_gpu_frame_ms) {
        let gap = crate::cli::bench::clock_gap(spaced, resident);
        let note = gap.map_or(String::new(), |x| format!(": the soak's frames took {x:.1}x, the GPU's clocks following its duty cycle between the host's frames"));
        say!("  the last frame {RESIDENT_FRAMES} times back to back: GPU frame median {resident:.3} ms{note}");
    }
}
