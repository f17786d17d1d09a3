//! The native network inside the Vulkan command buffer (VK_NVX_binary_import, NVIDIA): the same
//! kernels and plan as hip-net's own network, launched by the engine between its front and back.
//! Checked against the Vulkan shaders' frame (>= 50 dB on every frame of 300, with resets), its
//! head against the CPU reference on the golden cases (>= 60 dB), then timed at 3840x2160 beside
//! the shaders' frame. Skips loudly without the extension or the CUDA driver.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tessel_model::frame::FrameData;
use tessel_model::metrics::{psnr_range, psnr_tm, tonemapped_rgb};
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::sequence::{Sequence, Settings};
use vk_stages::runner::ReadBack;
use vk_stages::{DeviceShared, Model, Runner};

fn shipped() -> ModelPackage {
    ModelPackage::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models").join(tessel_model::SHIPPED_MODEL)).unwrap()
}

mod common;

fn frame(rw: usize, rh: usize, t: usize) -> FrameData {
    FrameData { reset: t % 100 == 0, ..common::moving_frame(rw, rh, t, 0.9) }
}

/// A runner on the shaders' network and one with the native network attached, or None (said).
fn runners(pkg: &ModelPackage, settings: &Settings, render: (usize, usize), out: (usize, usize)) -> Option<(Runner, Runner, String)> {
    let shared = match DeviceShared::open() {
        Ok(s) => s,
        Err(e) => {
            println!("skipped: no Vulkan device ({e})");
            return None;
        }
    };
    if let Err(why) = hip_net::in_vulkan::target(&shared, &pkg.config) {
        println!("skipped: no native kernels in a Vulkan command buffer ({why})");
        return None;
    }
    let model = Model::new(&shared, pkg).unwrap();
    let plain = Runner::new(&model, settings.clone(), render, out).unwrap();
    let mut native = Runner::new(&model, settings.clone(), render, out).unwrap();
    let describe = hip_net::in_vulkan::attach(&mut native.engine, pkg).expect("the native network attaches where its target is present");
    println!("{}: native network {describe}", shared.caps.name);
    Some((plain, native, describe))
}

#[test]
fn native_network_in_vulkan_matches_the_shaders_frame() {
    let pkg = shipped();
    let Some((mut plain, mut native, _)) = runners(&pkg, &Settings::default(), (96, 54), (192, 108)) else { return };
    let mut worst = f64::MAX;
    for t in 0..300 {
        let f = frame(96, 54, t);
        let (a, _) = plain.evaluate(&f).unwrap();
        let (b, _) = native.evaluate(&f).unwrap();
        assert!(b.output.iter().all(|v| v.is_finite()), "frame {t}: non-finite output");
        let p = psnr_tm(&tonemapped_rgb(&a.output, 1.0), &tonemapped_rgb(&b.output, 1.0));
        worst = worst.min(p);
        assert!(p >= 50.0, "frame {t}: {p:.1} dB against the shaders' frame");
    }
    println!("300 frames (resets at 0, 100, 200): native in Vulkan against the shaders' frame, worst {worst:.1} dB");
}

#[test]
fn native_network_in_vulkan_matches_the_cpu_reference_on_golden_cases() {
    let root = std::env::var_os("TESSEL_GOLDEN_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/golden"));
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("golden.json").is_file()).collect();
    cases.sort();
    assert!(!cases.is_empty(), "no golden cases in {}", root.display());
    for case in cases {
        let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(case.join("golden.json")).unwrap()).unwrap();
        let pkg = ModelPackage::read(&golden["model"].as_str().map(|d| case.join(d)).unwrap_or_else(|| root.join("../../../models").join(tessel_model::SHIPPED_MODEL))).unwrap();
        let seq = Sequence::open(&case.join("frames.json")).unwrap();
        let capacity = (0..seq.len()).map(|i| seq.load_frame(i).unwrap().render).fold((1, 1), |a, r| (a.0.max(r.0), a.1.max(r.1)));
        let Some((_, mut gpu, _)) = runners(&pkg, seq.settings(), capacity, seq.output()) else { return };
        gpu.read = ReadBack { tokens: true, head: true, history: false };
        let mut cpu = Upscaler::new(HeadSource::Network(Arc::new(Network::from_package(&pkg))), seq.settings().clone(), seq.output());
        let e = seq.settings().exposure.value().unwrap_or(1.0);
        for i in 0..seq.len() {
            let f = seq.load_frame(i).unwrap();
            let c = cpu.evaluate(&f);
            let (g, _) = gpu.evaluate(&f).unwrap();
            let h = psnr_range(&g.head, &c.head);
            let im = psnr_tm(&tonemapped_rgb(&g.output, e), &tonemapped_rgb(&c.output, e));
            println!("{} frame {i}: head {h:.1} dB, image {im:.1} dB against the CPU reference", case.file_name().unwrap().to_string_lossy());
            assert!(h >= 60.0 && im >= 50.0, "head {h:.1} dB (>= 60), image {im:.1} dB (>= 50)");
        }
    }
}

#[test]
fn native_network_in_vulkan_latency_at_4k() {
    let pkg = shipped();
    let (render, out) = ((1920, 1080), (3840, 2160));
    let Some((mut plain, mut native, _)) = runners(&pkg, &Settings::default(), render, out) else { return };
    for (name, r) in [("shaders", &mut plain), ("native in Vulkan", &mut native)] {
        r.read_output = false;
        let f = frame(render.0, render.1, 1);
        r.upload(&f).unwrap();
        let input = |t: usize| common::frame_input(&f, t == 0);
        let (mut frame_ms, mut net) = (Vec::new(), Vec::new());
        for t in 0..120 {
            let (_, g) = r.run(&input(t)).unwrap();
            if t >= 20 {
                frame_ms.push(g.frame_ms);
                net.push(g.network_ms);
            }
        }
        println!("{name}: frame {:.3} ms, network {:.3} ms (GPU timestamps, median of 100)", median(frame_ms), median(net));
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
