//! The check a plan on AMD matrix cores passes at load (`Network::with_io`): one small linear layer
//! and one small attention of known operands through tessel_linear_wmma and
//! tessel_attention_wmma and through the portable kernels, compared on the host. These kernels
//! have not run on AMD hardware yet (no AMD GPU is at hand), so a wrong reading of the hardware's
//! register layout must show here, and the network then runs the portable kernels and says why,
//! instead of computing a wrong head.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use half::f16;

use crate::buffer::DeviceBuffer;
use crate::error::Result;
use crate::module::Function;
use crate::plan::{flags, AttentionArgs, LinearArgs, BLOCK_TOKENS, LINEAR_OUTS, WMMA_TOKENS};
use crate::platform::Context;
use crate::stream::Stream;

/// The linear layer: a partial last wave of rows, three 16-wide input slices and two of outputs;
/// LayerNorm in front, SiLU behind, f16 rows in and out.
const TOKENS: usize = 40;
const IN: usize = 48;
const OUT: usize = 32;
/// The attention: two windows of a 16 x 8 grid, two heads, a shift that wraps the torus.
const GRID: (usize, usize) = (16, 8);
const CHANNELS: usize = 32;
const SHIFT: (u32, u32) = (3, 5);

/// The worst difference allowed against the portable kernels, relative to their largest output:
/// the matrix-core kernels round the normalised inputs and the softmax weights to f16 where the
/// portable ones keep f32.
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

struct Bench<'a> {
    ctx: &'a Arc<Context>,
    stream: &'a Stream,
    kept: Vec<DeviceBuffer>,
}

/// One kernel launch to check: the function, its grid and its workgroup.
type Launch<'a> = (&'a Function, (u32, u32, u32), (u32, u32, u32));

impl Bench<'_> {
    fn upload(&mut self, bytes: Vec<u8>) -> Result<u64> {
        let b = DeviceBuffer::alloc(self.ctx, bytes.len())?;
        b.upload_on(self.stream, &bytes)?;
        let p = b.ptr().0;
        self.kept.push(b);
        Ok(p)
    }

    /// Runs each launch once with its own argument struct (each writing its own output of `halves`
    /// f16 values) and returns the outputs.
    fn run<A: Copy>(&mut self, launches: &[Launch], args: impl Fn(u64) -> A, halves: usize) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::new();
        for (f, grid, block) in launches {
            let y = DeviceBuffer::alloc(self.ctx, halves * 2)?;
            let mut a = args(y.ptr().0);
            let mut params = [(&mut a as *mut A).cast::<c_void>()];
            // The one struct parameter matches the kernel's; every address belongs to this bench.
            unsafe { f.launch(self.stream, *grid, *block, 0, &mut params)? };
            let mut bytes = vec![0u8; halves * 2];
            y.download_on(self.stream, &mut bytes)?;
            out.push(bytes.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect());
        }
        Ok(out)
    }
}

/// The worst difference of `b` from `a` relative to `a`'s largest value (non-finite: infinite).
fn worst(a: &[f32], b: &[f32]) -> f32 {
    let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-6);
    a.iter().zip(b).map(|(p, q)| if p.is_finite() && q.is_finite() { (p - q).abs() / scale } else { f32::INFINITY }).fold(0.0, f32::max)
}

/// Ok(worst relative difference) when both matrix-core kernels, in workgroups of `threads`, agree
/// with the portable ones, else why not.
pub fn check(ctx: &Arc<Context>, stream: &Stream, functions: &HashMap<String, Function>, threads: u32) -> Result<std::result::Result<f32, String>> {
    let get = |name: &str| functions.get(name).ok_or_else(|| format!("{name} is missing from the code object"));
    let (lw, lp, aw, ap) = match (get(tessel_kernels::LINEAR_WMMA), get("tessel_linear"), get(tessel_kernels::ATTENTION_WMMA), get("tessel_attention")) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
        (a, b, c, d) => return Ok(Err([a.err(), b.err(), c.err(), d.err()].into_iter().flatten().collect::<Vec<_>>().join("; "))),
    };
    let mut bench = Bench { ctx, stream, kept: Vec::new() };
    let (x, w, b) = (bench.upload(halves(TOKENS * IN, 1, 2.0, 0.3))?, bench.upload(halves(OUT * IN, 2, 0.25, 0.0))?, bench.upload(halves(OUT, 3, 0.5, 0.0))?);
    let (gamma, beta) = (bench.upload(halves(IN, 4, 0.5, 1.0))?, bench.upload(halves(IN, 5, 0.2, 0.0))?);
    let linear = |y| LinearArgs {
        x,
        y,
        w,
        b,
        gamma,
        beta,
        tokens: TOKENS as u32,
        width: TOKENS as u32,
        inp: IN as u32,
        out: OUT as u32,
        flags: flags::LAYER_NORM | flags::ACT_SILU | flags::IN_F16 | flags::OUT_F16,
        ..LinearArgs::default()
    };
    let tokens = (TOKENS as u32).div_ceil(BLOCK_TOKENS);
    let lin = bench.run(&[(lp, (tokens, OUT as u32 / LINEAR_OUTS, 1), (BLOCK_TOKENS, 1, 1)), (lw, ((TOKENS as u32).div_ceil(WMMA_TOKENS), 1, 1), (threads, 1, 1))], linear, TOKENS * OUT)?;
    let t = GRID.0 * GRID.1;
    let (qkv, rpb) = (bench.upload(halves(t * 3 * CHANNELS, 6, 1.5, 0.0))?, bench.upload(halves(CHANNELS / 16 * 225, 7, 0.5, 0.0))?);
    let attention = |out| AttentionArgs { qkv, out, rpb, width: GRID.0 as u32, height: GRID.1 as u32, shift_x: SHIFT.0, shift_y: SHIFT.1, c: CHANNELS as u32, _pad: 0 };
    let grid = ((t / 64) as u32, (CHANNELS / 16) as u32, 1);
    let att = bench.run(&[(ap, grid, (64, 1, 1)), (aw, grid, (threads, 1, 1))], attention, t * CHANNELS)?;
    let (wl, wa) = (worst(&lin[0], &lin[1]), worst(&att[0], &att[1]));
    Ok(if wl <= TOLERANCE && wa <= TOLERANCE {
        Ok(wl.max(wa))
    } else {
        Err(format!(
            "failed the check at load (worst difference against the portable kernels, of their largest output: linear {wl:.4}, attention {wa:.4}; allowed {TOLERANCE:.4})"
        ))
    })
}
