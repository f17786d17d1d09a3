//! The classical temporal upscaler (`--network none`): no network, the techniques of a
//! well-built TAAU. Per output pixel, in tonemapped colour:
//!
//! - **Current estimate**: a jitter-aware gather of the 4 x 4 render samples around the pixel
//!   centre with a narrow Gaussian (`sigma`, render px); its confidence q is a Gaussian
//!   (`confidence_sigma`, output px) of the distance from the pixel centre to the closest sample.
//! - **Motion**: the motion of the nearest surface in the 3 x 3 (the sample of greatest
//!   nearness), so edges move with their foreground.
//! - **History**: Keys' cubic (`keys_a`; −0.5 is Catmull-Rom) at the reprojected position,
//!   re-exposed; rejected outside the frame and on disocclusion (the reprojected nearness differs
//!   from the current one by more than `depth_tolerance`, relative).
//! - **Clipping**: YCoCg mean and standard deviation of the 3 x 3; the history is clipped toward
//!   the mean into the box mean ± `gamma` sigma (never narrower than the neighbourhood's
//!   extremes nor than `box_floor`; tuned, the box ended wider than any neighbourhood).
//! - **Accumulation**: a per-pixel sample count n kept in the history; out = (n h + q c) / (n + q).
//!   n grows by q up to a cap between `cap_static`
//!   (whole-pixel motion) and `cap` (half-pixel motion, where resampling blurs the history most),
//!   and shrinks where the history disagrees with the current estimate (`disagree`, per luma
//!   deviation of the neighbourhood above one), at motion edges (`motion_edge`) and where the
//!   clip acted (`reactive`).
//! - **Thin-feature locks**: where the 3 x 3's centre luma is a ridge or a valley (along a row, a
//!   column or a diagonal, by more than `lock_threshold` of the 3 x 3's range), the pixel is
//!   locked; the lock travels with the history (the count's second channel), fades by
//!   `lock_decay` a frame unless the ridge is seen again, and lets the count grow to `lock_cap`.
//!   Wires and fences thinner than a render pixel are caught by some jitter positions and missed
//!   by others: they need the long history that elsewhere costs detail (the caps above are short).
//!
//! The parameters were tuned on training scenes only (`tessel tune-taau`; held-out seeds 1001
//! and 1002 are never used for it).

use rayon::prelude::*;

use crate::frame::Prepared;
use crate::sample::{bilinear, keys_weights, Plane};
use crate::tonemap::{reexpose, untonemap, Y_MAX};

/// The classical upscaler's settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaauParams {
    /// Gaussian width of the current-frame gather, render px.
    pub sigma: f32,
    /// Gaussian width of the current frame's confidence, output px: a frame whose nearest sample
    /// lands far from the pixel centre counts for less against the history.
    pub confidence_sigma: f32,
    /// Clip box half-width in standard deviations of the 3 x 3 neighbourhood.
    pub gamma: f32,
    /// Smallest clip box half-width (tonemapped units, per YCoCg channel).
    pub box_floor: f32,
    /// Largest accumulated sample count where the history moves by fractional pixels (each
    /// frame's resampling blurs it)...
    pub cap: f32,
    /// ...and where it does not move (whole-pixel motion: the history is exact).
    pub cap_static: f32,
    /// The history's resampling kernel: Keys' cubic with this `a` (−0.5 is Catmull-Rom; below is
    /// sharper).
    pub keys_a: f32,
    /// Relative nearness mismatch above which the history is a disocclusion.
    pub depth_tolerance: f32,
    /// How strongly a clipped history shrinks the count (per unit of clip distance / box size).
    pub reactive: f32,
    /// How strongly the history's disagreement with the current estimate shrinks the count: per
    /// unit of |luma difference| / (the neighbourhood's luma deviation + `disagree_floor`) above 1.
    pub disagree: f32,
    pub disagree_floor: f32,
    /// How strongly a motion edge in the 3 x 3 (the largest motion difference to the nearest
    /// surface's, output px) shrinks the count: there the history mixes two surfaces.
    pub motion_edge: f32,
    /// Thin-feature locks: a pixel whose luma is a ridge or a valley across the 3 x 3 (along a
    /// row, a column or a diagonal, by more than this share of the 3 x 3's luma range) is
    /// locked...
    pub lock_threshold: f32,
    /// ...and a locked pixel's count may grow to this cap (where it is above the motion's cap;
    /// 0: no locks)...
    pub lock_cap: f32,
    /// ...while its lock, carried with the history, fades by this factor per frame unless the
    /// ridge is seen again (0: a lock lasts only the frames that see the ridge).
    pub lock_decay: f32,
}

impl Default for TaauParams {
    fn default() -> Self {
        // `tessel tune-taau` runs, each starting from the last (every kind at 1.5x, 2x, 3x,
        // 192x108, `--seeds 2`: seeds 100 and 101): 24.89 dB on those 54 scenes, +0.74 over
        // tessel-v6's fixed head (24.77 before the thin-feature locks, whose tuning also shortened
        // the other caps). The clip box ended wider than any neighbourhood (as the fixed head's
        // tuning found no clamp best): the disagreement weight does its work. Then two rounds on
        // the same seeds at 384x216, 32 frames scored from 8 (`--size 384x216 --frames 32 --from
        // 8 --rounds 1`, `--step 1.25`, then from its result `--step 1.118`): 25.315 -> 25.363 ->
        // 25.397 dB, mostly from a less sharp history resampling (keys_a -0.96 -> -0.86) and a
        // narrower gather (sigma 0.38 -> 0.34); larger frames hold more of what the small ones
        // rarely show (docs/MODEL.md, sixteenth session).
        TaauParams {
            sigma: 0.3403,
            confidence_sigma: 0.5731,
            gamma: 8.086,
            box_floor: 0.9401,
            cap: 0.8909,
            cap_static: 0.3809,
            keys_a: -0.8575,
            depth_tolerance: 1.224,
            reactive: 0.03068,
            disagree: 0.01027,
            disagree_floor: 0.1948,
            motion_edge: 0.5,
            lock_threshold: 0.9186,
            lock_cap: 2.739,
            lock_decay: 0.7655,
        }
    }
}

/// What the classical upscaler keeps between frames, at output size.
#[derive(Clone, Debug)]
pub struct TaauHistory {
    /// Tonemapped colour (under `exposure`) and nearness: 4 channels.
    pub color: Plane,
    /// Accumulated sample count and thin-feature lock, 2 channels.
    pub count: Plane,
    pub exposure: f32,
    pub valid: bool,
}

impl TaauHistory {
    pub fn new(w: usize, h: usize) -> Self {
        TaauHistory { color: Plane::new(w, h, 4), count: Plane::new(w, h, 2), exposure: 1.0, valid: false }
    }
    pub fn clear(&mut self) {
        self.color.data.iter_mut().for_each(|v| *v = 0.0);
        self.count.data.iter_mut().for_each(|v| *v = 0.0);
        self.valid = false;
    }
}

fn ycocg(c: [f32; 3]) -> [f32; 3] {
    let co = 0.5 * (c[0] - c[2]);
    let tmp = c[2] + co;
    let cg = 0.5 * (c[1] - tmp);
    [tmp + cg, co, cg]
}

fn rgb(y: [f32; 3]) -> [f32; 3] {
    let tmp = y[0] - y[2];
    let g = y[0] + y[2];
    let b = tmp - y[1];
    [b + 2.0 * y[1], g, b]
}

/// Clips `h` toward the box centre `mid` into [mid - ext, mid + ext]: the point where the
/// segment from `mid` to `h` leaves the box, and how far outside it was (1 = on the box).
fn clip_toward(h: [f32; 3], mid: [f32; 3], ext: [f32; 3]) -> ([f32; 3], f32) {
    let mut t = 1.0f32;
    for k in 0..3 {
        let d = (h[k] - mid[k]).abs();
        if d > ext[k] {
            t = t.min(ext[k] / d);
        }
    }
    let out = [mid[0] + (h[0] - mid[0]) * t, mid[1] + (h[1] - mid[1]) * t, mid[2] + (h[2] - mid[2]) * t];
    (out, if t < 1.0 { 1.0 / t } else { 1.0 })
}

/// The smallest 3 x 3 luma range (tonemapped) in which a ridge can lock a pixel: flat areas'
/// noise must not.
const LOCK_MIN_RANGE: f32 = 0.02;

/// 1 where the centre of a 3 x 3 of lumas (row-major) is a ridge or a valley along a row, a
/// column or a diagonal by more than `threshold` of the 3 x 3's range: a thin feature, which
/// jittered sampling catches in some frames and misses in others.
fn thin_feature(l: &[f32; 9], threshold: f32) -> f32 {
    let (lo, hi) = l.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let c = l[4];
    let ridge = [(3, 5), (1, 7), (0, 8), (2, 6)].iter().fold(0.0f32, |r, &(a, b)| r.max((c - l[a]).min(c - l[b])).max((l[a] - c).min(l[b] - c)));
    if hi - lo > LOCK_MIN_RANGE && ridge > threshold * (hi - lo) { 1.0 } else { 0.0 }
}

/// One output pixel's colour (tonemapped), nearness, count and lock.
#[derive(Clone, Copy)]
struct Px {
    color: [f32; 3],
    near: f32,
    count: f32,
    lock: f32,
}

/// One output pixel.
fn pixel(x: usize, y: usize, f: &Prepared, hist: &TaauHistory, p: &TaauParams, out: (usize, usize)) -> Px {
    let (rw, rh) = (f.color.width, f.color.height);
    let (w, h) = out;
    let pr = [(x as f32 + 0.5) * rw as f32 / w as f32, (y as f32 + 0.5) * rh as f32 / h as f32];
    let j = f.jitter;
    // The render sample nearest the centre, and the 4 x 4 around it.
    let nx = (pr[0] - j[0]).floor() as i64;
    let ny = (pr[1] - j[1]).floor() as i64;
    let clampx = |v: i64| v.clamp(0, rw as i64 - 1);
    let clampy = |v: i64| v.clamp(0, rh as i64 - 1);
    let inv = 1.0 / (2.0 * p.sigma * p.sigma);
    let (mut acc, mut wsum, mut d2min) = ([0.0f32; 3], 0.0f32, f32::MAX);
    let (sx_o, sy_o) = (w as f32 / rw as f32, h as f32 / rh as f32);
    let ox = if pr[0] - j[0] - nx as f32 >= 0.5 { 0 } else { -1 };
    let oy = if pr[1] - j[1] - ny as f32 >= 0.5 { 0 } else { -1 };
    for dy in -1..3i64 {
        for dx in -1..3i64 {
            let (sx, sy) = (nx + dx + ox, ny + dy + oy);
            let q = [sx as f32 + 0.5 + j[0], sy as f32 + 0.5 + j[1]];
            let d2 = (pr[0] - q[0]).powi(2) + (pr[1] - q[1]).powi(2);
            let wt = (-d2 * inv).exp();
            let (cx, cy) = (clampx(sx), clampy(sy));
            for (c, a) in acc.iter_mut().enumerate() {
                *a += wt * f.color.clamped(cx, cy, c);
            }
            wsum += wt;
            d2min = d2min.min(((pr[0] - q[0]) * sx_o).powi(2) + ((pr[1] - q[1]) * sy_o).powi(2));
        }
    }
    let cur = if wsum > 1e-12 { acc.map(|a| a / wsum) } else { [0, 1, 2].map(|c| f.color.clamped(clampx(nx), clampy(ny), c)) };
    // The 3 x 3 around the nearest sample: YCoCg moments and extremes; the nearest surface.
    let (mut m1, mut m2) = ([0.0f32; 3], [0.0f32; 3]);
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    let (mut best, mut best_near) = ((clampx(nx), clampy(ny)), f32::MIN);
    let mut motions = [[0.0f32; 2]; 9];
    let mut luma = [0.0f32; 9];
    for dy in -1..=1i64 {
        for dx in -1..=1i64 {
            let (sx, sy) = (clampx(nx + dx), clampy(ny + dy));
            let c = ycocg([f.color.clamped(sx, sy, 0), f.color.clamped(sx, sy, 1), f.color.clamped(sx, sy, 2)]);
            for k in 0..3 {
                m1[k] += c[k] / 9.0;
                m2[k] += c[k] * c[k] / 9.0;
                lo[k] = lo[k].min(c[k]);
                hi[k] = hi[k].max(c[k]);
            }
            motions[((dy + 1) * 3 + dx + 1) as usize] = [f.motion.clamped(sx, sy, 0), f.motion.clamped(sx, sy, 1)];
            luma[((dy + 1) * 3 + dx + 1) as usize] = c[0];
            let a = f.near.clamped(sx, sy, 0);
            if a > best_near {
                best_near = a;
                best = (sx, sy);
            }
        }
    }
    let q = (-d2min / (2.0 * p.confidence_sigma * p.confidence_sigma)).exp().clamp(1e-3, 1.0);
    let thin = if p.lock_cap > 0.0 { thin_feature(&luma, p.lock_threshold) } else { 0.0 };
    let fresh = Px { color: cur, near: best_near, count: q, lock: thin };
    if !hist.valid || f.reset {
        return fresh;
    }
    let m = [f.motion.clamped(best.0, best.1, 0), f.motion.clamped(best.0, best.1, 1)];
    let prev = [x as f32 + 0.5 + m[0], y as f32 + 0.5 + m[1]];
    if prev[0] < 0.0 || prev[1] < 0.0 || prev[0] > w as f32 || prev[1] > h as f32 {
        return fresh;
    }
    let prev_near = bilinear::<1>(&hist.color, prev[0], prev[1], 3)[0];
    if (best_near - prev_near).abs() > p.depth_tolerance * best_near.max(prev_near).max(1e-3) {
        return fresh;
    }
    let hc = keys_sample(&hist.color, prev[0], prev[1], p.keys_a);
    let hc = [0, 1, 2].map(|k| reexpose(hc[k].clamp(0.0, Y_MAX), hist.exposure, f.exposure));
    let [n_prev, lock_prev] = bilinear::<2>(&hist.count, prev[0], prev[1], 0);
    let n_prev = n_prev.max(0.0);
    // A lock follows its feature with the history and fades unless the ridge is seen again; a
    // locked pixel may accumulate longer.
    let lock = (lock_prev.clamp(0.0, 1.0) * p.lock_decay).max(thin);
    // Clip toward the mean into mean ± gamma sigma, never narrower than the floor nor than
    // the neighbourhood's own extremes.
    let sd = [0, 1, 2].map(|k| (m2[k] - m1[k] * m1[k]).max(0.0).sqrt());
    let ext = [0, 1, 2].map(|k| (p.gamma * sd[k]).max(p.box_floor).max(hi[k] - m1[k]).max(m1[k] - lo[k]));
    let hy = ycocg(hc);
    let (clipped, outside) = clip_toward(hy, m1, ext);
    let hist_rgb = rgb(clipped);
    // Whole-pixel motion resamples the history exactly; half-pixel motion blurs it most.
    let frac = |v: f32| { let f = v - v.floor(); 4.0 * f * (1.0 - f) };
    let blur = 0.5 * (frac(m[0]) + frac(m[1]));
    let cap = p.cap_static + (p.cap - p.cap_static) * blur;
    let cap = cap + lock * (p.lock_cap - cap).max(0.0);
    let edge = motions.iter().map(|v| (v[0] - m[0]).hypot(v[1] - m[1])).fold(0.0f32, f32::max);
    let z = (hy[0] - ycocg(cur)[0]).abs() / (sd[0] + p.disagree_floor);
    let shrink = (1.0 + p.reactive * (outside - 1.0)) * (1.0 + p.motion_edge * edge) * (1.0 + p.disagree * (z - 1.0).max(0.0));
    let n = (n_prev / shrink).min(cap);
    let mut o = [0.0f32; 3];
    for k in 0..3 {
        o[k] = ((n * hist_rgb[k] + q * cur[k]) / (n + q)).clamp(0.0, Y_MAX);
    }
    Px { color: o, near: best_near, count: (n + q).min(cap), lock }
}

/// The history colour (channels 0..3) at (px, py), pixel units, with Keys' cubic.
fn keys_sample(img: &Plane, px: f32, py: f32, a: f32) -> [f32; 3] {
    let (ux, uy) = (px - 0.5, py - 0.5);
    let (ix, iy) = (ux.floor(), uy.floor());
    let (wx, wy) = (keys_weights(ux - ix, a), keys_weights(uy - iy, a));
    let (ix, iy) = (ix as i64, iy as i64);
    let mut out = [0.0f32; 3];
    for (j, wyj) in wy.iter().enumerate() {
        for (i, wxi) in wx.iter().enumerate() {
            for (c, o) in out.iter_mut().enumerate() {
                *o += wyj * wxi * img.clamped(ix - 1 + i as i64, iy - 1 + j as i64, c);
            }
        }
    }
    out
}

/// Reconstructs the whole output with the classical upscaler; returns linear RGBA and replaces
/// the history (rounded to f16, as the other backends store theirs).
pub fn reconstruct(f: &Prepared, hist: &mut TaauHistory, p: &TaauParams) -> Vec<f32> {
    let (w, h) = (hist.color.width, hist.color.height);
    if f.reset {
        hist.clear();
    }
    let mut px = vec![Px { color: [0.0; 3], near: 0.0, count: 0.0, lock: 0.0 }; w * h];
    {
        let hr: &TaauHistory = hist;
        px.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, o) in row.iter_mut().enumerate() {
                *o = pixel(x, y, f, hr, p, (w, h));
            }
        });
    }
    let mut out = vec![0.0f32; w * h * 4];
    for (i, p) in px.iter().enumerate() {
        for k in 0..3 {
            let v = half::f16::from_f32(p.color[k]).to_f32();
            hist.color.data[i * 4 + k] = v;
            out[i * 4 + k] = untonemap(p.color[k]) / f.exposure;
        }
        hist.color.data[i * 4 + 3] = half::f16::from_f32(p.near).to_f32();
        hist.count.data[i * 2] = half::f16::from_f32(p.count).to_f32();
        hist.count.data[i * 2 + 1] = half::f16::from_f32(p.lock).to_f32();
        out[i * 4 + 3] = 1.0;
    }
    hist.exposure = f.exposure;
    hist.valid = true;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ycocg_round_trips() {
        for c in [[0.2f32, 0.5, 0.9], [1.0, 0.0, 0.0], [0.3, 0.3, 0.3]] {
            let r = rgb(ycocg(c));
            for k in 0..3 {
                assert!((r[k] - c[k]).abs() < 1e-6, "{c:?} -> {r:?}");
            }
        }
    }

    #[test]
    fn clipping_moves_toward_the_centre_and_measures_how_far() {
        let (o, out) = clip_toward([1.0, 0.0, 0.0], [0.0; 3], [0.25; 3]);
        assert_eq!(o, [0.25, 0.0, 0.0]);
        assert!((out - 4.0).abs() < 1e-6);
        let (o, out) = clip_toward([0.1, 0.1, 0.0], [0.0; 3], [0.25; 3]);
        assert_eq!((o, out), ([0.1, 0.1, 0.0], 1.0));
    }

    #[test]
    fn thin_features_are_ridges_and_valleys_not_edges_or_flat_areas() {
        let line = [0.2, 0.8, 0.2, 0.2, 0.8, 0.2, 0.2, 0.8, 0.2]; // a bright column through the centre
        let dark = line.map(|v: f32| 1.0 - v);
        let diagonal = [0.8, 0.2, 0.2, 0.2, 0.8, 0.2, 0.2, 0.2, 0.8];
        let edge = [0.2, 0.2, 0.8, 0.2, 0.2, 0.8, 0.2, 0.2, 0.8];
        let step = [0.2, 0.5, 0.8, 0.2, 0.5, 0.8, 0.2, 0.5, 0.8]; // a ramp: the centre is between
        let faint = [0.2, 0.21, 0.2, 0.2, 0.21, 0.2, 0.2, 0.21, 0.2]; // below LOCK_MIN_RANGE
        for (l, want) in [(line, 1.0), (dark, 1.0), (diagonal, 1.0), (edge, 0.0), (step, 0.0), (faint, 0.0)] {
            assert_eq!(thin_feature(&l, 0.5), want, "{l:?}");
        }
        // A ridge half the 3 x 3's range high: locked at threshold 0.4, not at 0.6.
        let half = [0.2, 0.5, 0.2, 0.2, 0.5, 0.2, 0.2, 0.5, 0.8];
        assert_eq!((thin_feature(&half, 0.4), thin_feature(&half, 0.6)), (1.0, 0.0));
    }

    /// A still scene with a one-pixel line that jittered sampling catches every other frame:
    /// locks keep it in the history (steadier output on the line, a count past the cap), leave
    /// the flat area unlocked, and store no lock when off.
    #[test]
    fn locks_steady_a_flickering_thin_line() {
        let (rw, rh, ow, oh) = (8, 8, 16, 16);
        let frame = |t: usize| {
            let mut color = Plane::new(rw, rh, 3);
            for y in 0..rh {
                for x in 0..rw {
                    let v = if x == 4 && t % 2 == 0 { 0.8 } else { 0.2 };
                    (0..3).for_each(|c| color.data[(y * rw + x) * 3 + c] = v);
                }
            }
            let mut near = Plane::new(rw, rh, 1);
            near.data.iter_mut().for_each(|v| *v = 0.5);
            Prepared { color, motion: Plane::new(rw, rh, 2), near, jitter: [0.0, 0.0], reset: t == 0, exposure: 1.0, sanitized: 0 }
        };
        let run = |p: &TaauParams| {
            let mut hist = TaauHistory::new(ow, oh);
            let outs: Vec<Vec<f32>> = (0..10).map(|t| reconstruct(&frame(t), &mut hist, p)).collect();
            // Frame-to-frame change of the line's output pixels (x = 8, 9), last two frames.
            let change = (0..oh).flat_map(|y| [8usize, 9].map(move |x| (y * ow + x) * 4)).map(|i| (outs[9][i] - outs[8][i]).abs()).sum::<f32>();
            (change, hist)
        };
        let off = TaauParams { lock_cap: 0.0, ..TaauParams::default() };
        let on = TaauParams { lock_threshold: 0.5, lock_cap: 6.0, lock_decay: 0.9, ..TaauParams::default() };
        let (c_off, h_off) = run(&off);
        let (c_on, h_on) = run(&on);
        assert!(c_on < 0.6 * c_off, "locked line changes by {c_on} a frame, unlocked by {c_off}");
        let lock = |h: &TaauHistory, x: usize, y: usize| h.count.data[(y * ow + x) * 2 + 1];
        assert!(lock(&h_on, 8, 8) > 0.5 && lock(&h_on, 2, 8) == 0.0 && lock(&h_off, 8, 8) == 0.0);
        assert!(h_on.count.data[(8 * ow + 8) * 2] > TaauParams::default().cap, "the locked count grows past the cap");
    }
}
