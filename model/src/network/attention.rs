//! Window attention on the torus: 8x8-token windows at the layer's cyclic shift, head dim 16,
//! scaled dot product plus a learned relative-position bias, softmax over the window.

use rayon::prelude::*;

use crate::config::{HEAD_DIM, WINDOW, WINDOW_TOKENS};
use crate::shifts::WindowPartition;

/// Index into a head's relative-position bias for query i and key j (in-window positions):
/// (yi - yj + 7) * 15 + (xi - xj + 7).
#[inline]
pub fn rpb_index(i: usize, j: usize) -> usize {
    let (xi, yi) = ((i % WINDOW) as isize, (i / WINDOW) as isize);
    let (xj, yj) = ((j % WINDOW) as isize, (j / WINDOW) as isize);
    let w = WINDOW as isize;
    ((yi - yj + w - 1) * (2 * w - 1) + (xi - xj + w - 1)) as usize
}

/// Attention of one window for one head. `q`, `k`, `v`: [64][16]; returns [64][16].
pub fn window_head(q: &[f32], k: &[f32], v: &[f32], rpb: &[f32]) -> Vec<f32> {
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    let mut out = vec![0.0f32; WINDOW_TOKENS * HEAD_DIM];
    let mut s = [0.0f32; WINDOW_TOKENS];
    for i in 0..WINDOW_TOKENS {
        let qi = &q[i * HEAD_DIM..(i + 1) * HEAD_DIM];
        let mut m = f32::MIN;
        for (j, sj) in s.iter_mut().enumerate() {
            let kj = &k[j * HEAD_DIM..(j + 1) * HEAD_DIM];
            *sj = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale + rpb[rpb_index(i, j)];
            m = m.max(*sj);
        }
        let mut sum = 0.0f32;
        for sj in s.iter_mut() {
            *sj = (*sj - m).exp();
            sum += *sj;
        }
        let o = &mut out[i * HEAD_DIM..(i + 1) * HEAD_DIM];
        for (j, sj) in s.iter().enumerate() {
            let p = sj / sum;
            for d in 0..HEAD_DIM {
                o[d] += p * v[j * HEAD_DIM + d];
            }
        }
    }
    out
}

/// Multi-head window attention over a level. `qkv`: [tokens, 3C] (q heads, then k, then v);
/// `rpb`: [heads, 225]. Returns the concatenated heads, [tokens, C].
pub fn window_attention(qkv: &[f32], c: usize, part: &WindowPartition, rpb: &[f32]) -> Vec<f32> {
    let heads = c / HEAD_DIM;
    let per_window: Vec<Vec<f32>> = (0..part.count())
        .into_par_iter()
        .map(|w| {
            let toks = part.window_tokens(w);
            let mut res = vec![0.0f32; WINDOW_TOKENS * c];
            let mut q = vec![0.0f32; WINDOW_TOKENS * HEAD_DIM];
            let mut k = q.clone();
            let mut v = q.clone();
            for h in 0..heads {
                for (i, &t) in toks.iter().enumerate() {
                    let base = t * 3 * c + h * HEAD_DIM;
                    q[i * HEAD_DIM..(i + 1) * HEAD_DIM].copy_from_slice(&qkv[base..base + HEAD_DIM]);
                    k[i * HEAD_DIM..(i + 1) * HEAD_DIM].copy_from_slice(&qkv[base + c..base + c + HEAD_DIM]);
                    v[i * HEAD_DIM..(i + 1) * HEAD_DIM].copy_from_slice(&qkv[base + 2 * c..base + 2 * c + HEAD_DIM]);
                }
                let o = window_head(&q, &k, &v, &rpb[h * crate::config::RPB_ENTRIES..(h + 1) * crate::config::RPB_ENTRIES]);
                for i in 0..WINDOW_TOKENS {
                    res[i * c + h * HEAD_DIM..i * c + (h + 1) * HEAD_DIM].copy_from_slice(&o[i * HEAD_DIM..(i + 1) * HEAD_DIM]);
                }
            }
            res
        })
        .collect();
    let mut out = vec![0.0f32; part.width * part.height * c];
    for (w, res) in per_window.iter().enumerate() {
        for (i, &t) in part.window_tokens(w).iter().enumerate() {
            out[t * c..(t + 1) * c].copy_from_slice(&res[i * c..(i + 1) * c]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpb_index_corners() {
        assert_eq!(rpb_index(0, 0), 7 * 15 + 7);
        assert_eq!(rpb_index(63, 0), 14 * 15 + 14); // query (7,7), key (0,0)
        assert_eq!(rpb_index(0, 63), 0);
        assert_eq!(rpb_index(7, 56), 14); // query (7,0), key (0,7): dy = -7, dx = +7
    }

    /// Hand-computed case: keys equal except one, values one-hot per token.
    #[test]
    fn attention_on_a_tiny_window() {
        let mut q = vec![0.0f32; 64 * 16];
        let mut k = vec![0.0f32; 64 * 16];
        let mut v = vec![0.0f32; 64 * 16];
        // Query 0 = 4 * e0; key 5 = e0, all other keys 0; value j = j in channel 0.
        q[0] = 4.0;
        k[5 * 16] = 1.0;
        for j in 0..64 {
            v[j * 16] = j as f32;
        }
        let rpb = vec![0.0f32; 225];
        let o = window_head(&q, &k, &v, &rpb);
        // Scores for query 0: 4 * 1 / 4 = 1 for key 5, 0 for the other 63 keys.
        let e = std::f32::consts::E;
        let z = 63.0 + e;
        let expect = (e * 5.0 + (0..64).filter(|&j| j != 5).map(|j| j as f32).sum::<f32>()) / z;
        assert!((o[0] - expect).abs() < 1e-4, "{} vs {expect}", o[0]);
        // Query 1 is zero: uniform attention, mean of 0..63.
        assert!((o[16] - 31.5).abs() < 1e-4);
        // A bias that strongly favours key 0 for query 1 (same row, dx = +1) selects value 0.
        let mut rpb = vec![0.0f32; 225];
        rpb[rpb_index(1, 0)] = 50.0;
        let o = window_head(&q, &k, &v, &rpb);
        assert!(o[16].abs() < 1e-6);
    }
}
