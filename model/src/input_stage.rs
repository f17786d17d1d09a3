//! The input stage: per output pixel, the context shared with the reconstruction (nearest jittered
//! sample, 3x3 neighbourhood, reprojected history) and the 16 features; then the per-pixel
//! embedding and the 4x4 space-to-depth into tokens.

use rayon::prelude::*;

use crate::config::{NetworkConfig, TokenGrid, PIXEL_FEATURES, TOKEN, TOKEN_PIXELS};
use crate::frame::{History, Prepared};
use crate::network::layers::{round_f16, silu, Linear};
use crate::sample::{bilinear, keys};
use crate::tonemap::{luma, reexpose, Y_MAX};

/// Everything about one output pixel that both the input stage and the reconstruction use.
#[derive(Clone, Debug)]
pub struct PixelContext {
    /// Output pixel centre in render pixels.
    pub pr: [f32; 2],
    /// Output pixel centre minus the nearest sample's position, render pixels.
    pub offset: [f32; 2],
    /// Squared distances (render px) from `pr` to the 3x3 neighbourhood samples, row-major, the
    /// nearest jittered sample in the middle.
    pub d2: [f32; 9],
    /// Tonemapped colours of those samples.
    pub c: [[f32; 3]; 9],
    /// Nearness of those samples.
    pub near: [f32; 9],
    /// Motion (output px) of those samples.
    pub motion: [[f32; 2]; 9],
    /// Previous-frame position of the output pixel centre (output px).
    pub prev: [f32; 2],
    /// Reprojected history colour under the current exposure.
    pub hist: [f32; 3],
    /// History validity in [0, 1]: 0 on reset, fading to 0 within one pixel outside the frame.
    pub valid: f32,
    /// Reprojected previous nearness.
    pub prev_near: f32,
    /// Reprojected feature memory.
    pub memory: [f32; 2],
    /// Reprojected accumulation count (config `accumulate`).
    pub count: f32,
}

/// The context of output pixel (x, y) (docs/NETWORK.md §2); `history_a` is the history kernel's
/// Keys parameter (config `history_a`; −0.5, Catmull-Rom, for the fixed head).
pub fn pixel_context(x: usize, y: usize, f: &Prepared, hist: &History, history_a: f32) -> PixelContext {
    let (ow, oh) = (hist.color.width as f32, hist.color.height as f32);
    let (rw, rh) = (f.color.width, f.color.height);
    let pr = [(x as f32 + 0.5) * rw as f32 / ow, (y as f32 + 0.5) * rh as f32 / oh];
    let j = f.jitter;
    let nx = ((pr[0] - j[0]).floor() as i64).clamp(0, rw as i64 - 1);
    let ny = ((pr[1] - j[1]).floor() as i64).clamp(0, rh as i64 - 1);
    let mut ctx = PixelContext {
        pr,
        offset: [pr[0] - (nx as f32 + 0.5 + j[0]), pr[1] - (ny as f32 + 0.5 + j[1])],
        d2: [0.0; 9],
        c: [[0.0; 3]; 9],
        near: [0.0; 9],
        motion: [[0.0; 2]; 9],
        prev: [0.0; 2],
        hist: [0.0; 3],
        valid: 0.0,
        prev_near: 0.0,
        memory: [0.0; 2],
        count: 0.0,
    };
    for k in 0..9 {
        let sx = (nx + (k % 3) as i64 - 1).clamp(0, rw as i64 - 1) as usize;
        let sy = (ny + (k / 3) as i64 - 1).clamp(0, rh as i64 - 1) as usize;
        let qx = sx as f32 + 0.5 + j[0];
        let qy = sy as f32 + 0.5 + j[1];
        ctx.d2[k] = (pr[0] - qx) * (pr[0] - qx) + (pr[1] - qy) * (pr[1] - qy);
        let c = f.color.at(sx, sy);
        ctx.c[k] = [c[0], c[1], c[2]];
        ctx.near[k] = f.near.at(sx, sy)[0];
        let m = f.motion.at(sx, sy);
        ctx.motion[k] = [m[0], m[1]];
    }
    let m = ctx.motion[4];
    let p = [x as f32 + 0.5 + m[0], y as f32 + 0.5 + m[1]];
    ctx.prev = p;
    if hist.valid && !f.reset {
        let outside = 0.0f32.max(-p[0]).max(p[0] - ow).max(-p[1]).max(p[1] - oh);
        ctx.valid = (1.0 - outside).clamp(0.0, 1.0);
    }
    let h: [f32; 3] = keys(&hist.color, p[0], p[1], 0, history_a);
    ctx.hist = h.map(|v| reexpose(v.clamp(0.0, Y_MAX), hist.exposure, f.exposure));
    ctx.prev_near = bilinear::<1>(&hist.near, p[0], p[1], 0)[0];
    ctx.memory = bilinear(&hist.memory, p[0], p[1], 0);
    ctx.count = bilinear::<1>(&hist.count, p[0], p[1], 0)[0];
    ctx
}

/// The 16 raw features of a pixel (docs/NETWORK.md, "Input stage").
pub fn features(ctx: &PixelContext) -> [f32; PIXEL_FEATURES] {
    let mut f = [0.0f32; PIXEL_FEATURES];
    f[0..3].copy_from_slice(&ctx.c[4]);
    f[3] = ctx.offset[0];
    f[4] = ctx.offset[1];
    f[5..8].copy_from_slice(&ctx.hist);
    let (mut nmin, mut nmax) = (f32::MAX, f32::MIN);
    let (mut lmin, mut lmax) = (f32::MAX, f32::MIN);
    let mut mdisc = 0.0f32;
    for k in 0..9 {
        nmin = nmin.min(ctx.near[k]);
        nmax = nmax.max(ctx.near[k]);
        let l = luma(ctx.c[k]);
        lmin = lmin.min(l);
        lmax = lmax.max(l);
        let dx = ctx.motion[k][0] - ctx.motion[4][0];
        let dy = ctx.motion[k][1] - ctx.motion[4][1];
        mdisc = mdisc.max((dx * dx + dy * dy).sqrt());
    }
    f[8] = (nmax - nmin) / (nmax + 1e-3);
    f[9] = mdisc / (1.0 + mdisc);
    let a = ctx.near[4];
    f[10] = (a - ctx.prev_near).abs() / (a.max(ctx.prev_near) + 1e-3);
    f[11] = ctx.valid;
    f[12] = lmin;
    f[13] = lmax;
    f[14] = ctx.memory[0];
    f[15] = ctx.memory[1];
    f
}

/// Per-pixel features of the whole output, row-major, PIXEL_FEATURES per pixel.
pub fn feature_image(f: &Prepared, hist: &History, history_a: f32) -> Vec<f32> {
    let (w, h) = (hist.color.width, hist.color.height);
    let mut out = vec![0.0f32; w * h * PIXEL_FEATURES];
    out.par_chunks_mut(w * PIXEL_FEATURES).enumerate().for_each(|(y, row)| {
        for x in 0..w {
            let ctx = pixel_context(x, y, f, hist, history_a);
            row[x * PIXEL_FEATURES..(x + 1) * PIXEL_FEATURES].copy_from_slice(&features(&ctx));
        }
    });
    out
}

/// The token buffer: per token of the padded level-0 grid (row-major), channel
/// (sy * 4 + sx) * P + p holds the per-pixel embedding SiLU(W f + b)[p] of pixel (4tx+sx, 4ty+sy),
/// or 0 for pixels outside the output. Rounded to f16, as the buffer holds f16.
pub fn tokens(cfg: &NetworkConfig, grid: &TokenGrid, pixel_embed: &Linear, feats: &[f32]) -> Vec<f32> {
    let p = cfg.pixel_embed;
    let tc = cfg.token_channels();
    let (w, h) = (grid.out_w, grid.out_h);
    let mut out = vec![0.0f32; grid.padded_w * grid.padded_h * tc];
    out.par_chunks_mut(grid.padded_w * tc).enumerate().for_each(|(ty, row)| {
        let mut e = vec![0.0f32; p];
        for tx in 0..grid.padded_w {
            for s in 0..TOKEN_PIXELS {
                let (x, y) = (tx * TOKEN + s % TOKEN, ty * TOKEN + s / TOKEN);
                if x >= w || y >= h {
                    continue;
                }
                let fi = (y * w + x) * PIXEL_FEATURES;
                pixel_embed.apply_row(&feats[fi..fi + PIXEL_FEATURES], &mut e);
                let dst = &mut row[tx * tc + s * p..tx * tc + (s + 1) * p];
                for (d, v) in dst.iter_mut().zip(&e) {
                    *d = round_f16(silu(*v));
                }
            }
        }
    });
    out
}
