//! The split frame on a GPU that both Vulkan and the runtime reach (the H200 here): the Vulkan
//! front writes the token buffer, the native network (imported token and head buffers, the
//! imported timeline semaphore: tier 1) turns it into the head, the Vulkan back reconstructs.
//! Checked against the all-Vulkan frame (>= 50 dB on every frame of 32, with a reset, and over
//! 1,000 frames), then timed at 3840x2160 beside the all-Vulkan frame. Skips loudly without a
//! Vulkan device with exportable memory and semaphores, or without a GPU runtime.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hip_net::{Context, Prefer, Runtime, SplitNetwork, SyncTier};
use tessel_model::frame::FrameData;
use tessel_model::metrics::{psnr_tm, tonemapped_rgb};
use tessel_model::package::ModelPackage;
use tessel_model::sequence::Settings;
use vk_stages::{DeviceShared, Engine, Model, Runner};

mod common;

fn frame(rw: usize, rh: usize, t: usize) -> FrameData {
    FrameData { reset: t == 0 || t == 16, ..common::moving_frame(rw, rh, t, 0.7) }
}

type NetTimes = Arc<Mutex<Vec<f32>>>;

/// A Vulkan-only runner and a split runner with the native network on a sync tier, on one Vulkan
/// device.
fn runners(pkg: &ModelPackage, render: (usize, usize), out: (usize, usize), tier: SyncTier) -> Option<(Runner, Runner, NetTimes)> {
    let shared = match DeviceShared::open() {
        Ok(s) if s.caps.external_memory_fd && s.caps.external_semaphore_fd => s,
        Ok(s) => {
            println!("skipped: {} cannot export memory and semaphores", s.caps.name);
            return None;
        }
        Err(e) => {
            println!("skipped: no Vulkan device ({e})");
            return None;
        }
    };
    let rt = match Runtime::open(Prefer::Auto) {
        Ok(rt) => rt,
        Err(e) => {
            println!("skipped: no GPU runtime ({e})");
            return None;
        }
    };
    // The runtime's device is the Vulkan device, matched by UUID.
    let ctx = Context::new(&rt, shared.caps.uuid).expect("the runtime sees the Vulkan device");
    let model = Model::new(&shared, pkg).unwrap();
    let plain = Runner::new(&model, Settings::default(), render, out).unwrap();
    let mut engine = Engine::new(&model, render, out, true).unwrap();
    let mut split = SplitNetwork::attach(&mut engine, &ctx, pkg, tier).unwrap();
    let times = split.timing_log().unwrap();
    let mut runner = Runner::with_engine(engine, Settings::default()).unwrap();
    runner.external = Some(Box::new(split));
    Some((plain, runner, times))
}

const TIERS: [SyncTier; 3] = [SyncTier::Timeline, SyncTier::Marker, SyncTier::Host];

fn shipped() -> ModelPackage {
    ModelPackage::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models").join(tessel_model::SHIPPED_MODEL)).unwrap()
}

#[test]
fn split_frame_with_the_native_network_matches_the_vulkan_frame_on_every_tier() {
    let pkg = shipped();
    for tier in TIERS {
        split_frames(&pkg, tier);
    }
}

fn split_frames(pkg: &ModelPackage, tier: SyncTier) {
    let Some((mut plain, mut split, _)) = runners(pkg, (96, 54), (192, 108), tier) else { return };
    println!("sync tier {}", tier.name());
    let mut worst = f64::MAX;
    for t in 0..1000 {
        let f = frame(96, 54, t % 40);
        let (a, _) = plain.evaluate(&f).unwrap();
        let (b, _) = split.evaluate(&f).unwrap();
        let p = psnr_tm(&tonemapped_rgb(&a.output, 1.0), &tonemapped_rgb(&b.output, 1.0));
        if t < 4 || t % 250 == 0 {
            println!("frame {t}: split (native network) against all-Vulkan {p:.1} dB");
        }
        assert!(b.output.iter().all(|v| v.is_finite()), "frame {t}: non-finite output");
        worst = worst.min(p);
        assert!(p >= 50.0, "frame {t}: {p:.1} dB");
    }
    println!("{}: 1,000 frames, worst {worst:.1} dB", tier.name());
}

#[test]
fn split_frame_latency_at_4k_per_tier() {
    let pkg = shipped();
    for tier in TIERS {
        latency(&pkg, tier);
    }
}

fn latency(pkg: &ModelPackage, tier: SyncTier) {
    let (render, out) = ((1920, 1080), (3840, 2160));
    let Some((mut plain, mut split, times)) = runners(pkg, render, out, tier) else { return };
    plain.read_output = false;
    split.read_output = false;
    let f = frame(render.0, render.1, 1);
    plain.upload(&f).unwrap();
    split.upload(&f).unwrap();
    let input = |t: usize| common::frame_input(&f, t == 0);
    let mut rows = Vec::new();
    let split_name = format!("split, native network, sync {}", tier.name());
    for (name, r) in [("all-Vulkan", &mut plain), (split_name.as_str(), &mut split)] {
        let (mut wall, mut gpu_front_to_back, mut net) = (Vec::new(), Vec::new(), Vec::new());
        for t in 0..120 {
            let t0 = Instant::now();
            let (_, g) = r.run(&input(t)).unwrap();
            let w = t0.elapsed().as_secs_f64() * 1e3;
            if t >= 20 {
                wall.push(w);
                gpu_front_to_back.push(g.frame_ms);
                net.push(g.network_ms);
            }
        }
        rows.push((name, median(wall), median(gpu_front_to_back), median(net)));
    }
    let own: Vec<f64> = times.lock().unwrap().iter().skip(20).map(|v| *v as f64).collect();
    println!("{}: native network alone (events around its graph): median {:.3} ms over {} frames", tier.name(), median(own.clone()), own.len());
    for (name, wall, gpu, net) in rows {
        println!("{name}: frame {gpu:.3} ms GPU (front start to back end), tokens-to-head {net:.3} ms, {wall:.3} ms submit to fence");
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
