//! The reconstruction: jitter-aware Gaussian gather with the predicted width, history
//! rectification with the predicted strength, blend with the predicted weight, bounded residual
//! correction; output un-tonemapped; history written. Smooth or continuous functions only.

use rayon::prelude::*;

use crate::config::{CATMULL_ROM_A, HEAD_CHANNELS, TOKEN, TOKEN_PIXELS};
use crate::frame::{History, Prepared};
use crate::head::{decode, HeadParams};
use crate::input_stage::{pixel_context, PixelContext};
use crate::network::layers::round_f16;
use crate::tonemap::{untonemap, Y_MAX};

/// One pixel's result: the tonemapped output (what history keeps), the memory and the
/// accumulation count to keep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PixelOut {
    pub color: [f32; 3],
    pub near: f32,
    pub memory: [f32; 2],
    pub count: f32,
}

/// The accumulation count's cap (config `accumulate`, docs/NETWORK.md §6).
pub const ACCUM_MAX: f32 = 16.0;
/// Half-width of the accumulating reconstruction's clip box, in the neighbourhood's deviations.
pub const ACCUM_GAMMA: f32 = 1.0;

/// The history's weight before the blend: its validity, and with `accumulate` also n / (n + 1)
/// of its reprojected count n (0 on a fresh or disoccluded history).
#[inline]
pub fn history_weight(ctx: &PixelContext, accumulate: bool) -> f32 {
    if accumulate {
        ctx.valid * ctx.count / (ctx.count + 1.0)
    } else {
        ctx.valid
    }
}

pub fn reconstruct_pixel(ctx: &PixelContext, p: &HeadParams, accumulate: bool) -> PixelOut {
    // Gaussian gather; weights relative to the nearest sample so the sum never underflows.
    let d2min = ctx.d2.iter().copied().fold(f32::MAX, f32::min);
    let inv = 1.0 / (2.0 * p.sigma * p.sigma);
    let (mut acc, mut wsum) = ([0.0f32; 3], 0.0f32);
    let (mut mn, mut mx) = ([f32::MAX; 3], [f32::MIN; 3]);
    let (mut s1, mut s2) = ([0.0f32; 3], [0.0f32; 3]);
    for k in 0..9 {
        let w = (-(ctx.d2[k] - d2min) * inv).exp();
        wsum += w;
        for c in 0..3 {
            let v = ctx.c[k][c];
            acc[c] += w * v;
            mn[c] = mn[c].min(v);
            mx[c] = mx[c].max(v);
            s1[c] += v;
            s2[c] += v * v;
        }
    }
    let alpha = p.blend * history_weight(ctx, accumulate);
    let mut color = [0.0f32; 3];
    for c in 0..3 {
        let cur = acc[c] / wsum;
        let h = ctx.hist[c];
        // The clip box: the neighbourhood's extremes, or (accumulating) its mean +- a deviation.
        let (lo, hi) = if accumulate {
            let mean = s1[c] / 9.0;
            let dev = (s2[c] / 9.0 - mean * mean).max(0.0).sqrt();
            (mean - ACCUM_GAMMA * dev, mean + ACCUM_GAMMA * dev)
        } else {
            (mn[c], mx[c])
        };
        let rect = h + p.clamp * (h.clamp(lo, hi) - h);
        let o = alpha * rect + (1.0 - alpha) * cur + p.residual[c] * (mx[c] - mn[c]);
        color[c] = o.clamp(0.0, Y_MAX);
    }
    // The count the blend implies: alpha / (1 - alpha) samples of history plus this one (alpha < 1:
    // the history weight stays below ACCUM_MAX / (ACCUM_MAX + 1)).
    let count = if accumulate { (alpha / (1.0 - alpha) + 1.0).min(ACCUM_MAX) } else { 0.0 };
    PixelOut { color, near: ctx.near[4], memory: p.memory, count }
}

/// Where the head of pixel (x, y) starts in the head buffer (token-major, padded grid width).
#[inline]
pub fn head_index(x: usize, y: usize, padded_w: usize) -> usize {
    let token = (y / TOKEN) * padded_w + x / TOKEN;
    (token * TOKEN_PIXELS + (y % TOKEN) * TOKEN + x % TOKEN) * HEAD_CHANNELS
}

/// Where the reconstruction's per-pixel controls come from.
pub enum HeadInput<'a> {
    /// The network's head buffer (token-major, padded width in tokens), whether the package
    /// accumulates (config `accumulate`) and its history kernel (config `history_a`).
    Buffer { head: &'a [f32], padded_w: usize, accumulate: bool, history_a: f32 },
    /// The same controls everywhere (the non-neural baseline).
    Fixed(HeadParams),
}

/// Reconstructs the whole output. Returns linear RGBA; replaces `hist` with the new history
/// (rounded to f16, as every backend stores it).
pub fn reconstruct(f: &Prepared, hist: &mut History, head: &HeadInput) -> Vec<f32> {
    let (w, h) = (hist.color.width, hist.color.height);
    let mut pixels = vec![PixelOut { color: [0.0; 3], near: 0.0, memory: [0.0; 2], count: 0.0 }; w * h];
    let accumulate = matches!(head, HeadInput::Buffer { accumulate: true, .. });
    // The fixed head keeps the contract's Catmull-Rom history.
    let history_a = match head {
        HeadInput::Buffer { history_a, .. } => *history_a,
        HeadInput::Fixed(_) => CATMULL_ROM_A,
    };
    {
        let hist_ref: &History = hist;
        pixels.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                let ctx = pixel_context(x, y, f, hist_ref, history_a);
                let params = match head {
                    HeadInput::Buffer { head, padded_w, .. } => {
                        let i = head_index(x, y, *padded_w);
                        decode(&head[i..i + HEAD_CHANNELS])
                    }
                    HeadInput::Fixed(p) => *p,
                };
                *out = reconstruct_pixel(&ctx, &params, accumulate);
            }
        });
    }
    let mut rgba = vec![0.0f32; w * h * 4];
    for (i, p) in pixels.iter().enumerate() {
        for c in 0..3 {
            let stored = round_f16(p.color[c]);
            hist.color.data[i * 3 + c] = stored;
            rgba[i * 4 + c] = untonemap(p.color[c]) / f.exposure;
        }
        rgba[i * 4 + 3] = 1.0;
        hist.near.data[i] = round_f16(p.near);
        hist.memory.data[i * 2] = round_f16(p.memory[0]);
        hist.memory.data[i * 2 + 1] = round_f16(p.memory[1]);
        hist.count.data[i] = round_f16(p.count);
    }
    hist.exposure = f.exposure;
    hist.valid = true;
    rgba
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(valid: f32, count: f32) -> PixelContext {
        PixelContext {
            pr: [0.5, 0.5],
            offset: [0.0; 2],
            d2: [0.5; 9],
            c: [[0.2, 0.4, 0.6]; 9],
            near: [0.5; 9],
            motion: [[0.0; 2]; 9],
            prev: [0.5, 0.5],
            hist: [0.3, 0.4, 0.5],
            valid,
            prev_near: 0.5,
            memory: [0.0; 2],
            count,
        }
    }

    fn params(blend: f32) -> HeadParams {
        HeadParams { blend, sigma: 0.5, clamp: 0.0, residual: [0.0; 3], memory: [0.0; 2] }
    }

    /// With `accumulate` the count climbs by one where the history is kept whole, restarts at 1 on
    /// a disocclusion, stops at the cap, and the blend takes n / (n + 1) of the history.
    #[test]
    fn the_accumulation_count_follows_the_blend() {
        let out = reconstruct_pixel(&ctx(1.0, 3.0), &params(1.0), true);
        assert!((out.count - 4.0).abs() < 1e-4, "{}", out.count);
        // alpha = 3/4: three quarters history (0.3), a quarter the flat current colour (0.2).
        assert!((out.color[0] - (0.75 * 0.3 + 0.25 * 0.2)).abs() < 1e-5, "{:?}", out.color);
        assert_eq!(reconstruct_pixel(&ctx(0.0, 9.0), &params(1.0), true).count, 1.0);
        assert_eq!(reconstruct_pixel(&ctx(1.0, ACCUM_MAX), &params(1.0), true).count, ACCUM_MAX);
        // A lower blend shortens it: alpha = 0.5 * 3/4 = 0.375 -> 0.6 + 1.
        assert!((reconstruct_pixel(&ctx(1.0, 3.0), &params(0.5), true).count - 1.6).abs() < 1e-4);
        // Without the flag: no count, the history's weight is its validity.
        let plain = reconstruct_pixel(&ctx(1.0, 3.0), &params(1.0), false);
        assert_eq!(plain.count, 0.0);
        assert!((plain.color[0] - 0.3).abs() < 1e-6);
    }

    /// The accumulating clip box is the mean +- one deviation: a flat neighbourhood pins the
    /// history to its colour at full strength, where the extremes' box would too.
    #[test]
    fn the_accumulating_clip_box_is_the_mean_and_deviation() {
        let mut c = ctx(1.0, 15.0);
        for (k, v) in c.c.iter_mut().enumerate() {
            *v = if k % 2 == 0 { [0.0; 3] } else { [1.0; 3] };
        }
        c.hist = [0.95; 3];
        let p = HeadParams { clamp: 1.0, ..params(1.0) };
        // mean 4/9, deviation sqrt(4/9 - 16/81) = sqrt(20)/9: the box tops out at (4 + sqrt 20) / 9.
        let top = (4.0 + 20f32.sqrt()) / 9.0;
        let alpha = 15.0 / 16.0;
        let cur = reconstruct_pixel(&c, &HeadParams { blend: 0.0, ..p }, true).color[0];
        let got = reconstruct_pixel(&c, &p, true).color[0];
        assert!((got - (alpha * top + (1.0 - alpha) * cur)).abs() < 1e-5, "{got} vs top {top}");
        // The extremes' box (0..1) leaves 0.95 as it is.
        let wide = reconstruct_pixel(&c, &p, false).color[0];
        assert!((wide - 0.95).abs() < 1e-5, "{wide}");
    }
}
