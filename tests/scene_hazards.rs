//! The hazard scene kinds through the `tessel` binary: every kind deterministic and finite, and the
//! `light` kind's still camera (motion zero) under a light that changes the ground truth.

use std::path::{Path, PathBuf};
use std::process::Command;

use tessel_model::frame::FrameData;
use tessel_model::sequence::Sequence;

const KINDS: [&str; 4] = ["light", "translucent", "screen", "thin"];

/// Generates a 32-bit scene into a fresh directory under `d`.
fn scene(d: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = d.join(name);
    let mut all = vec!["scene", "--bits", "32", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = Command::new(env!("CARGO_BIN_EXE_tessel")).args(&all).output().expect("runs the binary");
    assert!(o.status.success(), "tessel {all:?} failed:\n{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn frames(dir: &Path) -> Vec<FrameData> {
    let s = Sequence::open(&dir.join("frames.json")).unwrap();
    (0..s.len()).map(|i| s.load_frame(i).unwrap()).collect()
}

/// Every file of the directory, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap()).map(|e| (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap())).collect();
    v.sort();
    v
}

#[test]
fn hazard_kinds_are_deterministic_and_finite() {
    let d = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let args = ["--kind", kind, "--seed", "7", "--size", "96x64", "--frames", "5"];
        let (a, b) = (scene(d.path(), &format!("{kind}-a"), &args), scene(d.path(), &format!("{kind}-b"), &args));
        assert_eq!(files(&a), files(&b), "{kind}: the same seed gives the same bytes");
        let other = scene(d.path(), &format!("{kind}-c"), &["--kind", kind, "--seed", "8", "--size", "96x64", "--frames", "5"]);
        let (fa, fc) = (frames(&a), frames(&other));
        assert_ne!(fa[1].reference, fc[1].reference, "{kind}: another seed, another scene");
        for (t, f) in fa.iter().enumerate() {
            assert_eq!(f.reset, t == 0 || t == 2, "{kind} frame {t}: a cut in the middle");
            let r = f.reference.as_ref().expect("ground truth");
            assert!(f.color.iter().chain(&f.motion).chain(&f.depth).chain(r).all(|v| v.is_finite()), "{kind} frame {t}");
            assert!(r.iter().all(|v| *v >= 0.0), "{kind} frame {t}");
        }
    }
}

/// |Mean| over `b` x `b` blocks of the channel-summed x - y (RGBA at `w` x `h`): the sampling noise
/// of the ground truth averages out, a change of lighting does not.
fn block_mean_changes(x: &[f32], y: &[f32], w: usize, h: usize, b: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for by in (0..h - b + 1).step_by(b) {
        for bx in (0..w - b + 1).step_by(b) {
            let mut s = 0.0;
            for yy in by..by + b {
                for xx in bx..bx + b {
                    let i = (yy * w + xx) * 4;
                    s += (0..3).map(|k| x[i + k] - y[i + k]).sum::<f32>();
                }
            }
            out.push((s / (b * b) as f32).abs());
        }
    }
    out
}

/// Without a cut the `light` kind keeps its camera still: the motion vectors are zero in every
/// frame, yet the ground truth changes from frame to frame where the light moves.
#[test]
fn light_changes_the_truth_under_zero_motion() {
    let d = tempfile::tempdir().unwrap();
    let dir = scene(d.path(), "light", &["--kind", "light", "--seed", "3", "--size", "128x72", "--frames", "4", "--reset-at", "0"]);
    let f = frames(&dir);
    for (t, fr) in f.iter().enumerate() {
        assert!(fr.motion.iter().all(|m| m.abs() < 1e-3), "frame {t}: a still camera over still surfaces");
    }
    for t in 1..4 {
        let c = block_mean_changes(f[t].reference.as_ref().unwrap(), f[t - 1].reference.as_ref().unwrap(), 128, 72, 8);
        let (max, moved) = (c.iter().fold(0.0f32, |a, b| a.max(*b)), c.iter().filter(|v| **v > 0.03).count());
        assert!(max > 0.1 && moved >= 4, "frame {t}: the light changes the truth (largest block change {max}, {moved} blocks moved)");
    }
}
