//! Dense layers of the CPU reference: linear (matrixmultiply SGEMM, rows split over threads),
//! layer norm, SiLU, and the 2x2 space-to-depth / depth-to-space of merging and expansion.

use rayon::prelude::*;

use crate::package::ModelPackage;

/// Rows per thread task of a linear layer.
const ROW_CHUNK: usize = 512;
pub const LN_EPS: f32 = 1e-5;

#[inline]
pub fn round_f16(v: f32) -> f32 {
    half::f16::from_f32(v).to_f32()
}

#[inline]
pub fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// y = x W^T + b, W stored [out, in] (row-major).
#[derive(Clone, Debug)]
pub struct Linear {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
    pub inp: usize,
    pub out: usize,
}

impl Linear {
    pub fn from_package(pkg: &ModelPackage, prefix: &str) -> Linear {
        let w = pkg.tensor(&format!("{prefix}.weight"));
        let b = pkg.tensor(&format!("{prefix}.bias"));
        Linear { w: w.data.clone(), b: b.data.clone(), out: w.shape[0], inp: w.shape[1] }
    }

    /// One row: y = W x + b.
    pub fn apply_row(&self, x: &[f32], y: &mut [f32]) {
        for (o, yo) in y.iter_mut().enumerate() {
            let wr = &self.w[o * self.inp..(o + 1) * self.inp];
            *yo = self.b[o] + wr.iter().zip(x).map(|(a, b)| a * b).sum::<f32>();
        }
    }

    /// All rows of x ([rows, in]) -> [rows, out].
    pub fn forward(&self, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / self.inp;
        let mut y = vec![0.0f32; rows * self.out];
        y.par_chunks_mut(ROW_CHUNK * self.out)
            .zip(x.par_chunks(ROW_CHUNK * self.inp))
            .for_each(|(yc, xc)| {
                let m = xc.len() / self.inp;
                for r in 0..m {
                    yc[r * self.out..(r + 1) * self.out].copy_from_slice(&self.b);
                }
                // C[m, out] += A[m, in] * B[in, out], B = W^T read through strides.
                unsafe {
                    matrixmultiply::sgemm(
                        m,
                        self.inp,
                        self.out,
                        1.0,
                        xc.as_ptr(),
                        self.inp as isize,
                        1,
                        self.w.as_ptr(),
                        1,
                        self.inp as isize,
                        1.0,
                        yc.as_mut_ptr(),
                        self.out as isize,
                        1,
                    );
                }
            });
        y
    }
}

/// Layer norm over the channels of each row: (x - mean) / sqrt(var + 1e-5) * g + b (biased var).
#[derive(Clone, Debug)]
pub struct Norm {
    pub g: Vec<f32>,
    pub b: Vec<f32>,
}

impl Norm {
    pub fn from_package(pkg: &ModelPackage, prefix: &str) -> Norm {
        Norm { g: pkg.tensor(&format!("{prefix}.weight")).data.clone(), b: pkg.tensor(&format!("{prefix}.bias")).data.clone() }
    }

    pub fn forward(&self, x: &[f32]) -> Vec<f32> {
        let c = self.g.len();
        let mut y = vec![0.0f32; x.len()];
        y.par_chunks_mut(c * 64).zip(x.par_chunks(c * 64)).for_each(|(yc, xc)| {
            for (yr, xr) in yc.chunks_exact_mut(c).zip(xc.chunks_exact(c)) {
                let mean = xr.iter().sum::<f32>() / c as f32;
                let var = xr.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / c as f32;
                let inv = 1.0 / (var + LN_EPS).sqrt();
                for i in 0..c {
                    yr[i] = (xr[i] - mean) * inv * self.g[i] + self.b[i];
                }
            }
        });
        y
    }
}

/// 2x2 space-to-depth: [h, w, c] -> [h/2, w/2, 4c], channel (dy * 2 + dx) * c + i.
pub fn space_to_depth2(x: &[f32], w: usize, h: usize, c: usize) -> Vec<f32> {
    let (w2, h2) = (w / 2, h / 2);
    let mut y = vec![0.0f32; x.len()];
    for ty in 0..h2 {
        for tx in 0..w2 {
            let dst = (ty * w2 + tx) * 4 * c;
            for q in 0..4 {
                let (dx, dy) = (q % 2, q / 2);
                let src = ((2 * ty + dy) * w + 2 * tx + dx) * c;
                y[dst + q * c..dst + (q + 1) * c].copy_from_slice(&x[src..src + c]);
            }
        }
    }
    y
}

/// 2x2 depth-to-space: [h, w, 4c] -> [2h, 2w, c], the inverse of `space_to_depth2`.
pub fn depth_to_space2(x: &[f32], w: usize, h: usize, c: usize) -> Vec<f32> {
    let mut y = vec![0.0f32; x.len()];
    for ty in 0..h {
        for tx in 0..w {
            let src = (ty * w + tx) * 4 * c;
            for q in 0..4 {
                let (dx, dy) = (q % 2, q / 2);
                let dst = ((2 * ty + dy) * 2 * w + 2 * tx + dx) * c;
                y[dst..dst + c].copy_from_slice(&x[src + q * c..src + (q + 1) * c]);
            }
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_matches_rows() {
        let l = Linear { w: (0..12).map(|i| i as f32 * 0.5 - 2.0).collect(), b: vec![1.0, -1.0, 0.5], inp: 4, out: 3 };
        let x: Vec<f32> = (0..4 * 1100).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
        let y = l.forward(&x);
        for r in [0, 1, 511, 512, 1099] {
            let mut e = [0.0f32; 3];
            l.apply_row(&x[r * 4..r * 4 + 4], &mut e);
            assert_eq!(&y[r * 3..r * 3 + 3], &e, "row {r}");
        }
    }

    #[test]
    fn layer_norm_by_hand() {
        let n = Norm { g: vec![1.0, 2.0], b: vec![0.0, 1.0] };
        // mean 2, var 1: normalised (-1, 1); times g plus b: (-1, 3).
        let y = n.forward(&[1.0, 3.0]);
        let s = 1.0 / (1.0f32 + LN_EPS).sqrt();
        assert!((y[0] + s).abs() < 1e-6 && (y[1] - (2.0 * s + 1.0)).abs() < 1e-6, "{y:?}");
    }

    #[test]
    fn depth_to_space_inverts_space_to_depth() {
        let x: Vec<f32> = (0..4 * 6 * 3).map(|i| i as f32).collect();
        let s = space_to_depth2(&x, 4, 6, 3);
        // token (0,0) of the merged grid: pixels (0,0), (1,0), (0,1), (1,1) in that order.
        assert_eq!(&s[0..12], &[0., 1., 2., 3., 4., 5., 12., 13., 14., 15., 16., 17.]);
        assert_eq!(depth_to_space2(&s, 2, 3, 3), x);
    }
}
