//! `tessel check`, part b: a generated 32-frame sequence that stresses what the golden cases do
//! not: a reset in the middle, a render-size change without a reset, and NaN/+Inf/-Inf in the
//! colour, motion and depth of one early frame. Each backend runs with its own history.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use tessel_model::frame::FrameData;
use tessel_model::metrics::{psnr_tm, tonemapped_rgb};
use tessel_model::package::ModelPackage;
use tessel_model::sequence::Settings;

use crate::cli::backend::{open_backend, Backend};
use crate::cli::common::{progress, NetworkChoice};
use crate::scene::{Scene, SceneKind, SceneSpec};

/// What the sequence is; written into the check's JSON.
#[derive(Clone, Debug, Serialize)]
pub struct SequencePlan {
    pub kind: SceneKind,
    pub seed: u64,
    pub output: [usize; 2],
    pub frames: usize,
    pub reset_at: usize,
    /// Ratio of frames 0..switch_at, and of switch_at.. (a render-size change, no reset).
    pub ratios: [f32; 2],
    pub switch_at: usize,
    pub poisoned_frame: usize,
}

pub const PLAN: SequencePlan = SequencePlan {
    kind: SceneKind::Mixed,
    seed: 7,
    output: [192, 108],
    frames: 32,
    reset_at: 16,
    ratios: [2.0, 1.5],
    switch_at: 24,
    poisoned_frame: 5,
};

#[derive(Clone, Debug, Serialize)]
pub struct SequenceRow {
    pub frame: usize,
    pub render: [usize; 2],
    pub reset: bool,
    pub poisoned: bool,
    pub image_db: f64,
    pub sanitized: usize,
    pub cpu_sanitized: usize,
    /// Every output value of the backend is finite.
    pub finite: bool,
}

/// The frames, in memory (inputs only: the check compares backends, not against the truth).
pub fn frames(p: &SequencePlan) -> Result<Vec<FrameData>> {
    let spec = |ratio| SceneSpec { kind: p.kind, seed: p.seed, ratio, frames: p.frames, output: (p.output[0], p.output[1]), spp: 16, reset_at: Some(p.reset_at) };
    let (a, b) = (Scene::new(spec(p.ratios[0])), Scene::new(spec(p.ratios[1])));
    // The two ratios must show one world, or the switch would be a cut without a reset.
    if a.reference(p.switch_at) != b.reference(p.switch_at) {
        bail!("scene generator: {:?} seed {} differs between ratios {} and {} at frame {}", p.kind, p.seed, p.ratios[0], p.ratios[1], p.switch_at);
    }
    let mut v: Vec<FrameData> = (0..p.frames).map(|t| if t < p.switch_at { a.inputs(t) } else { b.inputs(t) }).collect();
    poison(&mut v[p.poisoned_frame]);
    Ok(v)
}

/// NaN, +Inf and -Inf in a block of colour, motion and depth values, and in a few scattered
/// pixels (every value here is replaced by sanitising).
fn poison(f: &mut FrameData) {
    let bad = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    let (w, h) = f.render;
    let mut pixels: Vec<usize> = (0..6).flat_map(|dy| (0..6).map(move |dx| (h / 2 + dy) * w + w / 3 + dx)).collect();
    pixels.extend([0, w - 1, w * h - 1, w * (h / 4) + 7]);
    for (k, &p) in pixels.iter().enumerate() {
        f.color[p * 4 + k % 3] = bad[k % 3];
        f.color[p * 4 + 3 - k % 2] = bad[(k + 1) % 3];
        f.motion[p * 2 + k % 2] = bad[(k + 2) % 3];
        f.depth[p] = bad[k % 3];
    }
}

/// Largest render size over the frames.
pub fn capacity(frames: &[FrameData]) -> (usize, usize) {
    frames.iter().fold((1, 1), |a, f| (a.0.max(f.render.0), a.1.max(f.render.1)))
}

/// Opens `choice` for the sequence (the model `pkg`, capacity for every frame).
pub fn open_for(choice: NetworkChoice, pkg: &ModelPackage, frames: &[FrameData], p: &SequencePlan) -> Result<Box<dyn Backend>> {
    open_backend(choice, Some(pkg), &Settings::default(), capacity(frames), (p.output[0], p.output[1]))
}

/// Runs the sequence through `be` (fresh, opened by `open_for`) and its CPU reference `cpu`
/// (fresh); a row per frame.
pub fn check_sequence(be: &mut dyn Backend, mut cpu: Box<dyn Backend>, frames: &[FrameData], p: &SequencePlan) -> Result<Vec<SequenceRow>> {
    let pb = progress(frames.len(), be.name());
    let mut rows = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let c = cpu.evaluate(f)?;
        let g = be.evaluate(f).with_context(|| format!("generated sequence frame {i}: {}", be.name()))?;
        let e = c.eval.exposure;
        rows.push(SequenceRow {
            frame: i,
            render: [f.render.0, f.render.1],
            reset: f.reset,
            poisoned: i == p.poisoned_frame,
            image_db: psnr_tm(&tonemapped_rgb(&g.eval.output, e), &tonemapped_rgb(&c.eval.output, e)),
            sanitized: g.eval.sanitized,
            cpu_sanitized: c.eval.sanitized,
            finite: g.eval.output.iter().all(|v| v.is_finite()),
        });
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_has_its_reset_size_change_and_poison() {
        let f = frames(&PLAN).unwrap();
        assert_eq!(f.len(), 32);
        let resets: Vec<usize> = (0..32).filter(|&t| f[t].reset).collect();
        assert_eq!(resets, [0, 16]);
        assert!(f[..24].iter().all(|x| x.render == (96, 54)) && f[24..].iter().all(|x| x.render == (128, 72)));
        assert_eq!(capacity(&f), (128, 72));
        let bad = |v: &[f32]| v.iter().filter(|x| !x.is_finite()).count();
        for (t, x) in f.iter().enumerate() {
            let n = (bad(&x.color), bad(&x.motion), bad(&x.depth));
            if t == PLAN.poisoned_frame {
                assert!(n.0 > 0 && n.1 > 0 && n.2 > 0, "{n:?}");
                for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    assert!(x.color.iter().any(|c| c.to_bits() == v.to_bits() || (v.is_nan() && c.is_nan())), "{v} missing");
                }
            } else {
                assert_eq!(n, (0, 0, 0), "frame {t}");
            }
        }
    }
}
