//! The reconstruction: jitter-aware Gaussian gather with the predicted width, history
//! rectification with the predicted strength, blend with the predicted weight, bounded residual
//! correction; output un-tonemapped; history written. Smooth or continuous functions only.

use rayon::prelude::*;

use crate::config::{HEAD_CHANNELS, TOKEN, TOKEN_PIXELS};
use crate::frame::{History, Prepared};
use crate::head::{decode, HeadParams};
use crate::input_stage::{pixel_context, PixelContext};
use crate::network::layers::round_f16;
use crate::tonemap::{untonemap, Y_MAX};

/// One pixel's result: the tonemapped output (what history keeps) and the memory to keep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PixelOut {
    pub color: [f32; 3],
    pub near: f32,
    pub memory: [f32; 2],
}

pub fn reconstruct_pixel(ctx: &PixelContext, p: &HeadParams) -> PixelOut {
    // Gaussian gather; weights relative to the nearest sample so the sum never underflows.
    let d2min = ctx.d2.iter().copied().fold(f32::MAX, f32::min);
    let inv = 1.0 / (2.0 * p.sigma * p.sigma);
    let (mut acc, mut wsum) = ([0.0f32; 3], 0.0f32);
    let (mut mn, mut mx) = ([f32::MAX; 3], [f32::MIN; 3]);
    for k in 0..9 {
        let w = (-(ctx.d2[k] - d2min) * inv).exp();
        wsum += w;
        for c in 0..3 {
            acc[c] += w * ctx.c[k][c];
            mn[c] = mn[c].min(ctx.c[k][c]);
            mx[c] = mx[c].max(ctx.c[k][c]);
        }
    }
    let alpha = p.blend * ctx.valid;
    let mut color = [0.0f32; 3];
    for c in 0..3 {
        let cur = acc[c] / wsum;
        let h = ctx.hist[c];
        let rect = h + p.clamp * (h.clamp(mn[c], mx[c]) - h);
        let o = alpha * rect + (1.0 - alpha) * cur + p.residual[c] * (mx[c] - mn[c]);
        color[c] = o.clamp(0.0, Y_MAX);
    }
    PixelOut { color, near: ctx.near[4], memory: p.memory }
}

/// Where the head of pixel (x, y) starts in the head buffer (token-major, padded grid width).
#[inline]
pub fn head_index(x: usize, y: usize, padded_w: usize) -> usize {
    let token = (y / TOKEN) * padded_w + x / TOKEN;
    (token * TOKEN_PIXELS + (y % TOKEN) * TOKEN + x % TOKEN) * HEAD_CHANNELS
}

/// Where the reconstruction's per-pixel controls come from.
pub enum HeadInput<'a> {
    /// The network's head buffer (token-major, padded width in tokens).
    Buffer { head: &'a [f32], padded_w: usize },
    /// The same controls everywhere (the non-neural baseline).
    Fixed(HeadParams),
}

/// Reconstructs the whole output. Returns linear RGBA; replaces `hist` with the new history
/// (rounded to f16, as every backend stores it).
pub fn reconstruct(f: &Prepared, hist: &mut History, head: &HeadInput) -> Vec<f32> {
    let (w, h) = (hist.color.width, hist.color.height);
    let mut pixels = vec![PixelOut { color: [0.0; 3], near: 0.0, memory: [0.0; 2] }; w * h];
    {
        let hist_ref: &History = hist;
        pixels.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                let ctx = pixel_context(x, y, f, hist_ref);
                let params = match head {
                    HeadInput::Buffer { head, padded_w } => {
                        let i = head_index(x, y, *padded_w);
                        decode(&head[i..i + HEAD_CHANNELS])
                    }
                    HeadInput::Fixed(p) => *p,
                };
                *out = reconstruct_pixel(&ctx, &params);
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
    }
    hist.exposure = f.exposure;
    hist.valid = true;
    rgba
}
