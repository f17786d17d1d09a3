//! Times the Vulkan engine alone on synthetic frames (no scene generator, no CLI):
//!   engine_bench MODEL_DIR OUT_WxH RATIO [FRAMES]
//! Prints the device line, then median and p99 GPU milliseconds per stage over FRAMES frames
//! after 20 warm-up frames, and with TESSEL_PROFILE=1 the median per network layer.

use std::path::Path;

use tessel_model::frame::FrameData;
use tessel_model::package::ModelPackage;
use tessel_model::sequence::Settings;
use vk_stages::{DeviceShared, Model, Runner};

fn synthetic(rw: usize, rh: usize, t: usize) -> FrameData {
    let mut color = vec![0.0f32; rw * rh * 4];
    for y in 0..rh {
        for x in 0..rw {
            let (fx, fy) = (x as f32 + t as f32 * 0.7, y as f32);
            let i = (y * rw + x) * 4;
            color[i] = 0.5 + 0.5 * (fx * 0.11).sin() * (fy * 0.07).cos();
            color[i + 1] = 0.5 + 0.5 * (fx * 0.05 + fy * 0.09).sin();
            color[i + 2] = 0.3 + 0.3 * ((fx - fy) * 0.13).cos();
            color[i + 3] = 1.0;
        }
    }
    let motion = [-0.7f32, 0.0].repeat(rw * rh);
    let depth: Vec<f32> = (0..rw * rh).map(|i| 0.2 + 0.6 * ((i % rw) as f32 / rw as f32)).collect();
    let jitter = [((t * 5) % 8) as f32 / 8.0 - 0.4375, ((t * 3) % 8) as f32 / 8.0 - 0.4375];
    FrameData { render: (rw, rh), color, motion, depth, jitter, reset: t == 0, reference: None }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        eprintln!("usage: engine_bench MODEL_DIR OUT_WxH RATIO [FRAMES]");
        std::process::exit(2);
    }
    let pkg = ModelPackage::read(Path::new(&a[1])).unwrap_or_else(|e| panic!("{e}"));
    let (w, h) = a[2].split_once('x').map(|(w, h)| (w.parse::<usize>().unwrap(), h.parse::<usize>().unwrap())).unwrap();
    let ratio: f32 = a[3].parse().unwrap();
    let frames: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(200);
    let (rw, rh) = ((w as f32 / ratio).round() as usize, (h as f32 / ratio).round() as usize);
    let shared = DeviceShared::open().unwrap_or_else(|e| panic!("{e}"));
    let model = Model::new(&shared, &pkg).unwrap_or_else(|e| panic!("{e}"));
    println!("device: {}", shared.caps.summary());
    println!("network path: {}", model.path.label());
    let mut r = Runner::new(&model, Settings::default(), (rw, rh), (w, h)).unwrap();
    // The output stays on the device: reading it back every frame idles the GPU between frames.
    r.read_output = false;
    let inputs: Vec<FrameData> = (0..4).map(|t| synthetic(rw, rh, t)).collect();
    let mut times = Vec::new();
    for t in 0..frames + 20 {
        let (_, g) = r.evaluate(&inputs[t % 4]).unwrap();
        if t >= 20 {
            times.push(g);
        }
    }
    let flops = pkg.config.flops(w, h);
    let net_flops = (flops.total() - flops.input) as f64;
    println!("{rw}x{rh} -> {w}x{h}, {frames} frames after 20 warm-up; GPU ms (median / p99)");
    type Column = (&'static str, fn(&vk_stages::runner::GpuTimes) -> f64);
    let cols: [Column; 5] = [
        ("prepare", |g| g.prepare_ms),
        ("input", |g| g.input_ms),
        ("network", |g| g.network_ms),
        ("reconstruct", |g| g.reconstruct_ms),
        ("frame", |g| g.frame_ms),
    ];
    for (name, f) in cols {
        let mut v: Vec<f64> = times.iter().map(f).collect();
        println!("  {name:<12} {:>9.3} {:>9.3}", pct(&mut v, 0.5), pct(&mut v, 0.99));
    }
    let mut net: Vec<f64> = times.iter().map(|g| g.network_ms).collect();
    println!("  network {:.2} GFLOP -> {:.1} TFLOP/s", net_flops / 1e9, net_flops / (pct(&mut net, 0.5) * 1e-3) / 1e12);
    if let Some(first) = times.first() {
        for (i, (label, _)) in first.layers.iter().enumerate() {
            let mut v: Vec<f64> = times.iter().filter_map(|g| g.layers.get(i).map(|l| l.1)).collect();
            println!("  layer {label:<10} {:>9.3}", pct(&mut v, 0.5));
        }
    }
}
