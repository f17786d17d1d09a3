//! `tessel check`, part a: a backend against the CPU reference on the golden cases
//! (model/tests/golden/*/: frames.json + golden.json), frame by frame, each with its own history.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use tessel_model::metrics::{psnr_tm, tonemapped_rgb};
use tessel_model::package::ModelPackage;
use tessel_model::sequence::Sequence;

use crate::cli::backend::{open_backend, open_cpu, Extras};
use crate::cli::check::psnr_range;
use crate::cli::common::{find_model, largest_render, NetworkChoice};

#[derive(Clone, Debug, Serialize)]
pub struct GoldenRow {
    pub case: String,
    pub frame: usize,
    pub tokens_db: f64,
    pub head_db: f64,
    pub image_db: f64,
    pub history_db: f64,
}

/// Where the golden cases are looked for: $TESSEL_GOLDEN_DIR, ./model/tests/golden, then beside
/// the executable's workspace (like the model package).
pub fn golden_candidates() -> Vec<PathBuf> {
    let rel = Path::new("model").join("tests").join("golden");
    let mut v: Vec<PathBuf> = std::env::var_os("TESSEL_GOLDEN_DIR").map(PathBuf::from).into_iter().collect();
    v.push(rel.clone());
    if let Ok(exe) = std::env::current_exe() {
        v.extend(exe.ancestors().skip(1).take(4).map(|up| up.join(&rel)));
    }
    v
}

/// The case folders (each with golden.json) under `explicit` or the first candidate that has any.
pub fn golden_cases(explicit: Option<&Path>) -> Result<(PathBuf, Vec<PathBuf>)> {
    let list = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("golden.json").is_file()).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    if let Some(d) = explicit {
        let cases = list(d);
        if cases.is_empty() {
            bail!("--golden {}: no case folders with golden.json there", d.display());
        }
        return Ok((d.to_path_buf(), cases));
    }
    for c in golden_candidates() {
        let cases = list(&c);
        if !cases.is_empty() {
            return Ok((c, cases));
        }
    }
    let looked: Vec<String> = golden_candidates().iter().map(|p| p.display().to_string()).collect();
    bail!("no golden cases found (looked in: {}); pass --golden DIR", looked.join(", "))
}

/// The package a case runs: golden.json's `model` (relative to the case), else `--model` or the
/// shipped model.
fn case_model(case: &Path, fallback: Option<&Path>) -> Result<ModelPackage> {
    let gj = case.join("golden.json");
    let bytes = std::fs::read(&gj).with_context(|| format!("reading {}", gj.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).with_context(|| format!("{}: not valid JSON", gj.display()))?;
    match v.get("model") {
        Some(serde_json::Value::String(m)) => {
            let dir = case.join(m);
            ModelPackage::read(&dir).with_context(|| format!("{}: field 'model' names {}", gj.display(), dir.display()))
        }
        Some(other) => bail!("{}: field 'model' must be a folder name, found {other}", gj.display()),
        None => find_model(fallback)?.ok_or_else(|| anyhow::anyhow!("{}: no 'model' field and no model package found; pass --model DIR", gj.display())),
    }
}

/// Runs one case through `choice` and the CPU reference; a row per frame.
pub fn check_case(choice: NetworkChoice, case: &Path, model: Option<&Path>) -> Result<Vec<GoldenRow>> {
    let name = case.file_name().map_or_else(|| case.display().to_string(), |n| n.to_string_lossy().into_owned());
    let pkg = case_model(case, model)?;
    let seq = Sequence::open(&case.join("frames.json"))?;
    let extras = Extras { tokens_head: true, history: true, no_output: false };
    let mut cpu = open_cpu(&pkg, seq.settings(), seq.output(), "");
    let mut be = open_backend(choice, Some(&pkg), seq.settings(), largest_render(&seq), seq.output())?;
    cpu.set_extras(extras);
    be.set_extras(extras);
    let mut rows = Vec::new();
    for i in 0..seq.len() {
        let f = seq.load_frame(i)?;
        let c = cpu.evaluate(&f)?;
        let g = be.evaluate(&f).with_context(|| format!("{name} frame {i}: {}", be.name()))?;
        let what = |w: &str| format!("{name} frame {i}: {w}");
        let e = c.eval.exposure;
        rows.push(GoldenRow {
            case: name.clone(),
            frame: i,
            tokens_db: psnr_range(&g.eval.tokens, &c.eval.tokens).with_context(|| what("tokens"))?,
            head_db: psnr_range(&g.eval.head, &c.eval.head).with_context(|| what("head"))?,
            image_db: psnr_tm(&tonemapped_rgb(&g.eval.output, e), &tonemapped_rgb(&c.eval.output, e)),
            history_db: psnr_range(g.history.as_deref().unwrap_or(&[]), c.history.as_deref().unwrap_or(&[])).with_context(|| what("history"))?,
        });
    }
    Ok(rows)
}
