//! Sampling of images at continuous positions, with manual fetches and clamp-to-edge addressing,
//! exactly as every backend must do it (no hardware filtering). Pixel centres lie at i + 0.5.

/// A planar image of `ch` channels per pixel, row-major, top row first.
#[derive(Clone, Debug, PartialEq)]
pub struct Plane {
    pub width: usize,
    pub height: usize,
    pub ch: usize,
    pub data: Vec<f32>,
}

impl Plane {
    pub fn new(width: usize, height: usize, ch: usize) -> Self {
        Plane { width, height, ch, data: vec![0.0; width * height * ch] }
    }
    #[inline]
    pub fn at(&self, x: usize, y: usize) -> &[f32] {
        let i = (y * self.width + x) * self.ch;
        &self.data[i..i + self.ch]
    }
    /// Texel (x, y) with clamp-to-edge addressing, channel c.
    #[inline]
    pub fn clamped(&self, x: i64, y: i64, c: usize) -> f32 {
        let xi = x.clamp(0, self.width as i64 - 1) as usize;
        let yi = y.clamp(0, self.height as i64 - 1) as usize;
        self.data[(yi * self.width + xi) * self.ch + c]
    }
}

/// Catmull-Rom (Keys, a = -0.5) weights for fractional position f in [0, 1), taps -1..=2.
#[inline]
pub fn catmull_rom_weights(f: f32) -> [f32; 4] {
    [
        f * (-0.5 + f * (1.0 - 0.5 * f)),
        1.0 + f * f * (-2.5 + 1.5 * f),
        f * (0.5 + f * (2.0 - 1.5 * f)),
        f * f * (-0.5 + 0.5 * f),
    ]
}

/// Keys' cubic weights with parameter `a` at fraction f in [0, 1) for the taps at −1, 0, 1, 2
/// (a = −0.5 is Catmull-Rom; below it the kernel is sharper).
#[inline]
pub fn keys_weights(f: f32, a: f32) -> [f32; 4] {
    let near = |x: f32| ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    let far = |x: f32| ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    [far(1.0 + f), near(f), near(1.0 - f), far(2.0 - f)]
}

/// Catmull-Rom sample of channels [c0, c0 + N) at (px, py) in pixel units.
pub fn catmull_rom<const N: usize>(img: &Plane, px: f32, py: f32, c0: usize) -> [f32; N] {
    cubic(img, px, py, c0, catmull_rom_weights)
}

/// Keys' cubic (parameter `a`) sample of channels [c0, c0 + N) at (px, py) in pixel units; at
/// a = −0.5 exactly `catmull_rom`'s arithmetic.
pub fn keys<const N: usize>(img: &Plane, px: f32, py: f32, c0: usize, a: f32) -> [f32; N] {
    if a == -0.5 {
        return catmull_rom(img, px, py, c0);
    }
    cubic(img, px, py, c0, |f| keys_weights(f, a))
}

fn cubic<const N: usize>(img: &Plane, px: f32, py: f32, c0: usize, weights: impl Fn(f32) -> [f32; 4]) -> [f32; N] {
    let (ux, uy) = (px - 0.5, py - 0.5);
    let (ix, iy) = (ux.floor(), uy.floor());
    let wx = weights(ux - ix);
    let wy = weights(uy - iy);
    let (ix, iy) = (ix as i64, iy as i64);
    let mut out = [0.0f32; N];
    for (j, wyj) in wy.iter().enumerate() {
        let mut row = [0.0f32; N];
        for (i, wxi) in wx.iter().enumerate() {
            for (c, r) in row.iter_mut().enumerate() {
                *r += wxi * img.clamped(ix - 1 + i as i64, iy - 1 + j as i64, c0 + c);
            }
        }
        for c in 0..N {
            out[c] += wyj * row[c];
        }
    }
    out
}

/// Bilinear sample of channels [c0, c0 + N) at (px, py) in pixel units.
pub fn bilinear<const N: usize>(img: &Plane, px: f32, py: f32, c0: usize) -> [f32; N] {
    let (ux, uy) = (px - 0.5, py - 0.5);
    let (fx, fy) = (ux - ux.floor(), uy - uy.floor());
    let (ix, iy) = (ux.floor() as i64, uy.floor() as i64);
    let mut out = [0.0f32; N];
    for (c, o) in out.iter_mut().enumerate() {
        let a = img.clamped(ix, iy, c0 + c);
        let b = img.clamped(ix + 1, iy, c0 + c);
        let d = img.clamped(ix, iy + 1, c0 + c);
        let e = img.clamped(ix + 1, iy + 1, c0 + c);
        let top = a + (b - a) * fx;
        let bot = d + (e - d) * fx;
        *o = top + (bot - top) * fy;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp() -> Plane {
        let mut p = Plane::new(8, 6, 1);
        for y in 0..6 {
            for x in 0..8 {
                p.data[y * 8 + x] = 2.0 * x as f32 + 3.0 * y as f32;
            }
        }
        p
    }

    #[test]
    fn weights_sum_to_one_and_interpolate() {
        for i in 0..10 {
            let w = catmull_rom_weights(i as f32 / 10.0);
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
        assert_eq!(catmull_rom_weights(0.0), [0.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn keys_weights_interpolate_sum_to_one_and_match_catmull_rom() {
        for a in [-1.0f32, -0.75, -0.5, -0.25] {
            assert_eq!(keys_weights(0.0, a), [0.0, 1.0, 0.0, 0.0], "a = {a}");
            for i in 0..10 {
                let f = i as f32 / 10.0;
                let w = keys_weights(f, a);
                assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6, "a = {a}, f = {f}");
                // The first moment is f (a linear ramp comes through) for Catmull-Rom; other a keep
                // it at f = 0 and 1/2 only (by symmetry).
                let m = -w[0] + w[2] + 2.0 * w[3];
                assert_eq!((m - f).abs() < 1e-6, a == -0.5 || i == 0 || i == 5, "a = {a}, f = {f}: {m}");
            }
        }
        for i in 0..10 {
            let f = i as f32 / 10.0;
            let (k, c) = (keys_weights(f, -0.5), catmull_rom_weights(f));
            assert!(k.iter().zip(c).all(|(x, y)| (x - y).abs() < 1e-6), "{k:?} {c:?}");
        }
        // Sharper: the negative lobes deepen as a falls.
        assert!(keys_weights(0.5, -0.75)[0] < keys_weights(0.5, -0.5)[0]);
    }

    #[test]
    fn keys_sample_is_catmull_rom_at_a_half_and_interpolates_otherwise() {
        let p = ramp();
        let (c, k): ([f32; 1], [f32; 1]) = (catmull_rom(&p, 3.3, 2.8, 0), keys(&p, 3.3, 2.8, 0, -0.5));
        assert_eq!(c, k);
        // Sharper kernels interpolate the texels and keep a flat image flat.
        let s: [f32; 1] = keys(&p, 2.5, 4.5, 0, -0.8);
        assert!((s[0] - p.at(2, 4)[0]).abs() < 1e-5, "{s:?}");
        let mut flat = p.clone();
        flat.data.iter_mut().for_each(|v| *v = 0.375);
        let s: [f32; 1] = keys(&flat, 3.3, 2.8, 0, -0.8);
        assert!((s[0] - 0.375).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn samplers_reproduce_a_linear_ramp_inside() {
        let p = ramp();
        // At (3.75, 2.25) the ramp (in texel-index units) is 2 * 3.25 + 3 * 1.75 = 11.75.
        let c: [f32; 1] = catmull_rom(&p, 3.75, 2.25, 0);
        let b: [f32; 1] = bilinear(&p, 3.75, 2.25, 0);
        assert!((c[0] - 11.75).abs() < 1e-5, "{c:?}");
        assert!((b[0] - 11.75).abs() < 1e-5, "{b:?}");
        // At a pixel centre both return the texel.
        let c: [f32; 1] = catmull_rom(&p, 2.5, 4.5, 0);
        assert!((c[0] - p.at(2, 4)[0]).abs() < 1e-6);
    }

    #[test]
    fn clamp_to_edge_outside() {
        let p = ramp();
        let b: [f32; 1] = bilinear(&p, -5.0, -5.0, 0);
        assert_eq!(b[0], p.at(0, 0)[0]);
    }
}
