//! What the subcommands share: finding the model package, the `--network` choices, progress
//! bars, statistics, size parsing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use tessel_model::package::ModelPackage;

pub use tessel_model::SHIPPED_MODEL;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum NetworkChoice {
    /// The best backend present: Vulkan when a device opens and the model loads on it, else the
    /// CPU reference.
    Auto,
    /// The f32 CPU reference network.
    Cpu,
    /// No network: the classical TAAU (jitter-aware gather, disocclusion test, variance clipping,
    /// accumulation count; tessel_model::taau), the non-neural mode and the yardstick.
    None,
    /// No network: the contract's reconstruction with the model's fixed head values.
    Fixed,
    /// The Vulkan compute network.
    Vulkan,
    /// The native HIP network (AMD; the CUDA driver on NVIDIA).
    Hip,
}

/// Parses "WxH".
pub fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s.split_once(['x', 'X']).ok_or_else(|| format!("'{s}' is not WIDTHxHEIGHT"))?;
    let w: usize = a.trim().parse().map_err(|_| format!("'{a}' is not a width"))?;
    let h: usize = b.trim().parse().map_err(|_| format!("'{b}' is not a height"))?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(format!("{w}x{h} is outside 1..=16384"));
    }
    Ok((w, h))
}

/// Where the shipped model is looked for, in order: $TESSEL_MODEL, ./models/SHIPPED_MODEL, and
/// models/SHIPPED_MODEL beside the executable's workspace.
pub fn model_candidates() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(p) = std::env::var_os("TESSEL_MODEL") {
        v.push(PathBuf::from(p));
    }
    v.extend(shipped_candidates(SHIPPED_MODEL));
    v
}

/// Where a shipped package called `name` is looked for: ./models/NAME, then models/NAME beside
/// the executable's workspace.
fn shipped_candidates(name: &str) -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from("models").join(name)];
    if let Ok(exe) = std::env::current_exe() {
        for up in exe.ancestors().skip(1).take(4) {
            v.push(up.join("models").join(name));
        }
    }
    v
}

/// The shipped packages' names (folders of the first models/ folder that `shipped_candidates`
/// finds holding the default), sorted; empty where none is found.
pub fn shipped_packages() -> Vec<String> {
    let Some(dir) = first_package(shipped_candidates(SHIPPED_MODEL)) else { return Vec::new() };
    let Some(models) = dir.parent() else { return Vec::new() };
    let mut names: Vec<String> = std::fs::read_dir(models)
        .map(|rd| rd.filter_map(|e| e.ok()).filter(|e| e.path().join("model.json").is_file()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// The folder `--model` names: the path itself where it exists or has more than one component,
/// else, for a bare name such as `tessel-v12-fast`, the shipped package of that name
/// (`shipped_candidates`); Err names every place looked in when there is none.
fn resolve_model(p: &Path) -> Result<PathBuf> {
    if p.exists() || p.components().count() != 1 {
        return Ok(p.to_path_buf());
    }
    let tried = shipped_candidates(&p.to_string_lossy());
    match first_package(tried.iter().cloned()) {
        Some(c) => Ok(c),
        None => {
            let shipped = shipped_packages();
            anyhow::bail!(
                "--model {}: no such folder, and no shipped package of that name (looked in {}){}",
                p.display(),
                tried.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", "),
                if shipped.is_empty() { String::new() } else { format!("; shipped packages: {}", shipped.join(", ")) }
            )
        }
    }
}

/// Loads the package at `explicit` (a path, or the name of a shipped package), or the shipped
/// model. `Ok(None)` when none exists.
pub fn find_model(explicit: Option<&Path>) -> Result<Option<ModelPackage>> {
    if let Some(p) = explicit {
        let p = resolve_model(p)?;
        return Ok(Some(ModelPackage::read(&p).with_context(|| format!("loading model package {}", p.display()))?));
    }
    match first_package(model_candidates()) {
        Some(c) => Ok(Some(ModelPackage::read(&c).with_context(|| format!("loading model package {}", c.display()))?)),
        None => Ok(None),
    }
}

/// The first of `candidates` that holds a package (a model.json).
fn first_package(candidates: impl IntoIterator<Item = PathBuf>) -> Option<PathBuf> {
    candidates.into_iter().find(|c| c.join("model.json").is_file())
}

pub fn progress(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:32}] {pos}/{len} {elapsed_precise} eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// The q-quantile (0..=1) by the nearest-rank method: `quantile(v, 0.99)` is the p99.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let rank = (q * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

/// Median and 99th percentile of a series, milliseconds.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Spread {
    pub median: f64,
    pub p99: f64,
}

impl Spread {
    pub fn of(v: &[f64]) -> Spread {
        Spread { median: median(v), p99: quantile(v, 0.99) }
    }
}

/// Largest render size over a sequence's frames (the Vulkan engine's capacity).
pub fn largest_render(seq: &tessel_model::sequence::Sequence) -> (usize, usize) {
    seq.json.frames.iter().fold((1, 1), |a, f| (a.0.max(f.render[0]), a.1.max(f.render[1])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.99), 198.0);
        assert_eq!(quantile(&v, 0.5), 100.0);
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.99), 3.0);
        assert_eq!(quantile(&[5.0], 0.0), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.median, s.p99), (3.0, 4.0));
    }
}
