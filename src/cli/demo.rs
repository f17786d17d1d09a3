//! `tessel demo`: the shipped model on a built-in scene; images, a side-by-side picture and the
//! quality table.

use std::path::PathBuf;

use anyhow::Result;
use tessel_model::sequence::Sequence;

use crate::cli::common::{find_model, NetworkChoice};
use crate::cli::compare::{compare, print_table};
use crate::cli::picture::{side_by_side, Layout};
use crate::cli::replay::{replay, ReplayOptions};
use crate::cli::scene::write_scene;
use crate::scene::{SceneKind, SceneSpec};

pub struct DemoOptions {
    pub out: PathBuf,
    pub model: Option<PathBuf>,
    pub output: (usize, usize),
    pub ratio: f32,
    pub frames: usize,
}

pub fn demo(o: &DemoOptions) -> Result<()> {
    let spec = SceneSpec { kind: SceneKind::Mixed, seed: 2026, ratio: o.ratio, frames: o.frames, output: o.output, spp: 16, reset_at: Some(o.frames / 2) };
    let (rw, rh) = spec.render_size();
    say!("tessel demo: built-in scene 'mixed' seed 2026, {rw}x{rh} -> {}x{} ({}x), {} frames", o.output.0, o.output.1, o.ratio, o.frames);
    let scene_dir = o.out.join("scene");
    let frames_json = write_scene(&spec, &scene_dir, 16, false)?;

    let model = find_model(o.model.as_deref())?;
    let mut dirs = Vec::new();
    let opts = |network| ReplayOptions { network, model: o.model.clone(), png: true, exr: false, quiet: false };
    let taau = o.out.join("taau");
    replay(&frames_json, &taau, &opts(NetworkChoice::None))?;
    dirs.push(taau);
    match &model {
        Some(m) if m.trained => {
            let net = o.out.join("tessel");
            // The best device present (Vulkan, lavapipe included, else the CPU reference).
            let r = replay(&frames_json, &net, &opts(NetworkChoice::Auto))?;
            say!("{} ({:.1} ms/frame wall)", r.network, r.mean_wall_ms);
            dirs.push(net);
        }
        Some(m) => say!("model '{}' is UNTRAINED (test weights): showing the TAAU baseline only", m.name),
        None => say!("no trained model is shipped in models/ yet: showing the classical TAAU (--network none) only"),
    }
    let report = compare(&dirs, &frames_json, 8)?;
    print_table(&report);
    tessel_model::error::write_file_atomic(&o.out.join("compare.json"), &serde_json::to_vec_pretty(&report)?)?;

    let seq = Sequence::open(&frames_json)?;
    let last = seq.len() - 1;
    let pic = o.out.join("side_by_side.png");
    let panels = side_by_side(&seq, last, &dirs, Layout::FramesAndCrops, &pic)?;
    say!("outputs: {} (PNG per frame in each method's folder)", o.out.display());
    say!("side by side, frame {last}: {} (left to right: {panels}; bottom row: 3x centre crop)", pic.display());
    Ok(())
}
