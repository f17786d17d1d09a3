//! `tessel bench`: per-stage time of a backend on a generated scene, medians after warm-up.

use std::path::PathBuf;

use anyhow::Result;
use tessel_model::pipeline::Upscaler;
use tessel_model::sequence::Settings;

use crate::cli::common::{median, select_network, NetworkChoice};
use crate::scene::{Scene, SceneKind, SceneSpec};

pub struct BenchOptions {
    pub network: NetworkChoice,
    pub model: Option<PathBuf>,
    pub output: (usize, usize),
    pub ratio: f32,
    pub frames: usize,
}

pub fn bench(o: &BenchOptions) -> Result<()> {
    let sel = select_network(o.network, o.model.as_deref())?;
    eprintln!("tessel: {}", sel.label);
    let spec = SceneSpec { kind: SceneKind::Mixed, seed: 1, ratio: o.ratio, frames: o.frames, output: o.output, spp: 16, reset_at: None };
    let scene = Scene::new(spec.clone());
    let frames: Vec<_> = (0..o.frames.min(4)).map(|t| scene.frame(t)).collect();
    let mut up = Upscaler::new(sel.source, Settings::default(), o.output);
    let mut times = Vec::new();
    for t in 0..o.frames + 1 {
        let ev = up.evaluate(&frames[t % frames.len()]);
        if t > 0 {
            times.push(ev.times);
        }
    }
    let col = |f: fn(&tessel_model::pipeline::StageTimes) -> f64| median(&times.iter().map(f).collect::<Vec<_>>());
    let (rw, rh) = spec.render_size();
    say!("bench: {rw}x{rh} -> {}x{}, {} frames after 1 warm-up (CPU wall time, median ms)", o.output.0, o.output.1, o.frames);
    say!("  prepare {:>9.2}\n  input   {:>9.2}\n  network {:>9.2}\n  recon   {:>9.2}\n  frame   {:>9.2}", col(|t| t.prepare_ms), col(|t| t.input_ms), col(|t| t.network_ms), col(|t| t.reconstruct_ms), col(|t| t.total_ms()));
    Ok(())
}
