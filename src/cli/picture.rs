//! Side-by-side pictures of replay outputs: bicubic, each method, ground truth.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tessel_model::imageio::{display_rgb, write_png_rgb};
use tessel_model::metrics::bicubic_upscale;
use tessel_model::sequence::{decode_floats, Sequence};

use crate::cli::replay::output_name;

/// What goes in the picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Full frames in the top row, a 3x magnified centre crop of each below.
    FramesAndCrops,
    /// The magnified centre crops only (a third of the width and height, shown at full size).
    CropsOnly,
}

const GAP: usize = 4;
const ZOOM: usize = 3;

/// Writes frame `i` of every method in `dirs` beside bicubic and (when present) the ground truth,
/// left to right, as a PNG at `path`. Returns the panels' names, left to right.
pub fn side_by_side(seq: &Sequence, i: usize, dirs: &[PathBuf], layout: Layout, path: &Path) -> Result<String> {
    if i >= seq.len() {
        bail!("{}: frame {i} asked for the picture; the sequence has {} frames", seq.path.display(), seq.len());
    }
    let (w, h) = seq.output();
    let f = seq.load_frame(i)?;
    let e = seq.settings().exposure.value().unwrap_or(1.0);
    let mut panels = vec![display_rgb(&bicubic_upscale(&f, (w, h)), e)];
    for d in dirs {
        let file = d.join(output_name(i));
        let bytes = std::fs::read(&file).with_context(|| format!("{}: cannot read this output for the picture", file.display()))?;
        let px = decode_floats(&bytes, seq.json.bits);
        if px.len() != w * h * 4 {
            bail!("{}: {} values, expected {w}x{h}x4 for this sequence", file.display(), px.len());
        }
        panels.push(display_rgb(&px, e));
    }
    if let Some(r) = &f.reference {
        panels.push(display_rgb(r, e));
    }
    let names = legend(dirs, f.reference.is_some());
    let rows: &[bool] = match layout {
        Layout::FramesAndCrops => &[false, true],
        Layout::CropsOnly => &[true],
    };
    let cw = panels.len() * w + (panels.len() - 1) * GAP;
    let ch = rows.len() * h + (rows.len() - 1) * GAP;
    let mut canvas = vec![32u8; cw * ch * 3];
    let (cx0, cy0) = (w / 2 - w / (2 * ZOOM), h / 2 - h / (2 * ZOOM));
    for (k, p) in panels.iter().enumerate() {
        let x0 = k * (w + GAP);
        for (row, &zoomed) in rows.iter().enumerate() {
            let y0 = row * (h + GAP);
            for y in 0..h {
                for x in 0..w {
                    let (sx, sy) = if zoomed { (cx0 + x / ZOOM, cy0 + y / ZOOM) } else { (x, y) };
                    let src = (sy * w + sx) * 3;
                    let dst = ((y0 + y) * cw + x0 + x) * 3;
                    canvas[dst..dst + 3].copy_from_slice(&p[src..src + 3]);
                }
            }
        }
    }
    write_png_rgb(path, cw, ch, canvas)?;
    Ok(names)
}

/// "bicubic, a, b, ground truth": the panels of a picture, left to right.
fn legend(dirs: &[PathBuf], with_truth: bool) -> String {
    let mut names = vec!["bicubic".to_string()];
    names.extend(dirs.iter().map(|d| d.file_name().map_or_else(|| d.display().to_string(), |n| n.to_string_lossy().into_owned())));
    if with_truth {
        names.push("ground truth".into());
    }
    names.join(", ")
}
