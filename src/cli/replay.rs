//! `tessel replay`: runs a frame sequence through a network backend; writes outputs and a report.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use tessel_model::imageio::{write_exr, write_png};
use tessel_model::metrics::{psnr_tm, tonemapped_rgb};
use tessel_model::pipeline::StageTimes;
use tessel_model::sequence::{decode_floats, encode_floats, Sequence};

use crate::cli::backend::open_backend;
use crate::cli::common::{find_model, largest_render, mean, progress, NetworkChoice};

#[derive(Clone, Debug)]
pub struct ReplayOptions {
    pub network: NetworkChoice,
    pub model: Option<PathBuf>,
    pub png: bool,
    pub exr: bool,
    pub quiet: bool,
}

#[derive(Serialize)]
pub struct FrameReport {
    pub index: usize,
    pub output: String,
    pub phase: usize,
    pub reset: bool,
    pub exposure: f32,
    pub sanitized: usize,
    /// Per stage: GPU timestamps on a GPU backend, wall time on the CPU.
    pub times: StageTimes,
    pub total_ms: f64,
    /// The whole frame on the GPU (timestamps), on a GPU backend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_frame_ms: Option<f64>,
    /// Host wall time of the frame: upload, run, wait, read back.
    pub wall_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psnr: Option<f64>,
}

#[derive(Serialize)]
pub struct ReplayReport {
    pub sequence: String,
    pub network: String,
    pub model: Option<String>,
    pub output: [usize; 2],
    pub bits: u32,
    pub frames: Vec<FrameReport>,
    /// Mean PSNR over frames 8.. (tonemapped, dB), when references exist.
    pub mean_psnr_from_8: Option<f64>,
    /// Mean of the per-stage sum (GPU time on a GPU backend).
    pub mean_frame_ms: f64,
    /// Mean host wall time per frame.
    pub mean_wall_ms: f64,
}

/// Name of the output file of frame `i`.
pub fn output_name(i: usize) -> String {
    format!("o{i:04}.bin")
}

pub fn replay(frames_json: &Path, out: &Path, opt: &ReplayOptions) -> Result<ReplayReport> {
    let seq = Sequence::open(frames_json)?;
    let (ow, oh) = seq.output();
    let pkg = find_model(opt.model.as_deref())?;
    let mut backend = open_backend(opt.network, pkg.as_ref(), seq.settings(), largest_render(&seq), (ow, oh))?;
    if !opt.quiet {
        eprintln!("tessel: {}", backend.label());
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let pb = progress(seq.len(), "replay");
    if opt.quiet {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut frames = Vec::new();
    for i in 0..seq.len() {
        let f = seq.load_frame(i)?;
        let t0 = std::time::Instant::now();
        let r = backend.evaluate(&f).with_context(|| format!("{}: frame {i}", frames_json.display()))?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        let ev = r.eval;
        let name = output_name(i);
        let stored = encode_floats(&ev.output, seq.json.bits);
        tessel_model::error::write_file_atomic(&out.join(&name), &stored)?;
        // Scores are of what is on disk (f16 files round the output).
        let stored = decode_floats(&stored, seq.json.bits);
        let display_exposure = seq.settings().exposure.value().unwrap_or(ev.exposure);
        if opt.png {
            write_png(&out.join(format!("o{i:04}.png")), ow, oh, &ev.output, display_exposure)?;
        }
        if opt.exr {
            write_exr(&out.join(format!("o{i:04}.exr")), ow, oh, &ev.output)?;
        }
        let psnr = f.reference.as_ref().map(|r| psnr_tm(&tonemapped_rgb(&stored, display_exposure), &tonemapped_rgb(r, display_exposure)));
        if ev.sanitized > 0 && !opt.quiet {
            pb.println(format!("tessel: frame {i}: {} non-finite or out-of-range input values replaced", ev.sanitized));
        }
        frames.push(FrameReport {
            index: i,
            output: name,
            phase: ev.phase,
            reset: f.reset,
            exposure: ev.exposure,
            sanitized: ev.sanitized,
            total_ms: ev.times.total_ms(),
            times: ev.times,
            gpu_frame_ms: r.gpu.map(|g| g.frame_ms),
            wall_ms,
            psnr,
        });
        pb.inc(1);
    }
    pb.finish_and_clear();
    let tail: Vec<f64> = frames.iter().skip(8).filter_map(|f| f.psnr).collect();
    let report = ReplayReport {
        sequence: frames_json.display().to_string(),
        network: backend.label().to_string(),
        model: backend.model().map(String::from),
        output: [ow, oh],
        bits: seq.json.bits,
        mean_psnr_from_8: if tail.is_empty() { None } else { Some(mean(&tail)) },
        mean_frame_ms: mean(&frames.iter().map(|f| f.total_ms).collect::<Vec<_>>()),
        mean_wall_ms: mean(&frames.iter().map(|f| f.wall_ms).collect::<Vec<_>>()),
        frames,
    };
    tessel_model::error::write_file_atomic(&out.join("report.json"), &serde_json::to_vec_pretty(&report)?)?;
    Ok(report)
}
