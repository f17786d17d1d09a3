//! `tessel compare`: quality of replay outputs against the references, beside bicubic.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Serialize;
use tessel_model::error::read_file;
use tessel_model::metrics::{bicubic_upscale, psnr_tm, ssim_tm, temporal_rms, tonemapped_rgb};
use tessel_model::sequence::{decode_floats, Sequence};

use crate::cli::common::mean;
use crate::cli::replay::output_name;

#[derive(Serialize, Clone)]
pub struct MethodScore {
    pub method: String,
    pub psnr: Vec<f64>,
    pub ssim: Vec<f64>,
    /// Temporal error per frame pair (RMS, tonemapped); NaN where a reset separates the pair.
    pub temporal: Vec<f64>,
    pub mean_psnr: f64,
    pub mean_ssim: f64,
    pub mean_temporal: f64,
}

#[derive(Serialize)]
pub struct CompareReport {
    pub sequence: String,
    pub from_frame: usize,
    pub frames: Vec<usize>,
    pub methods: Vec<MethodScore>,
}

/// A method's name and its tonemapped output for a frame index.
type Method = (String, Box<dyn Fn(usize) -> Result<Vec<f32>>>);

/// Scores each method over frames `from..`.
fn score(seq: &Sequence, from: usize, methods: Vec<Method>) -> Result<CompareReport> {
    let (w, h) = seq.output();
    let e = seq.settings().exposure.value().unwrap_or(1.0);
    let frames: Vec<usize> = (from..seq.len()).collect();
    if frames.is_empty() {
        bail!("{}: the sequence has {} frames; nothing to compare from frame {from}", seq.path.display(), seq.len());
    }
    let mut refs = Vec::new();
    let mut resets = Vec::new();
    for &i in &frames {
        let f = seq.load_frame(i)?;
        let r = f.reference.ok_or_else(|| anyhow::anyhow!("{}: frames[{i}].reference: missing; compare needs ground truth", seq.path.display()))?;
        refs.push(tonemapped_rgb(&r, e));
        resets.push(f.reset);
    }
    let mut out = Vec::new();
    for (name, get) in methods {
        let mut s = MethodScore { method: name, psnr: vec![], ssim: vec![], temporal: vec![], mean_psnr: 0.0, mean_ssim: 0.0, mean_temporal: 0.0 };
        let mut prev: Option<Vec<f32>> = None;
        for (k, &i) in frames.iter().enumerate() {
            let o = tonemapped_rgb(&get(i)?, e);
            s.psnr.push(psnr_tm(&o, &refs[k]));
            s.ssim.push(ssim_tm(&o, &refs[k], w, h));
            if let Some(p) = &prev {
                s.temporal.push(if resets[k] { f64::NAN } else { temporal_rms(&o, p, &refs[k], &refs[k - 1]) });
            }
            prev = Some(o);
        }
        s.mean_psnr = mean(&s.psnr);
        s.mean_ssim = mean(&s.ssim);
        s.mean_temporal = mean(&s.temporal.iter().copied().filter(|v| v.is_finite()).collect::<Vec<_>>());
        out.push(s);
    }
    Ok(CompareReport { sequence: seq.path.display().to_string(), from_frame: from, frames, methods: out })
}

/// Reads replay output `i` from `dir`.
fn load_output(dir: &Path, seq: &Sequence, i: usize) -> Result<Vec<f32>> {
    let p = dir.join(output_name(i));
    let bytes = read_file(&p)?;
    let (w, h) = seq.output();
    let need = w * h * 4 * (seq.json.bits as usize / 8);
    if bytes.len() != need {
        bail!("{}: output of frame {i}: {} bytes, {need} expected for {w}x{h} RGBA f{}", p.display(), bytes.len(), seq.json.bits);
    }
    Ok(decode_floats(&bytes, seq.json.bits))
}

fn label_of(dir: &Path) -> String {
    // The replay report says which network made the outputs.
    let report = dir.join("report.json");
    if let Ok(bytes) = std::fs::read(&report) {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) {
            if let Some(n) = v.get("network").and_then(|n| n.as_str()) {
                let short = n.trim_start_matches("network: ").split([';', '(']).next().unwrap_or(n).trim();
                return format!("{short} [{}]", dir.display());
            }
        }
    }
    dir.display().to_string()
}

pub fn compare(dirs: &[PathBuf], frames_json: &Path, from: usize) -> Result<CompareReport> {
    let seq = Sequence::open(frames_json)?;
    let mut methods: Vec<Method> = Vec::new();
    let s2 = seq.clone();
    methods.push((
        "bicubic".into(),
        Box::new(move |i| {
            let f = s2.load_frame(i)?;
            Ok(bicubic_upscale(&f, s2.output()))
        }),
    ));
    for d in dirs {
        let (d2, s3) = (d.clone(), seq.clone());
        methods.push((label_of(d), Box::new(move |i| load_output(&d2, &s3, i))));
    }
    score(&seq, from, methods)
}

pub fn print_table(r: &CompareReport) {
    say!("{} frames {}..{} (PSNR/SSIM on tonemapped colour; temporal: RMS error of frame-to-frame change, lower is steadier)", r.sequence, r.from_frame, r.frames.last().copied().unwrap_or(0));
    say!("{:<52} {:>10} {:>8} {:>10}", "method", "PSNR dB", "SSIM", "temporal");
    for m in &r.methods {
        say!("{:<52} {:>10.3} {:>8.4} {:>10.5}", m.method, m.mean_psnr, m.mean_ssim, m.mean_temporal);
    }
}
