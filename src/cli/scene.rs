//! `tessel scene`: writes a procedural sequence in the frame-sequence format.

use std::path::{Path, PathBuf};

use anyhow::Result;
use tessel_model::sequence::{Settings, SequenceWriter};

use crate::cli::common::progress;
use crate::scene::{Scene, SceneSpec};

/// Generates `spec` into `dir` (raw f16 frames, ground truth, frames.json). Returns the JSON path.
pub fn write_scene(spec: &SceneSpec, dir: &Path, bits: u32, quiet: bool) -> Result<PathBuf> {
    let scene = Scene::new(spec.clone());
    let mut w = SequenceWriter::create(dir, spec.output, bits, Settings::default())?;
    let pb = progress(spec.frames, "scene");
    if quiet {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    for t in 0..spec.frames {
        w.add_frame(&scene.frame(t))?;
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(w.finish()?)
}
