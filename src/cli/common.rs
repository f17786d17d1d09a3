//! What the subcommands share: finding the model package, choosing the network backend, progress
//! bars, size parsing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use tessel_model::head::FixedHead;
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::HeadSource;

/// The shipped model's folder name under models/.
pub const SHIPPED_MODEL: &str = "tessel-v6";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum NetworkChoice {
    /// The best backend present (today: the CPU reference).
    Auto,
    /// The f32 CPU reference network.
    Cpu,
    /// No network: the same reconstruction with fixed head values (the TAAU baseline).
    None,
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

/// Where the shipped model is looked for, in order: $TESSEL_MODEL, ./models/tessel-v6, and
/// models/tessel-v6 beside the executable's workspace.
pub fn model_candidates() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(p) = std::env::var_os("TESSEL_MODEL") {
        v.push(PathBuf::from(p));
    }
    v.push(PathBuf::from("models").join(SHIPPED_MODEL));
    if let Ok(exe) = std::env::current_exe() {
        for up in exe.ancestors().skip(1).take(4) {
            v.push(up.join("models").join(SHIPPED_MODEL));
        }
    }
    v
}

/// Loads the package at `explicit`, or the shipped model. `Ok(None)` when none exists.
pub fn find_model(explicit: Option<&Path>) -> Result<Option<ModelPackage>> {
    if let Some(p) = explicit {
        return Ok(Some(ModelPackage::read(p).with_context(|| format!("loading model package {}", p.display()))?));
    }
    for c in model_candidates() {
        if c.join("model.json").is_file() {
            return Ok(Some(ModelPackage::read(&c).with_context(|| format!("loading model package {}", c.display()))?));
        }
    }
    Ok(None)
}

/// A chosen network backend, with the line that says what was chosen and why.
pub struct Selected {
    pub source: HeadSource,
    pub label: String,
    pub model_name: Option<String>,
}

/// Resolves `--network` (and `--model`) into a head source. Backends not built yet are refused
/// with a clear message; `auto` says once what it picked and why.
pub fn select_network(choice: NetworkChoice, model: Option<&Path>) -> Result<Selected> {
    let pending = |what: &str, folder: &str| {
        anyhow::anyhow!(
            "the {what} network backend is not part of this build yet ({folder} is planned); use --network cpu or --network none"
        )
    };
    match choice {
        NetworkChoice::Vulkan => Err(pending("Vulkan", "vk-stages/")),
        NetworkChoice::Hip => Err(pending("HIP", "hip-net/")),
        NetworkChoice::None => {
            let pkg = find_model(model)?;
            let (fixed, from) = match &pkg {
                Some(p) => (p.baseline, format!("baseline values of model '{}'", p.name)),
                None => (FixedHead::default(), "default baseline values".to_string()),
            };
            Ok(Selected {
                source: HeadSource::Fixed(fixed),
                label: format!(
                    "network: none (TAAU baseline: blend {:.3}, sigma {:.3}, clamp {:.3}; {from})",
                    fixed.blend, fixed.sigma, fixed.clamp
                ),
                model_name: None,
            })
        }
        NetworkChoice::Cpu | NetworkChoice::Auto => {
            let pkg = find_model(model)?.ok_or_else(|| {
                let looked: Vec<String> = model_candidates().iter().map(|p| p.display().to_string()).collect();
                anyhow::anyhow!(
                    "no model package found (looked in: {}). Pass --model DIR, or make an untrained test package with `tessel init-model --out DIR`",
                    looked.join(", ")
                )
            })?;
            let why = if choice == NetworkChoice::Auto { "auto -> cpu (the Vulkan and HIP backends are not built yet); " } else { "" };
            let trained = if pkg.trained { "" } else { " [UNTRAINED: test weights]" };
            let label = format!(
                "network: {why}cpu reference f32, {} threads; model '{}'{trained}",
                rayon::current_num_threads(),
                pkg.name
            );
            Ok(Selected { model_name: Some(pkg.name.clone()), source: HeadSource::Network(Arc::new(Network::from_package(&pkg))), label })
        }
    }
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
