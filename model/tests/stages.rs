//! Properties of the CPU reference stages that hold by construction, checked with numbers.

use std::sync::Arc;

use tessel_model::config::{NetworkConfig, TokenGrid, CATMULL_ROM_A, HEAD_CHANNELS, PIXEL_FEATURES, TOKEN};
use tessel_model::frame::{prepare, FrameData, History};
use tessel_model::head::{decode, FixedHead};
use tessel_model::input_stage::{feature_image, features, pixel_context, tokens};
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::reconstruct::{head_index, reconstruct, HeadInput};
use tessel_model::sequence::Settings;

fn network() -> Arc<Network> {
    Arc::new(Network::from_package(&ModelPackage::untrained(NetworkConfig::default(), 3)))
}

/// A constant-colour frame moving by `m` render pixels per frame.
fn constant_frame(rw: usize, rh: usize, rgb: [f32; 3], m: [f32; 2], jitter: [f32; 2], reset: bool) -> FrameData {
    FrameData {
        render: (rw, rh),
        color: (0..rw * rh).flat_map(|_| [rgb[0], rgb[1], rgb[2], 1.0]).collect(),
        motion: (0..rw * rh).flat_map(|_| m).collect(),
        depth: (0..rw * rh).map(|i| 0.1 + 0.8 * ((i * 13) % 17) as f32 / 17.0).collect(),
        jitter,
        reset,
        reference: None,
    }
}

/// A textured frame (for tests that need structure).
fn textured_frame(rw: usize, rh: usize, t: usize) -> FrameData {
    let mut f = constant_frame(rw, rh, [0.0; 3], [0.7, -0.3], [0.2 - 0.1 * (t % 4) as f32, 0.1], t == 0);
    for y in 0..rh {
        for x in 0..rw {
            let i = (y * rw + x) * 4;
            let v = ((x * 7 + y * 3 + t) % 11) as f32 / 11.0;
            f.color[i] = v * 2.0;
            f.color[i + 1] = 0.3 + 0.5 * ((x + y) % 2) as f32;
            f.color[i + 2] = if (x / 3 + y / 2) % 5 == 0 { 20.0 } else { 0.1 };
        }
    }
    f
}

#[test]
fn reconstruction_of_a_constant_image_returns_the_constant() {
    // Any head values, with and without history: colour 1.0 is 0.5 after the tonemap.
    let (ow, oh) = (24, 16);
    let frame = constant_frame(12, 8, [1.0, 1.0, 1.0], [0.3, -0.6], [0.17, -0.41], false);
    let p = prepare(&frame, &Settings::default(), (ow, oh));
    let mut hist = History::new(ow, oh);
    for round in 0..3 {
        let grid_w = 8; // padded tokens wide enough for 24 pixels
        let head: Vec<f32> = (0..grid_w * 8 * 16 * HEAD_CHANNELS).map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.4).collect();
        let out = reconstruct(&p, &mut hist, &HeadInput::Buffer { head: &head, padded_w: grid_w, accumulate: false, history_a: CATMULL_ROM_A });
        // RGB and alpha are all 1.0.
        for (i, v) in out.iter().enumerate() {
            assert!((v - 1.0).abs() < 1e-5, "round {round} value {i}: {v}");
        }
    }
}

#[test]
fn a_moving_constant_scene_stays_exact() {
    for source in [HeadSource::Fixed(FixedHead::default()), HeadSource::Network(network())] {
        let mut up = Upscaler::new(source, Settings::default(), (40, 24));
        for t in 0..10 {
            let j = [0.3 * ((t % 3) as f32 - 1.0), 0.2 * ((t % 2) as f32 - 0.5)];
            let f = constant_frame(20, 12, [1.0, 1.0, 1.0], [1.37, -0.58], j, t == 0);
            let ev = up.evaluate(&f);
            let worst = ev.output.iter().map(|v| (v - 1.0).abs()).fold(0.0f32, f32::max);
            assert!(worst < 1e-5, "frame {t}: off by {worst}");
        }
    }
}

#[test]
fn nan_and_inf_never_reach_history() {
    let mut up = Upscaler::new(HeadSource::Network(network()), Settings::default(), (40, 24));
    let clean = textured_frame(20, 12, 0);
    up.evaluate(&clean);
    let mut bad = textured_frame(20, 12, 1);
    bad.color[0] = f32::NAN;
    bad.color[5] = f32::INFINITY;
    bad.color[10] = f32::NEG_INFINITY;
    bad.motion[6] = f32::NAN;
    bad.motion[7] = f32::INFINITY;
    bad.depth[3] = f32::NAN;
    let ev = up.evaluate(&bad);
    assert_eq!(ev.sanitized, 6);
    assert!(ev.output.iter().all(|v| v.is_finite()));
    for p in [&up.history.color, &up.history.near, &up.history.memory] {
        assert!(p.data.iter().all(|v| v.is_finite()));
    }
    let ev = up.evaluate(&textured_frame(20, 12, 2));
    assert!(ev.output.iter().all(|v| v.is_finite()));
}

#[test]
fn features_by_hand() {
    // 2x upscale, jitter (0.25, -0.25): output pixel (3, 2) has its centre at render (1.75, 1.25);
    // the nearest sample is render pixel (1, 1) at (1.75, 1.25): offset (0, 0).
    let mut f = constant_frame(4, 4, [1.0, 3.0, 0.0], [2.0, 0.0], [0.25, -0.25], false);
    f.depth = vec![0.5; 16];
    f.depth[0] = 0.25; // render (0, 0) is in the 3x3 neighbourhood of (1, 1)
    let p = prepare(&f, &Settings::default(), (8, 8));
    let mut hist = History::new(8, 8);
    let ctx = pixel_context(3, 2, &p, &hist, CATMULL_ROM_A);
    let ft = features(&ctx);
    assert_eq!(&ft[0..3], &[0.5, 0.75, 0.0]);
    assert_eq!(&ft[3..5], &[0.0, 0.0]);
    assert!((ft[8] - 0.25 / 0.501).abs() < 1e-6, "depth range {}", ft[8]);
    assert_eq!(ft[9], 0.0, "uniform motion has no discontinuity");
    assert_eq!(ft[11], 0.0, "no history yet");
    let l = 0.2126 * 0.5 + 0.7152 * 0.75;
    assert!((ft[12] - l).abs() < 1e-6 && (ft[13] - l).abs() < 1e-6);
    // With valid history, motion (2, 0) render px = (4, 0) output px: the previous position of
    // pixel (3, 2)'s centre (3.5, 2.5) is (7.5, 2.5), inside; pixel (6, 2) moves out by 3 px.
    hist.valid = true;
    hist.color.data.iter_mut().for_each(|v| *v = 0.25);
    let ctx = pixel_context(3, 2, &p, &hist, CATMULL_ROM_A);
    assert_eq!(ctx.prev, [7.5, 2.5]);
    assert_eq!(ctx.valid, 1.0);
    assert!((ctx.hist[0] - 0.25).abs() < 1e-6);
    assert_eq!(pixel_context(6, 2, &p, &hist, CATMULL_ROM_A).valid, 0.0);
    // Motion 1.5 render px = 3 output px: pixel 4 lands at 7.5 (inside, validity 1), pixel 5 at
    // 8.5 (0.5 px outside: validity fades to 0.5), pixel 6 at 9.5 (gone: 0).
    let mut f2 = f.clone();
    f2.motion = (0..16).flat_map(|_| [1.5f32, 0.0]).collect();
    let p2 = prepare(&f2, &Settings::default(), (8, 8));
    let v: Vec<f32> = (4..7).map(|x| pixel_context(x, 2, &p2, &hist, CATMULL_ROM_A).valid).collect();
    assert_eq!(v, vec![1.0, 0.5, 0.0]);
    // A reset drops history whatever the buffers hold.
    let mut f3 = f.clone();
    f3.reset = true;
    let p3 = prepare(&f3, &Settings::default(), (8, 8));
    assert_eq!(pixel_context(3, 2, &p3, &hist, CATMULL_ROM_A).valid, 0.0);
}

#[test]
fn token_layout_is_space_to_depth_of_pixel_embeddings() {
    let cfg = NetworkConfig::default();
    let net = network();
    let (ow, oh) = (36, 20); // not a multiple of the token or window size: padding is exercised
    let grid = TokenGrid::new(&cfg, ow, oh);
    let f = textured_frame(18, 10, 0);
    let p = prepare(&f, &Settings::default(), (ow, oh));
    let hist = History::new(ow, oh);
    let feats = feature_image(&p, &hist, CATMULL_ROM_A);
    let toks = tokens(&cfg, &grid, &net.pixel_embed, &feats);
    let tc = cfg.token_channels();
    assert_eq!(toks.len(), grid.padded_w * grid.padded_h * tc);
    let (x, y) = (33, 18); // token (8, 4), sub-pixel (1, 2)
    let mut e = vec![0.0; cfg.pixel_embed];
    net.pixel_embed.apply_row(&feats[(y * ow + x) * PIXEL_FEATURES..(y * ow + x + 1) * PIXEL_FEATURES], &mut e);
    let base = (4 * grid.padded_w + 8) * tc + (2 * TOKEN + 1) * cfg.pixel_embed;
    for (k, v) in e.iter().enumerate() {
        let silu = v / (1.0 + (-v).exp());
        assert!((toks[base + k] - silu).abs() <= 1e-3 * silu.abs().max(1e-2), "channel {k}");
    }
    // Pixels beyond the output (x >= 36) are zero.
    let pad = (4 * grid.padded_w + 9) * tc;
    assert!(toks[pad..pad + tc].iter().all(|v| *v == 0.0));
    assert_eq!(head_index(33, 18, grid.padded_w), ((4 * grid.padded_w + 8) * 16 + 2 * 4 + 1) * HEAD_CHANNELS);
}

#[test]
fn network_commutes_with_aligned_torus_rolls() {
    // Rolling the token grid by a multiple of the alignment (32 level-0 tokens = one window at
    // the deepest level) rolls the head the same way: the windows tile a torus.
    let cfg = NetworkConfig::default();
    let net = network();
    let grid = TokenGrid::new(&cfg, 256, 128); // 64 x 32 tokens
    assert_eq!((grid.padded_w, grid.padded_h), (64, 32));
    let tc = cfg.token_channels();
    let toks: Vec<f32> = (0..64 * 32 * tc).map(|i| (((i * 7919) % 1000) as f32 / 500.0 - 1.0) * 0.7).collect();
    let mut rolled = vec![0.0f32; toks.len()];
    for y in 0..32 {
        for x in 0..64 {
            let d = (y * 64 + (x + 32) % 64) * tc;
            rolled[d..d + tc].copy_from_slice(&toks[(y * 64 + x) * tc..(y * 64 + x + 1) * tc]);
        }
    }
    for phase in [0, 5] {
        let a = net.forward(&toks, &grid, phase);
        let b = net.forward(&rolled, &grid, phase);
        let hc = cfg.head_token_channels();
        let mut worst = 0.0f32;
        for y in 0..32 {
            for x in 0..64 {
                let (s, d) = ((y * 64 + x) * hc, (y * 64 + (x + 32) % 64) * hc);
                for k in 0..hc {
                    worst = worst.max((a[s + k] - b[d + k]).abs());
                }
            }
        }
        assert!(worst <= 2e-3, "phase {phase}: {worst}");
        // A roll by a non-aligned amount (one token) changes which tokens share windows.
        assert!(a.iter().all(|v| v.is_finite()));
    }
    let a0 = net.forward(&toks, &grid, 0);
    let a1 = net.forward(&toks, &grid, 1);
    assert!(a0.iter().zip(&a1).any(|(p, q)| p != q), "the window shift must matter");
    assert_eq!(a0, net.forward(&toks, &grid, 8), "phase 8 is phase 0");
}

#[test]
fn counter_is_not_restarted_by_reset() {
    let mut up = Upscaler::new(HeadSource::Network(network()), Settings::default(), (32, 32));
    let mut phases = Vec::new();
    for t in 0..10 {
        let mut f = textured_frame(16, 16, t);
        f.reset = t == 0 || t == 3;
        phases.push(up.evaluate(&f).phase);
    }
    assert_eq!(phases, vec![0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
}

#[test]
fn head_decoding() {
    let p = decode(&[0.0, 0.0, 0.0, 0.0, 100.0, -100.0, 0.5, -0.5]);
    assert_eq!((p.blend, p.sigma, p.clamp), (0.5, 1.0, 0.5));
    assert_eq!(p.residual, [0.0, 0.5, -0.5]);
    assert!((p.memory[0] - 0.5f32.tanh()).abs() < 1e-7);
    let p = decode(&[0.0, -10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert!((p.sigma - (-2.5f32).exp()).abs() < 1e-7, "width is bounded below");
    let raw = FixedHead::default().raw();
    let d = decode(&raw);
    assert!((d.blend - 0.9).abs() < 1e-6 && (d.sigma - 0.5).abs() < 1e-6 && d.clamp > 0.998);
}
