//! `tessel check`: every backend present against the CPU reference, on the golden cases and on a
//! generated sequence with a reset, a render-size change and poisoned inputs. Prints a row per
//! frame and a summary, writes JSON when asked, and fails naming each threshold missed.

use std::path::PathBuf;

use anyhow::{bail, ensure, Context, Result};
use serde::Serialize;

use crate::cli::backend::{open_cpu, open_none_cpu};
use crate::cli::check_golden::{check_case, golden_cases, GoldenRow};
use crate::cli::check_sequence::{check_sequence, frames, open_for, SequencePlan, SequenceRow, PLAN};
use crate::cli::common::{find_model, NetworkChoice};
use crate::cli::vulkan::vulkan_device;

pub const MIN_TOKENS_DB: f64 = 60.0;
pub const MIN_HEAD_DB: f64 = 60.0;
pub const MIN_IMAGE_DB: f64 = 50.0;

pub struct CheckOptions {
    /// Empty: every backend present except the CPU reference itself.
    pub networks: Vec<NetworkChoice>,
    pub model: Option<PathBuf>,
    pub golden: Option<PathBuf>,
    pub json: Option<PathBuf>,
}

#[derive(Serialize)]
pub struct Thresholds {
    pub tokens_db: f64,
    pub head_db: f64,
    /// Final image, golden cases and every frame of the generated sequence.
    pub image_db: f64,
}

#[derive(Serialize)]
pub struct BackendCheck {
    pub backend: String,
    pub label: String,
    pub golden: Vec<GoldenRow>,
    pub sequence: Vec<SequenceRow>,
    pub worst_tokens_db: f64,
    pub worst_head_db: f64,
    pub worst_golden_image_db: f64,
    pub worst_sequence_image_db: f64,
    pub failures: Vec<String>,
    pub pass: bool,
}

#[derive(Serialize)]
pub struct CheckReport {
    pub thresholds: Thresholds,
    pub golden_dir: String,
    pub sequence: SequencePlan,
    pub backends: Vec<BackendCheck>,
    pub skipped: Vec<String>,
    pub pass: bool,
}

/// PSNR (dB) of `a` against `reference` with the reference's value range as the peak; 200 when
/// equal. Errors on different lengths (a backend that wrote the wrong layout).
pub fn psnr_range(a: &[f32], reference: &[f32]) -> Result<f64> {
    ensure!(a.len() == reference.len(), "{} values, the CPU reference has {}", a.len(), reference.len());
    ensure!(!a.is_empty(), "no values were read back");
    Ok(tessel_model::metrics::psnr_range(a, reference))
}

/// The backends to check, and a line for each one skipped.
fn chosen(list: &[NetworkChoice]) -> Result<(Vec<NetworkChoice>, Vec<String>)> {
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    if list.is_empty() {
        let vk = vulkan_device();
        match &vk {
            // The network on Vulkan, and the classical TAAU's shader against its CPU reference.
            Ok(_) => run.extend([NetworkChoice::Vulkan, NetworkChoice::None]),
            Err(e) => skipped.push(format!("skipped: no Vulkan device ({e})")),
        }
        // The native network runs between the Vulkan front and back: it needs both.
        match (crate::cli::hip::runtime(), &vk) {
            (Ok(_), Ok(s)) if s.caps.external_memory_fd && s.caps.external_semaphore_fd => run.push(NetworkChoice::Hip),
            (Ok(rt), _) => skipped.push(format!("skipped: hip ({} present, but no Vulkan device that exports memory and semaphores)", rt.describe())),
            (Err(e), _) => skipped.push(format!("skipped: no HIP runtime ({})", e.to_string().split_whitespace().collect::<Vec<_>>().join(" "))),
        }
        return Ok((run, skipped));
    }
    for &c in list {
        match c {
            NetworkChoice::Fixed => bail!("--network fixed: no network to check against the CPU reference"),
            NetworkChoice::None if vulkan_device().is_err() => bail!("--network none: the classical TAAU is checked on Vulkan against the CPU, and there is no Vulkan device"),
            c => run.push(c),
        }
    }
    Ok((run, skipped))
}

pub fn check(o: &CheckOptions) -> Result<CheckReport> {
    let (run, skipped) = chosen(&o.networks)?;
    for s in &skipped {
        say!("{s}");
    }
    let (golden_dir, cases) = golden_cases(o.golden.as_deref())?;
    let pkg = find_model(o.model.as_deref())?.ok_or_else(|| anyhow::anyhow!("no model package found for the generated sequence; pass --model DIR"))?;
    let seq_frames = frames(&PLAN)?;
    let mut backends = Vec::new();
    for &choice in &run {
        backends.push(check_backend(choice, &cases, o, &pkg, &seq_frames)?);
    }
    let report = CheckReport {
        thresholds: Thresholds { tokens_db: MIN_TOKENS_DB, head_db: MIN_HEAD_DB, image_db: MIN_IMAGE_DB },
        golden_dir: golden_dir.display().to_string(),
        sequence: PLAN,
        pass: backends.iter().all(|b| b.pass),
        backends,
        skipped,
    };
    print_summary(&report);
    if let Some(p) = &o.json {
        tessel_model::error::write_file_atomic(p, &serde_json::to_vec_pretty(&report)?).with_context(|| format!("writing {}", p.display()))?;
    }
    if !report.pass {
        let all: Vec<String> = report.backends.iter().flat_map(|b| b.failures.iter().map(move |f| format!("{}: {f}", b.backend))).collect();
        bail!("check failed: {}", all.join("; "));
    }
    Ok(report)
}

fn check_backend(
    choice: NetworkChoice,
    cases: &[PathBuf],
    o: &CheckOptions,
    pkg: &tessel_model::package::ModelPackage,
    seq_frames: &[tessel_model::frame::FrameData],
) -> Result<BackendCheck> {
    // Opened first, for the sequence part, so that the label comes before the rows.
    let mut be = open_for(choice, pkg, seq_frames, &PLAN)?;
    let (name, label) = (be.name().to_string(), be.label().to_string());
    say!("{label}");
    let mut golden = Vec::new();
    // The golden cases hold the network's outputs: the classical TAAU has only the sequence.
    let cases = if choice == NetworkChoice::None { &[][..] } else { cases };
    for case in cases {
        let rows = check_case(choice, case, o.model.as_deref())?;
        for r in &rows {
            say!(
                "  {} frame {}: tokens {:.1} dB, head {:.1} dB, image {:.1} dB, history {:.1} dB",
                r.case, r.frame, r.tokens_db, r.head_db, r.image_db, r.history_db
            );
        }
        golden.extend(rows);
    }
    let reference = if choice == NetworkChoice::None {
        // The parameters `--network none` runs with (open_none).
        open_none_cpu(Default::default(), &Default::default(), (PLAN.output[0], PLAN.output[1]), "classical TAAU, CPU reference")
    } else {
        open_cpu(pkg, &Default::default(), (PLAN.output[0], PLAN.output[1]), "")
    };
    let sequence = check_sequence(be.as_mut(), reference, seq_frames, &PLAN)?;
    for r in &sequence {
        let note = [(r.reset, " reset"), (r.poisoned, " poisoned"), (r.frame == PLAN.switch_at, " size change")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, s)| *s)
            .collect::<String>();
        say!(
            "  generated frame {:>2} {}x{}{note}: image {:.1} dB, sanitized {} (cpu {}){}",
            r.frame, r.render[0], r.render[1], r.image_db, r.sanitized, r.cpu_sanitized, if r.finite { "" } else { ", NON-FINITE output" }
        );
    }
    Ok(judge(name, label, golden, sequence))
}

fn worst(v: impl Iterator<Item = f64>) -> f64 {
    // NaN counts as the worst.
    v.fold(f64::INFINITY, |a, x| if x.is_nan() || a.is_nan() { f64::NAN } else { a.min(x) })
}

fn judge(backend: String, label: String, golden: Vec<GoldenRow>, sequence: Vec<SequenceRow>) -> BackendCheck {
    let mut failures = Vec::new();
    // NaN is below every threshold.
    let below = |v: f64, min: f64| v.is_nan() || v < min;
    for r in &golden {
        for (what, v, min) in [("tokens", r.tokens_db, MIN_TOKENS_DB), ("head", r.head_db, MIN_HEAD_DB), ("image", r.image_db, MIN_IMAGE_DB)] {
            if below(v, min) {
                failures.push(format!("golden {} frame {}: {what} {v:.1} dB < {min}", r.case, r.frame));
            }
        }
    }
    for r in &sequence {
        if below(r.image_db, MIN_IMAGE_DB) {
            failures.push(format!("generated frame {}: image {:.1} dB < {MIN_IMAGE_DB}", r.frame, r.image_db));
        }
        if !r.finite {
            failures.push(format!("generated frame {}: non-finite output values", r.frame));
        }
        if r.sanitized != r.cpu_sanitized {
            failures.push(format!("generated frame {}: sanitized {} values, the CPU reference {}", r.frame, r.sanitized, r.cpu_sanitized));
        }
    }
    BackendCheck {
        backend,
        label,
        worst_tokens_db: worst(golden.iter().map(|r| r.tokens_db)),
        worst_head_db: worst(golden.iter().map(|r| r.head_db)),
        worst_golden_image_db: worst(golden.iter().map(|r| r.image_db)),
        worst_sequence_image_db: worst(sequence.iter().map(|r| r.image_db)),
        pass: failures.is_empty(),
        failures,
        golden,
        sequence,
    }
}

fn print_summary(r: &CheckReport) {
    if r.backends.is_empty() {
        say!("nothing checked: no backend besides the CPU reference is present");
        return;
    }
    say!(
        "summary (worst over frames; thresholds: tokens/head >= {MIN_TOKENS_DB} dB, image >= {MIN_IMAGE_DB} dB, outputs finite, sanitized counts equal)"
    );
    say!("{:<8} {:>10} {:>10} {:>13} {:>16} {:>7}", "backend", "tokens dB", "head dB", "golden image", "generated image", "result");
    // No golden rows (the classical TAAU): "-".
    let db = |v: f64| if v.is_infinite() { "-".to_string() } else { format!("{v:.1}") };
    for b in &r.backends {
        say!(
            "{:<8} {:>10} {:>10} {:>13} {:>16.1} {:>7}",
            b.backend,
            db(b.worst_tokens_db),
            db(b.worst_head_db),
            db(b.worst_golden_image_db),
            b.worst_sequence_image_db,
            if b.pass { "pass" } else { "FAIL" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golden(head: f64) -> GoldenRow {
        GoldenRow { case: "c".into(), frame: 1, tokens_db: 90.0, head_db: head, image_db: 90.0, history_db: 90.0 }
    }

    fn seq(frame: usize, image: f64, sanitized: usize, finite: bool) -> SequenceRow {
        SequenceRow { frame, render: [4, 4], reset: false, poisoned: false, image_db: image, sanitized, cpu_sanitized: 3, finite }
    }

    #[test]
    fn psnr_range_by_hand_and_refuses_other_lengths() {
        assert_eq!(psnr_range(&[0.0, 1.0], &[0.0, 1.0]).unwrap(), 200.0);
        // Range 2, error 0.02 on one of two values: mse 2e-4, 10 log10(4 / 2e-4) = 43.01 dB.
        assert!((psnr_range(&[-1.0, 1.02], &[-1.0, 1.0]).unwrap() - 43.0103).abs() < 1e-3);
        assert!(psnr_range(&[f32::NAN, 1.0], &[0.0, 1.0]).unwrap().is_nan());
        let e = psnr_range(&[0.0], &[0.0, 1.0]).unwrap_err().to_string();
        assert!(e.contains("1 values") && e.contains("has 2"), "{e}");
        assert!(psnr_range(&[], &[]).is_err());
    }

    #[test]
    fn judge_names_every_miss_and_counts_nan_as_the_worst() {
        let ok = judge("x".into(), "l".into(), vec![golden(80.0)], vec![seq(0, 70.0, 3, true)]);
        assert!(ok.pass && ok.failures.is_empty());
        let bad = judge(
            "x".into(),
            "l".into(),
            vec![golden(59.9), golden(f64::NAN)],
            vec![seq(0, 49.0, 3, true), seq(1, 70.0, 2, true), seq(2, 70.0, 3, false)],
        );
        assert!(!bad.pass);
        let all = bad.failures.join("\n");
        for want in ["golden c frame 1: head 59.9 dB < 60", "head NaN dB", "generated frame 0: image 49.0", "frame 1: sanitized 2 values, the CPU reference 3", "frame 2: non-finite"] {
            assert!(all.contains(want), "{want} missing from:\n{all}");
        }
        assert!(bad.worst_head_db.is_nan());
        assert_eq!(bad.worst_sequence_image_db, 49.0);
    }
}
