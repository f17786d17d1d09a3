//! `tessel demo`: the shipped model on a built-in scene; images, a side-by-side picture and the
//! quality table.

use std::path::{Path, PathBuf};

use anyhow::Result;
use tessel_model::imageio::{display_rgb, write_png_rgb};
use tessel_model::metrics::bicubic_upscale;
use tessel_model::sequence::{decode_floats, Sequence};

use crate::cli::common::{find_model, NetworkChoice};
use crate::cli::compare::{compare, print_table};
use crate::cli::replay::{output_name, replay, ReplayOptions};
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
    say!("device: CPU reference (f32, {} threads); Vulkan and HIP network backends are not built yet", rayon::current_num_threads());
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
            replay(&frames_json, &net, &opts(NetworkChoice::Cpu))?;
            dirs.push(net);
        }
        Some(m) => say!("model '{}' is UNTRAINED (test weights): showing the TAAU baseline only", m.name),
        None => say!("no trained model is shipped in models/ yet: showing the non-neural TAAU baseline (the same reconstruction with fixed head values)"),
    }
    let report = compare(&dirs, &frames_json, 8)?;
    print_table(&report);
    tessel_model::error::write_file_atomic(&o.out.join("compare.json"), &serde_json::to_vec_pretty(&report)?)?;

    let seq = Sequence::open(&frames_json)?;
    let last = seq.len() - 1;
    let pic = o.out.join("side_by_side.png");
    side_by_side(&seq, last, &dirs, &pic)?;
    say!("outputs: {} (PNG per frame in each method's folder)", o.out.display());
    say!("side by side, frame {last}: {} (left to right: bicubic, {}, ground truth; bottom row: 3x centre crop)", pic.display(), dirs.iter().map(|d| d.file_name().unwrap().to_string_lossy().to_string()).collect::<Vec<_>>().join(", "));
    Ok(())
}

/// One picture: each method's frame in a row, and below each a 3x magnified centre crop.
fn side_by_side(seq: &Sequence, i: usize, dirs: &[PathBuf], path: &Path) -> Result<()> {
    let (w, h) = seq.output();
    let f = seq.load_frame(i)?;
    let e = seq.settings().exposure.value().unwrap_or(1.0);
    let mut panels = vec![display_rgb(&bicubic_upscale(&f, (w, h)), e)];
    for d in dirs {
        let bytes = std::fs::read(d.join(output_name(i)))?;
        panels.push(display_rgb(&decode_floats(&bytes, seq.json.bits), e));
    }
    if let Some(r) = &f.reference {
        panels.push(display_rgb(r, e));
    }
    let gap = 4;
    let cw = panels.len() * w + (panels.len() - 1) * gap;
    let ch = 2 * h + gap;
    let mut canvas = vec![32u8; cw * ch * 3];
    let (cx0, cy0) = (w / 2 - w / 6, h / 2 - h / 6);
    for (k, p) in panels.iter().enumerate() {
        let x0 = k * (w + gap);
        for y in 0..h {
            for x in 0..w {
                let src = (y * w + x) * 3;
                let dst = (y * cw + x0 + x) * 3;
                canvas[dst..dst + 3].copy_from_slice(&p[src..src + 3]);
                let (sx, sy) = (cx0 + x / 3, cy0 + y / 3);
                let src = (sy * w + sx) * 3;
                let dst = ((h + gap + y) * cw + x0 + x) * 3;
                canvas[dst..dst + 3].copy_from_slice(&p[src..src + 3]);
            }
        }
    }
    write_png_rgb(path, cw, ch, canvas)?;
    Ok(())
}
