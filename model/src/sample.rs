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

/// Catmull-Rom sample of channels [c0, c0 + N) at (px, py) in pixel units.
pub fn catmull_rom<const N: usize>(img: &Plane, px: f32, py: f32, c0: usize) -> [f32; N] {
    let (ux, uy) = (px - 0.5, py - 0.5);
    let (ix, iy) = (ux.floor(), uy.floor());
    let wx = catmull_rom_weights(ux - ix);
    let wy = catmull_rom_weights(uy - iy);
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
