//! `tessel bench`: per-stage time of one or more backends on the same generated frames. GPU
//! backends: GPU timestamps, median and p99 after a warm-up; the CPU ones: wall time.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use serde::Serialize;
use tessel_model::frame::FrameData;
use tessel_model::sequence::Settings;

use crate::cli::backend::{open_backend, Backend};
use crate::cli::common::{find_model, median, progress, NetworkChoice, Spread};
use crate::scene::{Scene, SceneKind, SceneSpec};

/// Distinct generated frames the runs cycle through.
const INPUT_FRAMES: usize = 4;

pub struct BenchOptions {
    pub networks: Vec<NetworkChoice>,
    pub model: Option<PathBuf>,
    pub output: (usize, usize),
    pub ratio: f32,
    /// Timed frames of a GPU backend, after `warmup`.
    pub frames: usize,
    /// Timed frames of a CPU backend, after one warm-up frame.
    pub cpu_frames: usize,
    pub warmup: usize,
    pub json: Option<PathBuf>,
}

#[derive(Serialize)]
pub struct BackendBench {
    pub backend: String,
    pub label: String,
    /// "gpu timestamps" or "cpu wall time": what the stage and frame times are.
    pub timing: &'static str,
    pub warmup: usize,
    pub frames: usize,
    #[serde(flatten)]
    pub times: StageSpreads,
    /// Host wall time per frame: upload, submit, wait, read back (GPU) or the whole evaluation.
    pub wall_ms: Spread,
    /// A network in another API (hip): its own GPU time (events on its stream), and the
    /// handoffs: the Vulkan side's tokens-to-head time less that, both ways together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_network_ms: Option<Spread>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff_ms: Option<Spread>,
    /// Network FLOPs per frame / median network time (None without a network).
    pub network_tflops: Option<f64>,
    /// Per-layer median GPU milliseconds with the bytes and FLOPs each must move and compute
    /// at the least (TESSEL_PROFILE=1).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerBench>,
    /// A GPU backend's frames run back to back on inputs already on the device (no host upload
    /// between frames, so the GPU does not idle): the frame's and every stage's GPU time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident: Option<ResidentBench>,
}

/// Median and p99 of the frame and of each stage, ms.
#[derive(Serialize)]
pub struct StageSpreads {
    pub frame_ms: Spread,
    pub prepare_ms: Spread,
    pub input_ms: Spread,
    pub network_ms: Spread,
    pub reconstruct_ms: Spread,
}

/// One frame's time and its stages' (prepare, input, network, reconstruct), ms.
type FrameRow = (f64, [f64; 4]);

impl StageSpreads {
    /// From each frame's time and its stages' (prepare, input, network, reconstruct).
    fn of(rows: &[FrameRow]) -> StageSpreads {
        let col = |f: &dyn Fn(&FrameRow) -> f64| Spread::of(&rows.iter().map(f).collect::<Vec<_>>());
        StageSpreads {
            frame_ms: col(&|r| r.0),
            prepare_ms: col(&|r| r.1[0]),
            input_ms: col(&|r| r.1[1]),
            network_ms: col(&|r| r.1[2]),
            reconstruct_ms: col(&|r| r.1[3]),
        }
    }
}

#[derive(Serialize)]
pub struct ResidentBench {
    pub frames: usize,
    #[serde(flatten)]
    pub times: StageSpreads,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_network_ms: Option<Spread>,
}

#[derive(Serialize)]
pub struct LayerBench {
    pub name: String,
    pub ms: f64,
    pub bytes: u64,
    pub flops: u64,
    /// bytes / ms and FLOPs / ms, in GB/s and TFLOP/s.
    pub gbps: f64,
    pub tflops: f64,
}

#[derive(Serialize)]
pub struct BenchReport {
    pub output: [usize; 2],
    pub render: [usize; 2],
    pub ratio: f32,
    pub model: Option<String>,
    /// FLOPs of the network stage per frame: NetworkConfig::flops().total() minus the input part
    /// (the pixel embed runs in the input stage).
    pub network_flops: Option<u64>,
    pub backends: Vec<BackendBench>,
}

/// One timed frame.
struct Sample {
    frame: f64,
    stages: [f64; 4],
    wall: f64,
    layers: Vec<(String, f64)>,
    costs: Vec<(u64, u64)>,
    native: Option<f64>,
}

pub fn bench(o: &BenchOptions) -> Result<BenchReport> {
    ensure!(o.ratio >= 1.0 && o.ratio <= 4.0, "--ratio {}: must lie in 1..=4", o.ratio);
    ensure!(o.frames >= 1 && o.cpu_frames >= 1, "--frames and --cpu-frames must be at least 1");
    ensure!(!o.networks.is_empty(), "--network: name at least one backend");
    let pkg = find_model(o.model.as_deref())?;
    let spec = SceneSpec { kind: SceneKind::Mixed, seed: 1, ratio: o.ratio, frames: INPUT_FRAMES, output: o.output, spp: 16, reset_at: None };
    let render = spec.render_size();
    let scene = Scene::new(spec);
    let inputs: Vec<FrameData> = (0..INPUT_FRAMES).map(|t| scene.inputs(t)).collect();
    let network_flops = pkg.as_ref().map(|p| {
        let f = p.config.flops(o.output.0, o.output.1);
        (f.total() - f.input) as u64
    });
    let mut backends = Vec::new();
    for &choice in &o.networks {
        let mut b = open_backend(choice, pkg.as_ref(), &Settings::default(), render, o.output)?;
        b.set_extras(crate::cli::backend::Extras { no_output: true, ..Default::default() });
        eprintln!("tessel: {}", b.label());
        backends.push(run_one(b.as_mut(), &inputs, o, network_flops)?);
    }
    let report = BenchReport {
        output: [o.output.0, o.output.1],
        render: [render.0, render.1],
        ratio: o.ratio,
        model: pkg.as_ref().map(|p| p.name.clone()),
        network_flops,
        backends,
    };
    print_report(&report);
    if let Some(p) = &o.json {
        tessel_model::error::write_file_atomic(p, &serde_json::to_vec_pretty(&report)?).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(report)
}

fn run_one(b: &mut dyn Backend, inputs: &[FrameData], o: &BenchOptions, flops: Option<u64>) -> Result<BackendBench> {
    let gpu = b.on_gpu();
    let (warmup, frames) = if gpu { (o.warmup, o.frames) } else { (o.warmup.min(1), o.cpu_frames) };
    let pb = progress(warmup + frames, b.name());
    let mut samples = Vec::with_capacity(frames);
    for i in 0..warmup + frames {
        let t0 = Instant::now();
        let r = b.evaluate(&inputs[i % inputs.len()]).with_context(|| format!("{}: frame {i}", b.name()))?;
        let wall = t0.elapsed().as_secs_f64() * 1e3;
        let t = r.eval.times;
        if i >= warmup {
            let (frame, layers, costs, native) = match r.gpu {
                Some(g) => (g.frame_ms, g.layers, g.layer_costs, g.external_network_ms),
                None => (t.total_ms(), Vec::new(), Vec::new(), None),
            };
            samples.push(Sample { frame, stages: [t.prepare_ms, t.input_ms, t.network_ms, t.reconstruct_ms], wall, layers, costs, native });
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let col = |f: &dyn Fn(&Sample) -> f64| Spread::of(&samples.iter().map(f).collect::<Vec<_>>());
    let times = StageSpreads::of(&samples.iter().map(|s| (s.frame, s.stages)).collect::<Vec<_>>());
    let native: Vec<&Sample> = samples.iter().filter(|s| s.native.is_some()).collect();
    let (native_network_ms, handoff_ms) = if native.len() == samples.len() && !native.is_empty() {
        let own: Vec<f64> = native.iter().map(|s| s.native.unwrap_or(0.0)).collect();
        let hand: Vec<f64> = native.iter().map(|s| s.stages[2] - s.native.unwrap_or(0.0)).collect();
        (Some(Spread::of(&own)), Some(Spread::of(&hand)))
    } else {
        (None, None)
    };
    // The network's own time where the backend measures it (hip), else the stage's.
    let own = native_network_ms.as_ref().map_or(times.network_ms.median, |s| s.median);
    let network_tflops = flops.filter(|_| b.model().is_some() && own > 0.0).map(|f| f as f64 / (own * 1e-3) / 1e12);
    Ok(BackendBench {
        backend: b.name().to_string(),
        label: b.label().to_string(),
        timing: if gpu { "gpu timestamps" } else { "cpu wall time" },
        warmup,
        frames,
        times,
        wall_ms: col(&|s| s.wall),
        native_network_ms,
        handoff_ms,
        network_tflops,
        layers: layer_medians(&samples),
        resident: if gpu { resident(b, warmup, frames)? } else { None },
    })
}

/// Back-to-back reruns before the resident pass times any: at least this long, so that a GPU
/// that idled between spaced frames has raised its clocks. A margin, not a measured need: the
/// soak's slow reruns of the thirty-sixth session (5.0 ms at 4K on the H200, 1.06 without) came
/// from the output's read-back between them, not from too short a warm-up.
const RESIDENT_WARMUP: std::time::Duration = std::time::Duration::from_secs(1);

/// The resident pass of a GPU backend: back-to-back reruns of the last frame, at least `warmup`
/// of them and [`RESIDENT_WARMUP`] untimed, then `frames` timed (None where the backend has none).
pub(crate) fn resident(b: &mut dyn Backend, warmup: usize, frames: usize) -> Result<Option<ResidentBench>> {
    let mut times = Vec::with_capacity(frames);
    let start = Instant::now();
    let mut warm = 0;
    while warm < warmup || start.elapsed() < RESIDENT_WARMUP {
        if b.rerun().with_context(|| format!("{}: resident warm-up frame {warm}", b.name()))?.is_none() {
            return Ok(None);
        }
        warm += 1;
    }
    for i in 0..frames {
        let Some(g) = b.rerun().with_context(|| format!("{}: resident frame {i}", b.name()))? else { return Ok(None) };
        times.push(g);
    }
    let native = times.iter().map(|g| g.external_network_ms).collect::<Option<Vec<f64>>>().map(|v| Spread::of(&v));
    let rows: Vec<(f64, [f64; 4])> = times.iter().map(|g| (g.frame_ms, [g.prepare_ms, g.input_ms, g.network_ms, g.reconstruct_ms])).collect();
    Ok(Some(ResidentBench { frames, times: StageSpreads::of(&rows), native_network_ms: native }))
}

/// How many times slower the spaced frames were than the back-to-back ones, where that is more
/// than 1.2x: more than run-to-run noise, the sign of a GPU that lowered its clocks while the
/// host worked between frames.
pub(crate) fn clock_gap(spaced_ms: f64, resident_ms: f64) -> Option<f64> {
    let ratio = spaced_ms / resident_ms;
    (resident_ms > 0.0 && ratio > 1.2).then_some(ratio)
}

/// Median per layer label, in the order of the first frame, with each layer's cost.
fn layer_medians(samples: &[Sample]) -> Vec<LayerBench> {
    let Some(first) = samples.first() else { return Vec::new() };
    (0..first.layers.len())
        .map(|k| {
            let v: Vec<f64> = samples.iter().filter_map(|s| s.layers.get(k).map(|l| l.1)).collect();
            let ms = median(&v);
            let (bytes, flops) = first.costs.get(k).copied().unwrap_or((0, 0));
            LayerBench { name: first.layers[k].0.clone(), ms, bytes, flops, gbps: bytes as f64 / ms / 1e6, tflops: flops as f64 / ms / 1e9 }
        })
        .collect()
}

fn print_report(r: &BenchReport) {
    let flops = r.network_flops.map_or("no model".to_string(), |f| format!("network {:.3} GFLOP/frame (all but the input stage)", f as f64 / 1e9));
    say!(
        "bench: {}x{} -> {}x{} ({}x), model {}, {flops}",
        r.render[0],
        r.render[1],
        r.output[0],
        r.output[1],
        r.ratio,
        r.model.as_deref().unwrap_or("none")
    );
    say!("ms, median / p99 over the timed frames (gpu: GPU timestamps; cpu: wall time)");
    say!(
        "{:<8} {:>6} {:>6} {:>17} {:>17} {:>17} {:>17} {:>17} {:>17} {:>8}",
        "backend", "frames", "timing", "frame", "prepare", "input", "network", "reconstruct", "wall", "TFLOP/s"
    );
    let mp = |s: &Spread| format!("{:>8.3}/{:<8.3}", s.median, s.p99);
    for b in &r.backends {
        say!(
            "{:<8} {:>6} {:>6} {:>17} {:>17} {:>17} {:>17} {:>17} {:>17} {:>8}",
            b.backend,
            b.frames,
            if b.timing.starts_with("gpu") { "gpu" } else { "cpu" },
            mp(&b.times.frame_ms),
            mp(&b.times.prepare_ms),
            mp(&b.times.input_ms),
            mp(&b.times.network_ms),
            mp(&b.times.reconstruct_ms),
            mp(&b.wall_ms),
            b.network_tflops.map_or("-".to_string(), |t| format!("{t:.4}"))
        );
    }
    for b in &r.backends {
        if let (Some(own), Some(hand)) = (&b.native_network_ms, &b.handoff_ms) {
            say!(
                "{}: the network alone {} ms (its own events); the handoffs, both ways, {} ms (median / p99)",
                b.backend,
                mp(own).trim(),
                mp(hand).trim()
            );
        }
    }
    for b in &r.backends {
        if let Some(x) = &b.resident {
            let own = x.native_network_ms.as_ref().map_or(String::new(), |s| format!(", the network alone {}", mp(s).trim()));
            say!(
                "{}: {} frames back to back on resident inputs (no host upload between frames): frame {}, prepare {}, input {}, network {}{own}, reconstruct {} ms",
                b.backend,
                x.frames,
                mp(&x.times.frame_ms).trim(),
                mp(&x.times.prepare_ms).trim(),
                mp(&x.times.input_ms).trim(),
                mp(&x.times.network_ms).trim(),
                mp(&x.times.reconstruct_ms).trim()
            );
            if let Some(ratio) = clock_gap(b.times.frame_ms.median, x.times.frame_ms.median) {
                say!(
                    "{}: note: the spaced frames took {ratio:.1}x the back-to-back ones: the GPU's clocks follow its duty cycle, and with the host's upload and read-back between frames it was not at full speed (BENCHMARKS.md); the back-to-back figure is the GPU's at full clocks",
                    b.backend
                );
            }
        }
    }
    for b in r.backends.iter().filter(|b| !b.layers.is_empty()) {
        say!("{}: per-layer median GPU time (TESSEL_PROFILE=1), with the bytes and FLOPs each must move at the least", b.backend);
        say!("  {:<24} {:>9} {:>9} {:>9} {:>9} {:>9}", "layer", "ms", "MB", "GFLOP", "GB/s", "TFLOP/s");
        for l in &b.layers {
            say!("  {:<24} {:>9.4} {:>9.1} {:>9.3} {:>9.0} {:>9.2}", l.name, l.ms, l.bytes as f64 / 1e6, l.flops as f64 / 1e9, l.gbps, l.tflops);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_gap_is_reported_only_beyond_noise() {
        assert_eq!(clock_gap(1.39, 1.39), None);
        assert_eq!(clock_gap(1.60, 1.39), None, "15 % is within what runs vary by");
        let r = clock_gap(5.14, 1.374).unwrap();
        assert!((r - 3.74).abs() < 0.01, "{r}");
        assert_eq!(clock_gap(1.0, 0.0), None);
    }
}
