//! Output images: half-float EXR (linear) and tonemapped 8-bit sRGB PNG.

use std::path::Path;

use crate::error::{Error, Result};
use crate::tonemap::tonemap;

/// Writes linear RGBA as a half-float EXR.
pub fn write_exr(path: &Path, w: usize, h: usize, rgba: &[f32]) -> Result<()> {
    use half::f16;
    exr::prelude::write_rgba_file(path, w, h, |x, y| {
        let i = (y * w + x) * 4;
        (f16::from_f32(rgba[i]), f16::from_f32(rgba[i + 1]), f16::from_f32(rgba[i + 2]), f16::from_f32(rgba[i + 3]))
    })
    .map_err(|e| Error::invalid(path, "exr", e.to_string()))
}

/// sRGB transfer of a [0, 1] value to 8 bits.
pub fn srgb8(v: f32) -> u8 {
    let v = v.clamp(0.0, 1.0);
    let s = if v <= 0.0031308 { 12.92 * v } else { 1.055 * v.powf(1.0 / 2.4) - 0.055 };
    (s * 255.0 + 0.5) as u8
}

/// Linear RGBA -> 8-bit sRGB RGB through the reversible tonemap (after `exposure`), so HDR
/// highlights keep their shape.
pub fn display_rgb(rgba: &[f32], exposure: f32) -> Vec<u8> {
    rgba.chunks_exact(4).flat_map(|p| [0, 1, 2].map(|c| srgb8(tonemap(p[c].max(0.0) * exposure) * 2.0))).collect()
}

pub fn write_png_rgb(path: &Path, w: usize, h: usize, rgb: Vec<u8>) -> Result<()> {
    let img = image::RgbImage::from_raw(w as u32, h as u32, rgb)
        .ok_or_else(|| Error::invalid(path, "png", format!("buffer does not hold {w}x{h} RGB")))?;
    img.save(path).map_err(|e| Error::invalid(path, "png", e.to_string()))
}

/// Writes linear RGBA as a tonemapped sRGB PNG.
pub fn write_png(path: &Path, w: usize, h: usize, rgba: &[f32], exposure: f32) -> Result<()> {
    write_png_rgb(path, w, h, display_rgb(rgba, exposure))
}
