//! Procedural materials of the scenes: fine periodic patterns, thin lines, text-like glyphs,
//! value noise, HDR sparkles, flat colours. Everything is a pure function of a 2D position and a seed.

/// 32-bit integer hash (a murmur3-style finaliser over mixed inputs).
#[inline]
pub fn hash3(a: i32, b: i32, seed: u32) -> u32 {
    let mut h = seed ^ 0x9e37_79b9;
    for v in [a as u32, b as u32] {
        h ^= v.wrapping_mul(0x85eb_ca6b);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^ (h >> 16)
}

/// Hash to [0, 1).
#[inline]
pub fn unit(h: u32) -> f32 {
    (h >> 8) as f32 / (1u32 << 24) as f32
}

/// Smooth value noise in [0, 1).
pub fn value_noise(x: f32, y: f32, seed: u32) -> f32 {
    let (ix, iy) = (x.floor(), y.floor());
    let (fx, fy) = (x - ix, y - iy);
    let s = |t: f32| t * t * (3.0 - 2.0 * t);
    let (sx, sy) = (s(fx), s(fy));
    let (ix, iy) = (ix as i32, iy as i32);
    let v = |dx: i32, dy: i32| unit(hash3(ix + dx, iy + dy, seed));
    let top = v(0, 0) + (v(1, 0) - v(0, 0)) * sx;
    let bot = v(0, 1) + (v(1, 1) - v(0, 1)) * sx;
    top + (bot - top) * sy
}

/// Two octaves of value noise.
pub fn fbm(x: f32, y: f32, seed: u32) -> f32 {
    0.65 * value_noise(x, y, seed) + 0.35 * value_noise(2.03 * x + 17.0, 2.03 * y - 9.0, seed ^ 0x5bd1)
}

pub type Rgb = [f32; 3];

pub fn mix(a: Rgb, b: Rgb, t: f32) -> Rgb {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

/// A random albedo colour (linear, 0.02..0.9).
pub fn colour(h: u32) -> Rgb {
    let a = unit(h);
    let b = unit(h.rotate_left(11));
    let c = unit(h.rotate_left(22));
    [0.02 + 0.88 * a * a, 0.02 + 0.88 * b * b, 0.02 + 0.88 * c * c]
}

#[derive(Clone, Debug)]
pub enum Material {
    /// Square-wave stripes of `period` world units at `angle`.
    Stripes { period: f32, angle: f32, a: Rgb, b: Rgb },
    /// Checkerboard of `size` units.
    Checker { size: f32, a: Rgb, b: Rgb },
    /// Grid of thin lines `width` units wide every `spacing` units.
    Lines { spacing: f32, width: f32, line: Rgb, bg: Rgb },
    /// Rows of 5x7 glyphs from hashed bitmaps, glyph pixels of `scale` units.
    Text { scale: f32, ink: Rgb, paper: Rgb, seed: u32 },
    /// Smooth noise between two colours at `scale` units per cell.
    Noise { scale: f32, a: Rgb, b: Rgb, seed: u32 },
    /// Dark base with small HDR discs (radius `radius`, intensity up to `peak`).
    Sparkles { cell: f32, radius: f32, peak: f32, base: Rgb, seed: u32 },
    /// Concentric rings of `period` units around the origin (a zone plate of fine detail).
    Rings { period: f32, a: Rgb, b: Rgb },
    /// One flat colour (wires, fences; HDR allowed).
    Solid { c: Rgb },
}

impl Material {
    pub fn eval(&self, x: f32, y: f32) -> Rgb {
        match self {
            Material::Stripes { period, angle, a, b } => {
                let u = x * angle.cos() + y * angle.sin();
                if (u / period).rem_euclid(1.0) < 0.5 { *a } else { *b }
            }
            Material::Checker { size, a, b } => {
                let p = ((x / size).floor() as i64 + (y / size).floor() as i64).rem_euclid(2);
                if p == 0 { *a } else { *b }
            }
            Material::Lines { spacing, width, line, bg } => {
                let dx = (x / spacing).rem_euclid(1.0) * spacing;
                let dy = (y / spacing).rem_euclid(1.0) * spacing;
                if dx < *width || dy < *width { *line } else { *bg }
            }
            Material::Text { scale, ink, paper, seed } => {
                let (u, v) = (x / scale, y / scale);
                // Cells 6 x 9 glyph pixels: a 5x7 glyph, one column and two rows of spacing.
                let (cx, cy) = ((u / 6.0).floor() as i32, (v / 9.0).floor() as i32);
                let (px, py) = ((u - cx as f32 * 6.0).floor() as i32, (v - cy as f32 * 9.0).floor() as i32 - 1);
                let h = hash3(cx, cy, *seed);
                if h % 6 == 0 || !(0..5).contains(&px) || !(0..7).contains(&py) {
                    return *paper;
                }
                let bits = hash3(cx.wrapping_mul(31), cy, seed ^ 0xabcd);
                // Glyphs are left-right symmetric-ish strokes: bit per (row, column pair).
                let col = px.min(4 - px) as u32;
                if (bits >> ((py as u32 * 3 + col) % 32)) & 1 == 1 { *ink } else { *paper }
            }
            Material::Noise { scale, a, b, seed } => mix(*a, *b, fbm(x / scale, y / scale, *seed)),
            Material::Sparkles { cell, radius, peak, base, seed } => {
                let (cx, cy) = ((x / cell).floor() as i32, (y / cell).floor() as i32);
                let h = hash3(cx, cy, *seed);
                let ox = (cx as f32 + 0.2 + 0.6 * unit(h)) * cell;
                let oy = (cy as f32 + 0.2 + 0.6 * unit(h.rotate_left(9))) * cell;
                let d2 = (x - ox) * (x - ox) + (y - oy) * (y - oy);
                if h % 3 != 0 && d2 < radius * radius {
                    let k = peak * (0.2 + 0.8 * unit(h.rotate_left(17)));
                    let tint = colour(h.rotate_left(5));
                    [k * (0.5 + tint[0]), k * (0.5 + tint[1]), k * (0.5 + tint[2])]
                } else {
                    let n = value_noise(x / 24.0, y / 24.0, *seed);
                    [base[0] * (0.5 + n), base[1] * (0.5 + n), base[2] * (0.5 + n)]
                }
            }
            Material::Rings { period, a, b } => {
                let r = (x * x + y * y).sqrt();
                if (r / period).rem_euclid(1.0) < 0.5 { *a } else { *b }
            }
            Material::Solid { c } => *c,
        }
    }
}

/// The material families a scene kind draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Stripes,
    Checker,
    Lines,
    Text,
    Noise,
    Sparkles,
    Rings,
}

/// A random material of a family, from a hash.
pub fn material(f: Family, h: u32) -> Material {
    let u = |k: u32| unit(h.rotate_left(k));
    let (a, b) = (colour(h), colour(h.rotate_left(7) ^ 0x1234_5678));
    match f {
        Family::Stripes => Material::Stripes { period: 1.2 + 3.0 * u(3), angle: std::f32::consts::PI * u(5), a, b },
        Family::Checker => Material::Checker { size: 0.9 + 4.0 * u(3) * u(4), a, b },
        Family::Lines => Material::Lines { spacing: 5.0 + 10.0 * u(3), width: 0.25 + 0.45 * u(4), line: mix(a, [0.9; 3], 0.6), bg: mix(b, [0.05; 3], 0.5) },
        Family::Text => Material::Text { scale: 0.7 + 0.9 * u(3), ink: mix(a, [0.02; 3], 0.8), paper: mix(b, [0.85; 3], 0.6), seed: h },
        Family::Noise => Material::Noise { scale: 3.0 + 20.0 * u(3), a, b, seed: h },
        Family::Sparkles => Material::Sparkles { cell: 6.0 + 10.0 * u(3), radius: 0.6 + 1.2 * u(4), peak: 6.0 + 40.0 * u(6), base: mix(a, [0.0; 3], 0.9), seed: h },
        Family::Rings => Material::Rings { period: 1.5 + 2.5 * u(3), a, b },
    }
}
