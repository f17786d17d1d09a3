//! Quality metrics on tonemapped colour (T(e x) = e x / (1 + e x), peak 1): PSNR, SSIM on luma,
//! a temporal-stability figure; and the bicubic baseline.

use rayon::prelude::*;

use crate::frame::FrameData;
use crate::sample::{catmull_rom, Plane};
use crate::tonemap::{luma, tonemap};

/// Tonemapped RGB of linear RGBA under an exposure.
pub fn tonemapped_rgb(rgba: &[f32], exposure: f32) -> Vec<f32> {
    rgba.chunks_exact(4).flat_map(|p| [0, 1, 2].map(|c| tonemap(p[c].max(0.0) * exposure))).collect()
}

pub fn mse(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum::<f64>() / a.len() as f64
}

/// PSNR (dB) of tonemapped RGB against tonemapped RGB, peak 1. Identical images give 200.
pub fn psnr_tm(a: &[f32], b: &[f32]) -> f64 {
    let m = mse(a, b);
    if m <= 1e-20 {
        200.0
    } else {
        10.0 * (1.0 / m).log10()
    }
}

/// PSNR (dB) of `a` against `reference` with the reference's value range as the peak (for
/// tensors such as tokens, head or history): 200 when equal, NaN when any value is NaN. The
/// slices must have the same length.
pub fn psnr_range(a: &[f32], reference: &[f32]) -> f64 {
    assert_eq!(a.len(), reference.len(), "psnr_range: lengths differ");
    let lo = reference.iter().copied().fold(f32::MAX, f32::min) as f64;
    let hi = reference.iter().copied().fold(f32::MIN, f32::max) as f64;
    let mse = a.iter().zip(reference).map(|(x, y)| ((x - y) as f64).powi(2)).sum::<f64>() / a.len().max(1) as f64;
    if mse == 0.0 {
        200.0
    } else if mse.is_nan() {
        f64::NAN
    } else {
        10.0 * ((hi - lo).max(1e-6).powi(2) / mse).log10()
    }
}

fn gaussian_kernel() -> [f32; 11] {
    let mut k = [0.0f32; 11];
    for (i, v) in k.iter_mut().enumerate() {
        let x = i as f32 - 5.0;
        *v = (-x * x / (2.0 * 1.5 * 1.5)).exp();
    }
    let s: f32 = k.iter().sum();
    k.map(|v| v / s)
}

fn blur(img: &[f32], w: usize, h: usize, k: &[f32; 11]) -> Vec<f32> {
    let mut tmp = vec![0.0f32; w * h];
    tmp.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, o) in row.iter_mut().enumerate() {
            *o = (0..11).map(|i| k[i] * img[y * w + (x as i64 + i as i64 - 5).clamp(0, w as i64 - 1) as usize]).sum();
        }
    });
    let mut out = vec![0.0f32; w * h];
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, o) in row.iter_mut().enumerate() {
            *o = (0..11).map(|i| k[i] * tmp[(y as i64 + i as i64 - 5).clamp(0, h as i64 - 1) as usize * w + x]).sum();
        }
    });
    out
}

/// SSIM of the luma of two tonemapped RGB images (11x11 Gaussian window, sigma 1.5).
pub fn ssim_tm(a: &[f32], b: &[f32], w: usize, h: usize) -> f64 {
    let la: Vec<f32> = a.chunks_exact(3).map(|p| luma([p[0], p[1], p[2]])).collect();
    let lb: Vec<f32> = b.chunks_exact(3).map(|p| luma([p[0], p[1], p[2]])).collect();
    let k = gaussian_kernel();
    let prod = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).collect::<Vec<f32>>();
    let (ma, mb) = (blur(&la, w, h, &k), blur(&lb, w, h, &k));
    let (saa, sbb, sab) = (blur(&prod(&la, &la), w, h, &k), blur(&prod(&lb, &lb), w, h, &k), blur(&prod(&la, &lb), w, h, &k));
    let (c1, c2) = (0.01f64 * 0.01, 0.03f64 * 0.03);
    let mut sum = 0.0f64;
    for i in 0..w * h {
        let (mx, my) = (ma[i] as f64, mb[i] as f64);
        let vx = saa[i] as f64 - mx * mx;
        let vy = sbb[i] as f64 - my * my;
        let cxy = sab[i] as f64 - mx * my;
        sum += ((2.0 * mx * my + c1) * (2.0 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2));
    }
    sum / (w * h) as f64
}

/// Temporal error of one frame pair: RMS of (out_t - out_{t-1}) - (ref_t - ref_{t-1}) over
/// tonemapped RGB. Lower is steadier; 0 means the output changes exactly as the truth does.
pub fn temporal_rms(out: &[f32], out_prev: &[f32], r: &[f32], r_prev: &[f32]) -> f64 {
    let s: f64 = (0..out.len())
        .map(|i| (((out[i] - out_prev[i]) - (r[i] - r_prev[i])) as f64).powi(2))
        .sum();
    (s / out.len() as f64).sqrt()
}

/// The bicubic baseline: the render colour resampled (Catmull-Rom, jitter-aware: render pixel
/// (x, y) holds the sample at (x + 0.5 + jx, y + 0.5 + jy)) to the output size. Linear RGBA.
pub fn bicubic_upscale(f: &FrameData, out: (usize, usize)) -> Vec<f32> {
    let (rw, rh) = f.render;
    let mut src = Plane::new(rw, rh, 4);
    src.data.copy_from_slice(&f.color);
    crate::tonemap::sanitize_color(&mut src.data);
    let (ow, oh) = out;
    let mut dst = vec![0.0f32; ow * oh * 4];
    dst.par_chunks_mut(ow * 4).enumerate().for_each(|(y, row)| {
        for x in 0..ow {
            let px = (x as f32 + 0.5) * rw as f32 / ow as f32 - f.jitter[0];
            let py = (y as f32 + 0.5) * rh as f32 / oh as f32 - f.jitter[1];
            let v: [f32; 4] = catmull_rom(&src, px, py, 0);
            for c in 0..3 {
                row[x * 4 + c] = v[c].max(0.0);
            }
            row[x * 4 + 3] = 1.0;
        }
    });
    dst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psnr_by_hand() {
        let a = vec![0.5f32; 30];
        let mut b = a.clone();
        b.iter_mut().for_each(|v| *v += 0.1);
        assert!((psnr_tm(&a, &b) - 20.0).abs() < 1e-4);
        assert_eq!(psnr_tm(&a, &a), 200.0);
    }

    #[test]
    fn ssim_is_one_for_equal_and_lower_for_noise() {
        let (w, h) = (32, 24);
        let a: Vec<f32> = (0..w * h * 3).map(|i| ((i * 37) % 101) as f32 / 101.0).collect();
        assert!((ssim_tm(&a, &a, w, h) - 1.0).abs() < 1e-9);
        let b: Vec<f32> = a.iter().enumerate().map(|(i, v)| v + if i % 2 == 0 { 0.2 } else { -0.2 }).collect();
        assert!(ssim_tm(&a, &b, w, h) < 0.9);
    }

    #[test]
    fn temporal_is_zero_when_changes_match() {
        let r0 = vec![0.1f32, 0.2, 0.3];
        let r1 = vec![0.2f32, 0.2, 0.5];
        let o0 = vec![0.15f32, 0.25, 0.3];
        let o1 = vec![0.25f32, 0.25, 0.5];
        assert!(temporal_rms(&o1, &o0, &r1, &r0) < 1e-7);
        assert!((temporal_rms(&o0, &o1, &r1, &r0) - ((0.04f64 + 0.16) / 3.0).sqrt()).abs() < 1e-6);
    }
}
