//! The check a WMMA plan passes at load (`Network::with_io`): one small linear layer of known
//! operands through tessel_linear_wmma and through the portable tessel_linear, compared on the
//! host. The WMMA kernels have not run on AMD hardware yet (no AMD GPU is at hand), so a wrong
//! reading of the hardware's register layout must show here, and the network then runs the
//! portable kernels and says why, instead of computing a wrong head.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use half::f16;

use crate::buffer::DeviceBuffer;
use crate::error::Result;
use crate::module::Function;
use crate::plan::{flags, LinearArgs, BLOCK_TOKENS, LINEAR_OUTS, WMMA_TOKENS};
use crate::platform::Context;
use crate::stream::Stream;

/// Tokens, inputs and outputs of the layer: a partial last wave of rows, three 16-wide input
/// slices and two of outputs; LayerNorm in front, SiLU behind, f16 rows in and out.
const TOKENS: usize = 40;
const IN: usize = 48;
const OUT: usize = 32;

/// The worst difference allowed against the portable kernel, relative to its largest output:
/// the WMMA kernel rounds the normalised inputs to f16 where the portable one keeps f32.
const TOLERANCE: f32 = 1.0 / 256.0;

fn pseudo(i: usize, salt: u32) -> f32 {
    let mut h = (i as u32).wrapping_mul(0x9E37_79B9) ^ salt.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
}

fn halves(n: usize, salt: u32, scale: f32, offset: f32) -> Vec<u8> {
    (0..n).flat_map(|i| f16::from_f32(offset + scale * pseudo(i, salt)).to_le_bytes()).collect()
}

/// Ok(worst relative difference) when the WMMA kernel, in workgroups of `threads`, agrees with the
/// portable one, else why not.
pub fn check(ctx: &Arc<Context>, stream: &Stream, functions: &HashMap<String, Function>, threads: u32) -> Result<std::result::Result<f32, String>> {
    let (Some(wmma), Some(portable)) = (functions.get(tessel_kernels::LINEAR_WMMA), functions.get("tessel_linear")) else {
        return Ok(Err(format!("{} or tessel_linear is missing from the code object", tessel_kernels::LINEAR_WMMA)));
    };
    let upload = |bytes: Vec<u8>| -> Result<DeviceBuffer> {
        let b = DeviceBuffer::alloc(ctx, bytes.len())?;
        b.upload_on(stream, &bytes)?;
        Ok(b)
    };
    let x = upload(halves(TOKENS * IN, 1, 2.0, 0.3))?;
    let w = upload(halves(OUT * IN, 2, 0.25, 0.0))?;
    let b = upload(halves(OUT, 3, 0.5, 0.0))?;
    let gamma = upload(halves(IN, 4, 0.5, 1.0))?;
    let beta = upload(halves(IN, 5, 0.2, 0.0))?;
    let outs = [DeviceBuffer::alloc(ctx, TOKENS * OUT * 2)?, DeviceBuffer::alloc(ctx, TOKENS * OUT * 2)?];
    let args = |y: &DeviceBuffer| LinearArgs {
        x: x.ptr().0,
        y: y.ptr().0,
        w: w.ptr().0,
        b: b.ptr().0,
        gamma: gamma.ptr().0,
        beta: beta.ptr().0,
        tokens: TOKENS as u32,
        width: TOKENS as u32,
        inp: IN as u32,
        out: OUT as u32,
        flags: flags::LAYER_NORM | flags::ACT_SILU | flags::IN_F16 | flags::OUT_F16,
        ..LinearArgs::default()
    };
    let runs = [
        (portable, ((TOKENS as u32).div_ceil(BLOCK_TOKENS), OUT as u32 / LINEAR_OUTS, 1), (BLOCK_TOKENS, 1, 1)),
        (wmma, ((TOKENS as u32).div_ceil(WMMA_TOKENS), 1, 1), (threads, 1, 1)),
    ];
    let mut results = Vec::new();
    for ((f, grid, block), y) in runs.iter().zip(&outs) {
        let mut a = args(y);
        let mut params = [(&mut a as *mut LinearArgs).cast::<c_void>()];
        // The one struct parameter matches the kernel's; every address belongs to the buffers above.
        unsafe { f.launch(stream, *grid, *block, 0, &mut params)? };
        let mut bytes = vec![0u8; TOKENS * OUT * 2];
        y.download_on(stream, &mut bytes)?;
        results.push(bytes.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect::<Vec<f32>>());
    }
    let scale = results[0].iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-6);
    let worst = results[0].iter().zip(&results[1]).map(|(p, q)| if p.is_finite() && q.is_finite() { (p - q).abs() / scale } else { f32::INFINITY }).fold(0.0f32, f32::max);
    Ok(if worst <= TOLERANCE {
        Ok(worst)
    } else {
        Err(format!("failed the check at load (worst difference {worst:.4} of the largest output against the portable kernel, allowed {TOLERANCE:.4})"))
    })
}
