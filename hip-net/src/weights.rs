//! The weights as the kernels read them: the package's tensors in f16 (`ModelPackage::device_blob`,
//! row-major, for the portable kernels), followed by a fragment-ordered copy of every weight
//! matrix the matrix-core kernels use (`<name>#frag`, kernels/include/tessel_mma.h) and an f32
//! copy of every vector (`<name>#f32`).
//!
//! Fragment order: a matrix W [n][k] (PyTorch's [out, in]) is the B operand of
//! `mma.m16n8k16` (16x8, column-major: B[kk][nn] = W[nn][kk]). For each 8-row tile `nt` and
//! 16-column tile `kt`, the 32 lanes' two registers lie side by side: lane l = 4g + t holds
//! W[8nt + g][16kt + 2t .. +2] then W[8nt + g][16kt + 2t + 8 .. +10], at 8-byte slot
//! (nt · k/16 + kt) · 32 + l. A warp then reads one tile's operands as one coalesced 256-byte
//! load instead of eight rows' 16-byte pieces. `pixel_head.weight` [8][p] also gets the k = 8
//! order (`#frag8`: lane l holds W[g][8kt + 2t .. +2] at 4-byte slot kt · 32 + l).
//!
//! Core-matrix order (`<block>.core`, the sm_90a kernels' warpgroup products, which read B from
//! shared memory): a matrix W [n][k] as K-major core matrices of 8 rows by 8 columns (128
//! contiguous bytes), for each 16-column tile kt and 8-row block nb the pair (columns 0-7, 8-15)
//! at byte (kt · n/8 + nb) · 256. A block with C ≤ 48 channels gets one such blob of its four
//! matrices in turn: qkv (its rows per head: q, k, v of head 0, then of head 1, ...), proj, fc1,
//! fc2 (kernels/include/tessel_block.h's TS_CORE_*).

use std::collections::HashMap;

use half::f16;
use tessel_model::package::ModelPackage;

/// The fragment-ordered bytes of a row-major f16 matrix [n][k] (n a multiple of 8, k of 16).
pub fn fragment_order(w: &[f16], n: usize, k: usize) -> Vec<u8> {
    assert!(n % 8 == 0 && k % 16 == 0 && w.len() == n * k, "fragment order needs [8a][16b], got [{n}][{k}]");
    let mut out = Vec::with_capacity(n * k * 2);
    for nt in 0..n / 8 {
        for kt in 0..k / 16 {
            for lane in 0..32 {
                let (g, t) = (lane / 4, lane % 4);
                let row = &w[(8 * nt + g) * k..];
                for c in [16 * kt + 2 * t, 16 * kt + 2 * t + 1, 16 * kt + 2 * t + 8, 16 * kt + 2 * t + 9] {
                    out.extend_from_slice(&row[c].to_le_bytes());
                }
            }
        }
    }
    out
}

/// The k = 8 fragment order of a row-major f16 matrix [8][k] (k a multiple of 8).
pub fn fragment_order_k8(w: &[f16], k: usize) -> Vec<u8> {
    assert!(k % 8 == 0 && w.len() == 8 * k, "k = 8 fragment order needs [8][8b], got {} values, k = {k}", w.len());
    let mut out = Vec::with_capacity(8 * k * 2);
    for kt in 0..k / 8 {
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for c in [8 * kt + 2 * t, 8 * kt + 2 * t + 1] {
                out.extend_from_slice(&w[g * k + c].to_le_bytes());
            }
        }
    }
    out
}

/// The core-matrix order of a row-major f16 matrix [n][k] (n a multiple of 8, k of 16).
pub fn core_order(w: &[f16], n: usize, k: usize) -> Vec<u8> {
    assert!(n % 8 == 0 && k % 16 == 0 && w.len() == n * k, "core-matrix order needs [8a][16b], got [{n}][{k}]");
    let mut out = Vec::with_capacity(n * k * 2);
    for kt in 0..k / 16 {
        for nb in 0..n / 8 {
            for kh in 0..2 {
                for row in 0..8 {
                    let at = (8 * nb + row) * k + 16 * kt + 8 * kh;
                    out.extend(w[at..at + 8].iter().flat_map(|v| v.to_le_bytes()));
                }
            }
        }
    }
    out
}

/// qkv.weight [3C][C] with its rows per head: q, k and v rows of head h at 48h .. 48h + 48.
pub fn qkv_rows_per_head(w: &[f16], c: usize) -> Vec<f16> {
    let mut out = Vec::with_capacity(w.len());
    for h in 0..c / 16 {
        for part in 0..3 {
            let at = (part * c + 16 * h) * c;
            out.extend_from_slice(&w[at..at + 16 * c]);
        }
    }
    out
}

/// Columns c0 .. c0 + n of a row-major matrix [rows][k], as a row-major [rows][n].
fn columns(w: &[f16], k: usize, c0: usize, n: usize) -> Vec<f16> {
    w.chunks(k).flat_map(|row| row[c0..c0 + n].iter().copied()).collect()
}

/// A block's stream blob (kernels/include/tessel_block.h's TS_WS, an MLP of 2C): 2H phases of 128 C bytes,
/// for each head h its qkv rows (`qkv` already per head: 48 rows) then proj's columns 16h ..
/// 16h + 16, then for each MLP step s fc1's rows 32s .. 32s + 32 then fc2's columns of them, each
/// part in core-matrix order.
pub fn stream_order(qkv: &[f16], proj: &[f16], fc1: &[f16], fc2: &[f16], c: usize) -> Vec<u8> {
    let (heads, hid) = (c / 16, 2 * c);
    let mut out = Vec::with_capacity(16 * c * c);
    for h in 0..heads {
        out.extend(core_order(&qkv[48 * h * c..48 * (h + 1) * c], 48, c));
        out.extend(core_order(&columns(proj, c, 16 * h, 16), c, 16));
    }
    for step in 0..hid / 32 {
        out.extend(core_order(&fc1[32 * step * c..32 * (step + 1) * c], 32, c));
        out.extend(core_order(&columns(fc2, hid, 32 * step, 32), c, 32));
    }
    out
}

/// The f16 values of a vector widened to f32 (exact): the fused blocks read biases, LayerNorm
/// parameters and position biases this way, with no conversion per use.
pub fn vector_f32(v: &[f16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_f32().to_le_bytes()).collect()
}

/// The blob's name for [`head_and_pixel_bias`].
pub const HEAD_AND_PIXEL_BIAS: &str = "head.bias+pixel_head.bias#f32";

/// The head's bias with the per-pixel head path's added (docs/NETWORK.md §4): head channel
/// (sy·4 + sx)·8 + k receives `head.bias` of its channel and `pixel_head.bias[k]`, so the fused
/// head kernel starts its accumulators from one vector. Sums of the f16 values in f32.
pub fn head_and_pixel_bias(pkg: &ModelPackage) -> Vec<u8> {
    let f = |name: &str| -> Vec<f32> { pkg.tensor(name).data.iter().map(|v| f16::from_f32(*v).to_f32()).collect() };
    let (head, pixel) = (f("head.bias"), f("pixel_head.bias"));
    head.iter().enumerate().flat_map(|(i, b)| (b + pixel[i % pixel.len()]).to_le_bytes()).collect()
}

/// The device blob and each tensor's offset in it: every tensor row-major, then `<name>#frag`
/// for every 2-D weight whose shape allows it, `pixel_head.weight#frag8` where it exists, and
/// `<name>#f32` for every vector and position-bias table, and [`HEAD_AND_PIXEL_BIAS`] with the
/// per-pixel head path.
pub fn device_blob(pkg: &ModelPackage) -> (Vec<u8>, HashMap<String, u64>) {
    let (mut blob, mut offsets) = pkg.device_blob();
    let mut put = |name: String, bytes: Vec<u8>| {
        offsets.insert(name, blob.len() as u64);
        blob.extend(bytes);
        blob.resize(blob.len().div_ceil(256) * 256, 0);
    };
    for spec in pkg.config.tensor_specs() {
        let w: Vec<f16> = pkg.tensor(&spec.name).data.iter().map(|v| f16::from_f32(*v)).collect();
        if spec.shape.len() == 1 || spec.name.ends_with(".rpb") {
            put(format!("{}#f32", spec.name), vector_f32(&w));
            continue;
        }
        let &[n, k] = spec.shape.as_slice() else { continue };
        if n % 8 == 0 && k % 16 == 0 {
            put(format!("{}#frag", spec.name), fragment_order(&w, n, k));
        }
        if spec.name == "pixel_head.weight" && n == 8 && k % 8 == 0 {
            put(format!("{}#frag8", spec.name), fragment_order_k8(&w, k));
        }
    }
    if pkg.config.pixel_head {
        put(HEAD_AND_PIXEL_BIAS.to_string(), head_and_pixel_bias(pkg));
    }
    for spec in pkg.config.tensor_specs() {
        let Some(block) = spec.name.strip_suffix(".qkv.weight") else { continue };
        let (c, hid) = (spec.shape[1], pkg.tensor(&format!("{block}.fc1.weight")).shape[0]);
        if c % 16 != 0 || c > tessel_kernels::WGMMA_STREAM_MAX_CHANNELS || hid % 16 != 0 {
            continue;
        }
        let w = |name: &str| -> Vec<f16> { pkg.tensor(&format!("{block}.{name}")).data.iter().map(|v| f16::from_f32(*v)).collect() };
        let (qkv, proj, fc1, fc2) = (qkv_rows_per_head(&w("qkv.weight"), c), w("proj.weight"), w("fc1.weight"), w("fc2.weight"));
        if c <= tessel_kernels::WGMMA_MAX_CHANNELS {
            let mut core = core_order(&qkv, 3 * c, c);
            core.extend(core_order(&proj, c, c));
            core.extend(core_order(&fc1, hid, c));
            core.extend(core_order(&fc2, c, hid));
            put(format!("{block}.core"), core);
        } else if hid == 2 * c {
            put(format!("{block}.stream"), stream_order(&qkv, &proj, &fc1, &fc2, c));
        }
    }
    (blob, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_bias_carries_the_pixel_paths() {
        let cfg = tessel_model::config::NetworkConfig { pixel_head: true, ..Default::default() };
        let mut pkg = ModelPackage::untrained(cfg, 7);
        // Distinct values in every channel (an untrained package's biases may all be zero).
        for (name, scale) in [("head.bias", 0.01f32), ("pixel_head.bias", -0.5)] {
            let t = pkg.tensors.get_mut(name).unwrap();
            t.data.iter_mut().enumerate().for_each(|(i, v)| *v = scale * (i as f32 + 1.0));
        }
        let (blob, offsets) = device_blob(&pkg);
        let at = offsets[HEAD_AND_PIXEL_BIAS] as usize;
        let f = |name: &str, i: usize| f16::from_f32(pkg.tensor(name).data[i]).to_f32();
        for i in [0, 7, 8, 13, 127] {
            let v = f32::from_le_bytes(blob[at + 4 * i..at + 4 * i + 4].try_into().unwrap());
            assert_eq!(v, f("head.bias", i) + f("pixel_head.bias", i % 8), "channel {i}");
        }
        let plain = ModelPackage::untrained(tessel_model::config::NetworkConfig { pixel_head: false, ..Default::default() }, 7);
        assert!(!device_blob(&plain).1.contains_key(HEAD_AND_PIXEL_BIAS));
    }

    /// W[r][c] = r * 100 + c, [16][32] (exact in f16 for these sizes).
    fn numbered() -> (Vec<f16>, usize, usize) {
        let (n, k) = (16, 32);
        ((0..n * k).map(|i| f16::from_f32(((i / k) * 100 + i % k) as f32)).collect(), n, k)
    }

    #[test]
    fn core_matrices_are_k_major_pairs() {
        let (w, n, k) = numbered();
        let b = core_order(&w, n, k);
        assert_eq!(b.len(), n * k * 2);
        let at = |byte: usize| f16::from_le_bytes([b[byte], b[byte + 1]]).to_f32();
        // k tile 1, row block 1, columns 8-15 (the pair's second core matrix), row 3, column 5:
        // W[8 + 3][16 + 8 + 5], at (1 * 2 + 1) * 256 + 128 + 3 * 16 + 5 * 2.
        assert_eq!(at(3 * 256 + 128 + 3 * 16 + 10), 11.0 * 100.0 + 29.0);
        assert_eq!(at(0), 0.0);
        assert_eq!(at(256 + 2 * 7), 8.0 * 100.0 + 7.0, "row block 1 follows row block 0 in k tile 0");
        // qkv rows per head: head 1's k rows (old rows C + 16 .. C + 32) at 48 + 16.
        let c = 32;
        let q: Vec<f16> = (0..3 * c * c).map(|i| f16::from_f32((i / c) as f32)).collect();
        let r = qkv_rows_per_head(&q, c);
        assert_eq!((r[(48 + 16) * c].to_f32(), r[(48 + 31) * c].to_f32(), r[16 * c].to_f32()), ((c + 16) as f32, (c + 31) as f32, c as f32));
    }

    /// B[k][n] as a warpgroup product reads it (PTX ISA, shared-memory matrix layout, K-major, no
    /// swizzle) from a descriptor at byte `start` with the kernel's strides (kernels/include/tessel_block.h
    /// `core_desc`: K-adjacent core matrices 128 bytes apart, N-adjacent 256).
    fn wgmma_b(blob: &[u8], start: usize, k: usize, n: usize) -> f32 {
        let at = start + (n / 8) * 256 + (k / 8) * 128 + (n % 8) * 16 + (k % 8) * 2;
        f16::from_le_bytes([blob[at], blob[at + 1]]).to_f32()
    }

    #[test]
    fn core_blobs_are_what_the_sm_90a_products_read() {
        // Every product of an sm_90a block reads B = W^T for its k tile and columns from the
        // block's blob at the offsets of TS_CORE_* and TS_CORE_AT.
        let mut pkg = ModelPackage::untrained(tessel_model::config::NetworkConfig::default(), 3);
        for (i, t) in pkg.tensors.values_mut().enumerate() {
            t.data.iter_mut().enumerate().for_each(|(j, v)| *v = ((i * 7919 + j * 31) % 2001) as f32 / 1000.0 - 1.0);
        }
        let (blob, offsets) = device_blob(&pkg);
        let w = |name: &str, r: usize, c: usize| {
            let t = pkg.tensor(name);
            f16::from_f32(t.data[r * t.shape[1] + c]).to_f32()
        };
        let core_at = |n: usize, kt: usize, nb: usize| (kt * (n / 8) + nb) * 256;
        for (block, c) in [("enc0.0", 32), ("enc1.1", 48), ("dec1.0", 48)] {
            let base = offsets[&format!("{block}.core")] as usize;
            let hid = 2 * c;
            let (proj, fc1, fc2) = (6 * c * c, 8 * c * c, 12 * c * c);
            for kt in 0..c / 16 {
                for h in 0..c / 16 {
                    // qkv of head h: columns 0-15 q, 16-31 k, 32-47 v.
                    for (col, part) in [(0, 0), (21, 1), (47, 2)] {
                        let row = part * c + 16 * h + col % 16;
                        let got = wgmma_b(&blob, base + core_at(3 * c, kt, 6 * h), (kt * 16 + 5) % 16, col);
                        assert_eq!(got, w(&format!("{block}.qkv.weight"), row, kt * 16 + (kt * 16 + 5) % 16), "{block} qkv h {h} kt {kt}");
                    }
                }
                // fc1, chunks 2 and 3 as one product of 32 columns.
                assert_eq!(wgmma_b(&blob, base + fc1 + core_at(hid, kt, 4), 9, 19), w(&format!("{block}.fc1.weight"), 32 + 19, kt * 16 + 9));
            }
            for h in 0..c / 16 {
                // proj: k tile h (head h's dims), every output column.
                assert_eq!(wgmma_b(&blob, base + proj + core_at(c, h, 0), 3, c - 1), w(&format!("{block}.proj.weight"), c - 1, 16 * h + 3));
            }
            for chunk in 0..hid / 16 {
                assert_eq!(wgmma_b(&blob, base + fc2 + core_at(c, chunk, 0), 14, 10), w(&format!("{block}.fc2.weight"), 10, 16 * chunk + 14));
            }
        }
        assert!(!offsets.contains_key("mid.0.core"), "96 channels stream their weights");
        // The 96-channel blocks' stream: phase h at 128 C h (qkv of head h at k tile kt 6 · 256 kt
        // further, proj's columns of head h at 96 C), step s at 128 C (H + s) (fc1's rows of two
        // chunks, 4 · 256 a k tile, fc2's columns at 64 C, (C / 8) · 256 a chunk).
        let c = 96;
        for block in ["mid.0", "mid.1"] {
            let base = offsets[&format!("{block}.stream")] as usize;
            let phase = |q: usize| base + 128 * c * q;
            for (h, kt) in [(0, 0), (2, 3), (5, 5)] {
                assert_eq!(wgmma_b(&blob, phase(h) + kt * 6 * 256, 7, 20), w(&format!("{block}.qkv.weight"), c + 16 * h + 4, 16 * kt + 7), "{block} qkv h {h}");
                assert_eq!(wgmma_b(&blob, phase(h) + 96 * c, 11, 90), w(&format!("{block}.proj.weight"), 90, 16 * h + 11), "{block} proj h {h}");
            }
            for (step, kt) in [(0, 0), (3, 2), (5, 5)] {
                assert_eq!(wgmma_b(&blob, phase(6 + step) + kt * 4 * 256, 2, 25), w(&format!("{block}.fc1.weight"), 32 * step + 25, 16 * kt + 2), "{block} fc1 step {step}");
                assert_eq!(wgmma_b(&blob, phase(6 + step) + 64 * c + 12 * 256, 13, 77), w(&format!("{block}.fc2.weight"), 77, 32 * step + 16 + 13), "{block} fc2 step {step}");
            }
        }
    }

    #[test]
    fn vectors_widen_exactly() {
        let v: Vec<f16> = [0.1f32, -65504.0, 6.0e-8, 1.0].iter().map(|x| f16::from_f32(*x)).collect();
        let b = vector_f32(&v);
        let back: Vec<f32> = b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(back, v.iter().map(|x| x.to_f32()).collect::<Vec<_>>());
    }

    #[test]
    fn fragments_hold_each_lanes_operands() {
        let (w, n, k) = numbered();
        let f = fragment_order(&w, n, k);
        assert_eq!(f.len(), n * k * 2);
        let at = |slot: usize, h: usize| f16::from_le_bytes([f[slot * 8 + 2 * h], f[slot * 8 + 2 * h + 1]]).to_f32();
        // Tile (nt 1, kt 1), lane 4g + t = 4 * 3 + 2: rows 8 + 3, cols 16 + 4, 5, 12, 13.
        let slot = (2 + 1) * 32 + 14; // (nt * 2 + kt) * 32 + lane
        assert_eq!([at(slot, 0), at(slot, 1), at(slot, 2), at(slot, 3)], [1120.0, 1121.0, 1128.0, 1129.0]);
        let w8: Vec<f16> = (0..8 * 16).map(|i| f16::from_f32(((i / 16) * 100 + i % 16) as f32)).collect();
        let f8 = fragment_order_k8(&w8, 16);
        // kt 1, lane 4 * 5 + 3: row 5, cols 8 + 6, 7.
        let s = 32 + 23;
        assert_eq!([f16::from_le_bytes([f8[s * 4], f8[s * 4 + 1]]).to_f32(), f16::from_le_bytes([f8[s * 4 + 2], f8[s * 4 + 3]]).to_f32()], [514.0, 515.0]);
    }
}
