//! The native network against the CPU reference (standalone: the reference's token buffer in,
//! the head buffer out) on the golden cases, direct and through the eight captured graphs; and
//! its GPU time at 2560x1440 and 3840x2160. Skips loudly without a GPU runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hip_net::{Context, DeviceBuffer, Event, Network, Stream};
use tessel_model::metrics::psnr_range;
use tessel_model::network::Network as CpuNetwork;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::sequence::Sequence;

mod common;
use common::context;

fn golden_root() -> PathBuf {
    std::env::var_os("TESSEL_GOLDEN_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/golden"))
}

fn f16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect()
}

#[test]
fn native_network_matches_the_cpu_reference_on_the_golden_cases() {
    let Some(ctx) = context() else { return };
    let mut cases: Vec<PathBuf> = std::fs::read_dir(golden_root()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("golden.json").is_file()).collect();
    cases.sort();
    let mut worst = f64::MAX;
    for case in cases {
        let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(case.join("golden.json")).unwrap()).unwrap();
        let dir = match golden["model"].as_str() {
            Some(d) => case.join(d),
            None => golden_root().join("../../../models").join(tessel_model::SHIPPED_MODEL),
        };
        let pkg = ModelPackage::read(&dir).unwrap();
        let seq = Sequence::open(&case.join("frames.json")).unwrap();
        let mut net = Network::new(&ctx, &pkg, seq.output()).unwrap();
        report_kernels(&net);
        if std::env::var("TESSEL_HIP_WMMA").is_ok_and(|v| v == "1") {
            // Asked for: the WMMA linear kernel must have passed its load check and be the one
            // measured here, not the portable fallback.
            let m = net.matrix().unwrap_or_else(|why| panic!("TESSEL_HIP_WMMA=1, but the network runs the portable kernels: {why}"));
            assert!(!m.fuses_blocks(), "TESSEL_HIP_WMMA=1 gave {}", m.describe());
        }
        let mut cpu = Upscaler::new(HeadSource::Network(Arc::new(CpuNetwork::from_package(&pkg))), seq.settings().clone(), seq.output());
        for graphs in [false, true] {
            if graphs {
                net.build_graphs().unwrap();
            }
            for i in 0..seq.len() {
                let ev = cpu.evaluate(&seq.load_frame(i).unwrap());
                let mut head = vec![0u8; ev.head.len() * 2];
                net.evaluate(&f16_bytes(&ev.tokens), ev.phase, &mut head).unwrap();
                let p = psnr_range(&f32s(&head), &ev.head);
                println!("{} frame {i} phase {} ({}): head {p:.1} dB", case.file_name().unwrap().to_string_lossy(), ev.phase, if graphs { "graph" } else { "direct" });
                worst = worst.min(p);
            }
        }
    }
    println!("worst head: {worst:.1} dB");
    assert!(worst >= 60.0, "head {worst:.1} dB below 60");
}

/// The shipped model's and the fast preset's network: per launch at 3840x2160, then as graphs
/// at 2560x1440 and 3840x2160.
#[test]
fn native_network_gpu_time() {
    let Some(ctx) = context() else { return };
    let rate = copy_rate(&ctx);
    for model in [tessel_model::SHIPPED_MODEL, tessel_model::FAST_MODEL] {
        if !listed("TESSEL_TIME_MODELS", model) {
            continue;
        }
        let pkg = ModelPackage::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models").join(model)).unwrap();
        println!("{model}:");
        time_package(&ctx, &pkg, model, rate);
    }
}

/// Whether `name` is in the comma-separated list `var` holds, or `var` is unset: the timing
/// test narrowed to some packages (TESSEL_TIME_MODELS) or sizes (TESSEL_TIME_SIZES, WxH) for a
/// profiler's run.
fn listed(var: &str, name: &str) -> bool {
    std::env::var(var).map_or(true, |o| o.split(',').any(|n| n == name))
}

/// This device's copy rate in GB/s: a 512 MiB device-to-device copy (ten times the largest L2
/// of these GPUs), bytes read and written both counted, median of 20 after 3 warm-ups. The
/// ceiling the launches' bytes are measured against (../shared/TOOLCHAIN.md gives the H200's,
/// 4.16 TB/s; other devices differ).
fn copy_rate(ctx: &Arc<Context>) -> f64 {
    const BYTES: usize = 512 << 20;
    let (a, b) = (DeviceBuffer::alloc(ctx, BYTES).unwrap(), DeviceBuffer::alloc(ctx, BYTES).unwrap());
    let stream = Stream::new(ctx).unwrap();
    a.fill_on(&stream, 1).unwrap();
    let (e0, e1) = (Event::new(ctx).unwrap(), Event::new(ctx).unwrap());
    let mut ms = Vec::new();
    for i in 0..23 {
        e0.record(&stream).unwrap();
        b.copy_from_on(&a, &stream).unwrap();
        e1.record(&stream).unwrap();
        e1.synchronize().unwrap();
        if i >= 3 {
            ms.push(Event::elapsed_ms(&e0, &e1).unwrap());
        }
    }
    let rate = 2.0 * BYTES as f64 / 1e6 / median(ms) as f64;
    // The copy arrived whole: every byte of the destination is the source's.
    let mut whole = vec![0u8; BYTES];
    b.download(&mut whole).unwrap();
    assert!(whole.iter().all(|&x| x == 1), "the device copy did not arrive");
    println!("device copy rate: {:.2} TB/s (a 512 MiB device-to-device copy, read and write counted)", rate / 1e3);
    rate
}

fn time_package(ctx: &Arc<Context>, pkg: &ModelPackage, model: &str, rate: f64) {
    for out in [(2560, 1440), (3840, 2160)] {
        if !listed("TESSEL_TIME_SIZES", &format!("{}x{}", out.0, out.1)) {
            continue;
        }
        let mut net = Network::new(ctx, pkg, out).unwrap();
        // Tokens: a smooth pattern in the f16 range the input stage writes.
        let n = net.tokens.len() / 2;
        let tokens: Vec<f32> = (0..n).map(|i| ((i % 997) as f32 * 0.013).sin() * 0.5).collect();
        let mut head = vec![0u8; net.head.len()];
        net.evaluate(&f16_bytes(&tokens), 0, &mut head).unwrap();
        if out.0 == 3840 {
            report_kernels(&net);
            println!("per launch at {}x{} (median of 20, events around each):", out.0, out.1);
            // Against this device's copy rate for the bytes each launch must move at the least.
            let mut bytes = 0u64;
            // How each launch fills the device (CUDA driver's occupancy; nothing where not asked).
            let waves = net.launch_waves().unwrap_or_else(|e| {
                println!("  (workgroups an SM not known: {e})");
                Vec::new()
            });
            for (i, (label, kernel, ms, c)) in net.profile(20).unwrap().into_iter().enumerate() {
                let (gb, tf) = (c.bytes as f64 / 1e6 / ms as f64, c.flops as f64 / 1e9 / ms as f64);
                let fill = match waves.get(i).copied().flatten() {
                    Some(w) => format!("  {} workgroups, {} an SM: {:.2} waves", w.workgroups, w.per_sm, w.waves()),
                    None => String::new(),
                };
                println!(
                    "  {label:<14} {kernel:<24} {ms:.3} ms  {:>7.1} MB {:>6.2} GFLOP  {gb:>5.0} GB/s ({:>2.0} % of the copy rate)  {tf:>5.1} TFLOP/s{fill}",
                    c.bytes as f64 / 1e6,
                    c.flops as f64 / 1e9,
                    100.0 * gb / rate
                );
                bytes += c.bytes;
            }
            println!("  the launches' bytes at the copy rate: {:.3} ms ({:.1} MB)", bytes as f64 / 1e6 / rate, bytes as f64 / 1e6);
        }
        let direct = median(net.time(10, 100).unwrap());
        net.build_graphs().unwrap();
        let graphs = median(net.time(10, 200).unwrap());
        let flops = pkg.config.flops(out.0, out.1);
        let f = (flops.total() - flops.input) as f64;
        println!(
            "native network {}x{} ({model}): {} launches; median {direct:.3} ms enqueued directly, {graphs:.3} ms as graphs ({:.1} TFLOP/s)",
            out.0,
            out.1,
            net.launches(),
            f / (graphs as f64 * 1e-3) / 1e12
        );
        assert!(graphs > 0.0 && graphs.is_finite());
    }
}

/// The path the network runs and, on the CUDA driver, what its JIT gave each kernel. A fused
/// block keeps its residual and tiles in registers by design: the JIT may keep a few words on
/// the stack (it put 8 bytes of tessel_block_mma_c48 there on the H200), never the tiles.
/// The limit is 16 bytes or the kernel's `tessel_kernels::nvidia_spill_allowance`;
/// TESSEL_SPILL_LIMIT (bytes) raises it for an experiment that times a build which spills
/// (scripts/device_variants.sh).
fn report_kernels(net: &Network) {
    let limit: i32 = std::env::var("TESSEL_SPILL_LIMIT").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    match net.matrix() {
        Ok(m) => println!("matrix path: {}{}", m.describe(), if m.fuses_blocks() { " (fused blocks)" } else { "" }),
        Err(why) => println!("matrix path: {why}; portable kernels"),
    }
    println!("expansions: {}", if net.pulls() { "pulled by the next level's first block" } else { "pushed by the level above's last block" });
    println!("{}", hip_net::plan::stream16_words(net.stream16()));
    println!("{}", hip_net::plan::cache_hints_words(net.cache_hints()));
    println!("{}", hip_net::plan::order_words(net.order()));
    println!("{}", hip_net::plan::prefetch_words(net.prefetch()));
    // tessel_kernels::nvidia_spill_allowance's target: "sm_90a" where the network runs the
    // warpgroup object; any other object has the default allowance.
    let target = if net.matrix().is_ok_and(|m| m == tessel_kernels::Matrix::Wgmma) { "sm_90a" } else { "sm_90" };
    for (kernel, regs, local) in net.jit_report().unwrap() {
        println!("  {kernel}: {regs} registers, {local} local bytes per thread");
        if kernel.contains("_mma_") {
            let limit = limit.max(tessel_kernels::nvidia_spill_allowance(target, &kernel) as i32);
            assert!(local <= limit, "{kernel} spills {local} bytes per thread (limit {limit}: tessel_kernels::nvidia_spill_allowance, or TESSEL_SPILL_LIMIT)");
        }
    }
}

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Network shapes other than the shipped one's (docs/MODEL.md, the `--arch` shapes and the fast
/// preset's), each the shipped config with these fields replaced: what each costs on the GPU,
/// before anything is trained for it. TESSEL_SHAPES (a JSON array of such objects) replaces the list.
const SHAPES: &[&str] = &[
    "{}",
    r#"{"channels": [16, 48, 96], "encoder_depths": [1, 3], "bottleneck_depth": 3, "decoder_depths": [1, 3]}"#,
    r#"{"encoder_depths": [1, 1], "bottleneck_depth": 4, "decoder_depths": [1, 1]}"#,
    r#"{"channels": [16, 48, 112], "bottleneck_depth": 3}"#,
    r#"{"channels": [16, 64, 128], "encoder_depths": [1, 1], "bottleneck_depth": 2, "decoder_depths": [1, 1]}"#,
    r#"{"channels": [16, 48, 96, 128], "encoder_depths": [1, 2, 1], "bottleneck_depth": 2, "decoder_depths": [1, 2, 1]}"#,
    r#"{"channels": [16, 48, 96]}"#,
    r#"{"mlp_ratio": 1}"#,
    r#"{"encoder_depths": [1, 1], "decoder_depths": [1, 1]}"#,
    // The fast preset's shape (models/tessel-v12-fast), and it with one bottleneck block.
    r#"{"channels": [16, 48, 96], "encoder_depths": [1, 1], "decoder_depths": [1, 1]}"#,
    r#"{"channels": [16, 48, 96], "encoder_depths": [1, 1], "bottleneck_depth": 1, "decoder_depths": [1, 1]}"#,
    r#"{"bottleneck_depth": 1}"#,
    // The shipped shape without the per-pixel head path: the head then reads no token rows
    // (133.7 MB at 4K; docs/NATIVE.md, "Where the ends' bytes go").
    r#"{"pixel_head": false}"#,
];

fn shapes() -> Vec<serde_json::Value> {
    match std::env::var("TESSEL_SHAPES") {
        Ok(list) => serde_json::from_str(&list).unwrap_or_else(|e| panic!("TESSEL_SHAPES is not a JSON array of objects: {e}")),
        Err(_) => SHAPES.iter().map(|s| serde_json::from_str(s).unwrap()).collect(),
    }
}

/// Every shape of [`shapes`] with untrained weights: the native head against the CPU reference
/// on a small grid at two window phases (the same bound as the golden cases), then its GPU time
/// as graphs at 2560x1440 and 3840x2160 and per launch at 3840x2160.
#[test]
fn native_network_shapes_gpu_time() {
    let Some(ctx) = context() else { return };
    let shipped = ModelPackage::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models").join(tessel_model::SHIPPED_MODEL)).unwrap();
    let (mut table, mut failed) = (Vec::new(), Vec::new());
    for (i, shape) in shapes().into_iter().enumerate() {
        let mut cfg = serde_json::to_value(&shipped.config).unwrap();
        for (k, v) in shape.as_object().expect("a shape is a JSON object") {
            cfg[k.as_str()] = v.clone();
        }
        let cfg: tessel_model::config::NetworkConfig = serde_json::from_value(cfg).unwrap_or_else(|e| panic!("shape {shape}: {e}"));
        cfg.validate().unwrap_or_else(|(field, why)| panic!("shape {shape}: {field}: {why}"));
        let mut pkg = ModelPackage::untrained(cfg.clone(), 7 + i as u64);
        // The untrained head varies little around its bias; eight times its weights (exact in
        // f16) give the agreement a range like a trained head's.
        for name in ["head.weight", "pixel_head.weight"] {
            if let Some(t) = pkg.tensors.get_mut(name) {
                t.data.iter_mut().for_each(|v| *v *= 8.0);
            }
        }
        // Agreement first: a shape the kernels compute wrongly has no time worth reporting.
        let (w, h) = (272, 160);
        let grid = tessel_model::config::TokenGrid::new(&cfg, w, h);
        let net = Network::new(&ctx, &pkg, (w, h)).unwrap();
        let cpu = CpuNetwork::from_package(&pkg);
        let n = net.tokens.len() / 2;
        let mut worst = f64::MAX;
        for phase in [0, 5] {
            let tokens: Vec<f32> = (0..n).map(|j| half::f16::from_f32((((j * 7 + phase) % 1013) as f32 * 0.029).sin() * 0.6).to_f32()).collect();
            let want = cpu.forward(&tokens, &grid, phase);
            let mut head = vec![0u8; net.head.len()];
            net.evaluate(&f16_bytes(&tokens), phase, &mut head).unwrap();
            worst = worst.min(psnr_range(&f32s(&head), &want));
        }
        println!("shape {i} {shape}: {:.2} GFLOP at 3840x2160, {} parameters; head against the CPU reference {worst:.1} dB", cfg.flops(3840, 2160).total() as f64 / 1e9, cfg.parameter_count());
        if worst < 60.0 {
            failed.push(format!("shape {shape}: head {worst:.1} dB below 60"));
            continue;
        }
        let mut ms = Vec::new();
        for out in [(2560, 1440), (3840, 2160)] {
            let mut net = Network::new(&ctx, &pkg, out).unwrap();
            let tokens: Vec<f32> = (0..net.tokens.len() / 2).map(|j| ((j % 997) as f32 * 0.013).sin() * 0.5).collect();
            let mut head = vec![0u8; net.head.len()];
            net.evaluate(&f16_bytes(&tokens), 0, &mut head).unwrap();
            if out.0 == 3840 {
                for (label, kernel, t, _) in net.profile(20).unwrap() {
                    println!("  {label:<14} {kernel:<30} {t:.3} ms");
                }
            }
            net.build_graphs().unwrap();
            ms.push(median(net.time(10, 200).unwrap()));
        }
        println!("  as graphs: {:.3} ms at 2560x1440, {:.3} ms at 3840x2160", ms[0], ms[1]);
        table.push((shape, cfg.flops(3840, 2160).total() as f64 / 1e9, ms[0], ms[1]));
    }
    println!("| shape | GFLOP at 4K | ms at 1440p | ms at 4K | TFLOP/s at 4K |\n|---|---|---|---|---|");
    for (shape, gf, a, b) in &table {
        println!("| `{shape}` | {gf:.2} | {a:.3} | {b:.3} | {:.0} |", gf / *b as f64);
    }
    assert!(failed.is_empty(), "{}", failed.join("; "));
}
