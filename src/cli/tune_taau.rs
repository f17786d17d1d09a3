//! `tessel tune-taau`: tunes the classical TAAU (`--network none`) on training scenes, every
//! scene kind at 1.5x, 2x and 3x, by coordinate search over its parameters; prints each
//! improvement, the result as JSON, and the fixed-head baseline on the same scenes for scale.
//! Training seeds start at 100 (the held-out seeds are 1001 and 1002).

use anyhow::{Context, Result};
use clap::ValueEnum;
use tessel_model::frame::FrameData;
use tessel_model::head::FixedHead;
use tessel_model::metrics::{psnr_tm, tonemapped_rgb};
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::sequence::Settings;
use tessel_model::taau::TaauParams;

use crate::cli::common::progress;
use crate::scene::{Scene, SceneKind, SceneSpec};

pub struct TuneOptions {
    pub output: (usize, usize),
    pub frames: usize,
    pub seeds: u64,
    pub rounds: usize,
    /// The first round's factor around each value (later rounds take its square root).
    pub step: f32,
    /// Frames before this one are not scored (history still filling).
    pub from: usize,
    /// Starting points (empty: the defaults); the search starts from the best of them.
    pub start: Vec<TaauParams>,
    /// The fixed-head baseline to report beside (a model package's `baseline`).
    pub fixed: FixedHead,
}

/// Parameters from a JSON file as `tune-taau` prints them (missing fields take the defaults).
pub fn read_params(path: &std::path::Path) -> Result<TaauParams> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut base = serde_json::to_value(TaauParams::default())?;
    if let (Some(b), Some(o)) = (base.as_object_mut(), v.as_object_mut()) {
        for (k, x) in o.iter() {
            anyhow::ensure!(b.contains_key(k), "{}: '{k}' is not a TAAU parameter", path.display());
            b.insert(k.clone(), x.clone());
        }
    } else {
        anyhow::bail!("{}: expected a JSON object of TAAU parameters", path.display());
    }
    serde_json::from_value(base).with_context(|| format!("{}: a parameter is not a number", path.display()))
}

struct Case {
    name: String,
    frames: Vec<FrameData>,
    refs: Vec<Vec<f32>>,
}

fn cases(o: &TuneOptions) -> Vec<Case> {
    let kinds = SceneKind::value_variants();
    let mut specs = Vec::new();
    for seed in 0..o.seeds {
        for &kind in kinds {
            for ratio in [1.5f32, 2.0, 3.0] {
                specs.push(SceneSpec { kind, seed: 100 + seed, ratio, frames: o.frames, output: o.output, spp: 16, reset_at: Some(o.frames / 2) });
            }
        }
    }
    let pb = progress(specs.len(), "scenes");
    let out = specs
        .into_iter()
        .map(|spec| {
            let scene = Scene::new(spec.clone());
            let frames: Vec<FrameData> = (0..spec.frames).map(|t| scene.inputs(t)).collect();
            let refs = (o.from..spec.frames).map(|t| tonemapped_rgb(&scene.reference(t), 1.0)).collect();
            pb.inc(1);
            Case { name: format!("{:?} {}x", spec.kind, spec.ratio).to_lowercase(), frames, refs }
        })
        .collect();
    pb.finish_and_clear();
    out
}

/// Mean PSNR (tonemapped, exposure 1) of one case's scored frames.
fn case_score(c: &Case, source: &HeadSource, o: &TuneOptions) -> f64 {
    let mut up = Upscaler::new(source.clone(), Settings::default(), o.output);
    let mut total = 0.0;
    for (t, f) in c.frames.iter().enumerate() {
        let ev = up.evaluate(f);
        if t >= o.from {
            total += psnr_tm(&tonemapped_rgb(&ev.output, 1.0), &c.refs[t - o.from]);
        }
    }
    total / (c.frames.len() - o.from) as f64
}

/// Mean PSNR over every case (each case weighs the same).
fn score(cases: &[Case], source: &HeadSource, o: &TuneOptions) -> f64 {
    cases.iter().map(|c| case_score(c, source, o)).sum::<f64>() / cases.len() as f64
}

/// The parameters' names, getters and setters, with the factors tried around each value.
type Knob = (&'static str, fn(&TaauParams) -> f32, fn(&mut TaauParams, f32));
/// A knob per named field of TaauParams.
macro_rules! knobs {
    ($($field:ident),* $(,)?) => {
        &[$((stringify!($field), |p: &TaauParams| p.$field, |p: &mut TaauParams, v: f32| p.$field = v)),*]
    };
}
const KNOBS: &[Knob] = knobs!(sigma, confidence_sigma, gamma, box_floor, cap, cap_static, keys_a, depth_tolerance, reactive, disagree, disagree_floor, motion_edge, lock_threshold, lock_cap, lock_decay);

pub fn tune(o: &TuneOptions) -> Result<TaauParams> {
    anyhow::ensure!(o.frames > o.from + 1, "--frames {} leaves nothing to score after frame {}", o.frames, o.from);
    let cases = cases(o);
    let fixed = score(&cases, &HeadSource::Fixed(o.fixed), o);
    let starts = if o.start.is_empty() { vec![TaauParams::default()] } else { o.start.clone() };
    let (mut best, mut best_score) = (starts[0], f64::MIN);
    for p in starts {
        let s = score(&cases, &HeadSource::Classic(p), o);
        eprintln!("tune-taau: start {s:.3} dB {p:?}");
        if s > best_score {
            (best, best_score) = (p, s);
        }
    }
    eprintln!("tune-taau: {} scenes; fixed-head baseline {fixed:.3} dB; from {best_score:.3} dB", cases.len());
    let mut step = o.step;
    for round in 0..o.rounds {
        for (name, get, set) in KNOBS {
            for factor in [1.0 / step, step] {
                let mut p = best;
                set(&mut p, get(&best) * factor);
                let s = score(&cases, &HeadSource::Classic(p), o);
                if s > best_score + 1e-4 {
                    eprintln!("  round {round}: {name} {:.4} -> {:.4}: {s:.3} dB (+{:.3})", get(&best), get(&p), s - best_score);
                    best = p;
                    best_score = s;
                }
            }
        }
        step = step.sqrt();
    }
    eprintln!("tune-taau: best {best_score:.3} dB ({:+.3} over the fixed-head baseline); per scene, fixed head -> TAAU:", best_score - fixed);
    for c in &cases {
        let (a, b) = (case_score(c, &HeadSource::Fixed(o.fixed), o), case_score(c, &HeadSource::Classic(best), o));
        eprintln!("  {:<18} {a:.2} -> {b:.2} dB ({:+.2})", c.name, b - a);
    }
    println!("{}", serde_json::to_string_pretty(&best)?);
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_files_fill_missing_fields_with_the_defaults_and_refuse_unknown_ones() {
        let dir = std::env::temp_dir().join(format!("tessel-tune-start-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(&good, r#"{"cap": 2.5, "keys_a": -0.7}"#).unwrap();
        let p = read_params(&good).unwrap();
        assert_eq!((p.cap, p.keys_a), (2.5, -0.7));
        assert_eq!(p.sigma, TaauParams::default().sigma);
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"capp": 2.5}"#).unwrap();
        let e = read_params(&bad).unwrap_err().to_string();
        assert!(e.contains("bad.json") && e.contains("'capp' is not a TAAU parameter"), "{e}");
        std::fs::write(&bad, r#"{"cap": "wide"}"#).unwrap();
        assert!(read_params(&bad).unwrap_err().to_string().contains("not a number"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
