//! End-to-end through the `tessel` binary: scene -> replay -> compare, bad input, and the
//! Vulkan backend against the CPU reference (check, replay, bench, soak; skipped loudly when no
//! Vulkan device is present).

use std::path::Path;
use std::process::{Command, Output};

use tessel_model::metrics::{psnr_tm, tonemapped_rgb};

fn tessel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessel")).args(args).env_remove("TESSEL_MODEL").output().expect("runs the binary")
}

fn ok(args: &[&str]) -> String {
    let o = tessel(args);
    assert!(o.status.success(), "tessel {args:?} failed:\n{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn classical_taau_beats_bicubic_and_the_fixed_head_on_a_moving_2x_scene() {
    let d = tempfile::tempdir().unwrap();
    let scene = d.path().join("scene");
    ok(&["scene", "--kind", "street", "--seed", "11", "--ratio", "2", "--size", "256x144", "--frames", "20", "--out", s(&scene)]);
    let frames = scene.join("frames.json");
    let taau = d.path().join("taau");
    ok(&["replay", s(&frames), "--network", "none", "--out", s(&taau), "--png", "--exr"]);
    for f in ["o0019.bin", "o0019.png", "o0019.exr", "report.json"] {
        assert!(taau.join(f).is_file(), "{f} missing");
    }
    assert_eq!(&std::fs::read(taau.join("o0000.png")).unwrap()[1..4], b"PNG");
    assert_eq!(&std::fs::read(taau.join("o0000.exr")).unwrap()[0..4], &[0x76, 0x2f, 0x31, 0x01]);
    // The contract's reconstruction with fixed head values: the classical TAAU must beat it.
    let fixed = d.path().join("fixed");
    ok(&["replay", s(&frames), "--network", "fixed", "--out", s(&fixed)]);
    let table = ok(&["compare", s(&taau), s(&frames), "--also", s(&fixed)]);
    assert!(table.contains("bicubic"), "{table}");
    let c = json(&taau.join("compare.json"));
    let m = c["methods"].as_array().unwrap();
    let (bicubic, base) = (m[0]["mean_psnr"].as_f64().unwrap(), m[1]["mean_psnr"].as_f64().unwrap());
    assert_eq!(c["frames"].as_array().unwrap().len(), 12, "frames 8..19");
    assert!(base > bicubic + 0.5, "TAAU {base:.3} dB vs bicubic {bicubic:.3} dB");
    let fixed_psnr = m[2]["mean_psnr"].as_f64().unwrap();
    assert!(base > fixed_psnr + 0.1, "classical TAAU {base:.3} dB vs fixed head {fixed_psnr:.3} dB");
    let (tb, tt) = (m[0]["mean_temporal"].as_f64().unwrap(), m[1]["mean_temporal"].as_f64().unwrap());
    assert!(tt < tb, "TAAU temporal error {tt} vs bicubic {tb}");
    // The replay report's PSNR of the last frame agrees with compare's.
    let r = json(&taau.join("report.json"));
    let last_r = r["frames"][19]["psnr"].as_f64().unwrap();
    let last_c = m[1]["psnr"][11].as_f64().unwrap();
    assert!((last_r - last_c).abs() < 1e-9);
}

/// `compare --picture`: panels of bicubic, each method and the truth; a method's panel is its own
/// PNG (to one step of 8 bits: the picture reads the f16 output file, the PNG was written from f32)
/// and below it, exactly, its 3x magnified centre.
#[test]
fn compare_draws_each_method_beside_bicubic_and_the_truth() {
    let d = tempfile::tempdir().unwrap();
    let scene = d.path().join("scene");
    let (w, h) = (96u32, 54u32);
    ok(&["scene", "--kind", "night", "--seed", "5", "--ratio", "2", "--size", "96x54", "--frames", "10", "--out", s(&scene)]);
    let frames = scene.join("frames.json");
    let taau = d.path().join("taau");
    ok(&["replay", s(&frames), "--network", "none", "--out", s(&taau), "--png"]);
    let pic = d.path().join("pic.png");
    let out = ok(&["compare", s(&taau), s(&frames), "--picture", s(&pic), "--picture-frame", "7"]);
    assert!(out.contains("picture of frame 7") && out.contains("bicubic, taau, ground truth"), "{out}");
    let p = image::open(&pic).unwrap().to_rgb8();
    let own = image::open(taau.join("o0007.png")).unwrap().to_rgb8();
    assert_eq!(p.dimensions(), (3 * w + 2 * 4, 2 * h + 4), "three panels, two rows");
    let (x0, cx0, cy0) = (w + 4, w / 2 - w / 6, h / 2 - h / 6);
    for y in 0..h {
        for x in 0..w {
            let (a, b) = (p.get_pixel(x0 + x, y).0, own.get_pixel(x, y).0);
            assert!((0..3).all(|c| a[c].abs_diff(b[c]) <= 1), "full frame at {x},{y}: {a:?} vs {b:?}");
            assert_eq!(p.get_pixel(x0 + x, h + 4 + y), p.get_pixel(x0 + cx0 + x / 3, cy0 + y / 3), "crop at {x},{y}");
        }
    }
    ok(&["compare", s(&taau), s(&frames), "--picture", s(&pic), "--crops-only"]);
    assert_eq!(image::open(&pic).unwrap().to_rgb8().dimensions(), (3 * w + 2 * 4, h), "one row of crops");
    let bad = tessel(&["compare", s(&taau), s(&frames), "--picture", s(&pic), "--picture-frame", "10"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("frame 10"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn cpu_network_runs_a_package_and_hip_without_a_runtime_says_so() {
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("model");
    ok(&["init-model", "--seed", "4", "--out", s(&model)]);
    let info = ok(&["info", "--model", s(&model)]);
    assert!(info.contains("UNTRAINED") && info.contains("3840x2160"), "{info}");
    let scene = d.path().join("scene");
    ok(&["scene", "--kind", "traffic", "--ratio", "3", "--size", "96x64", "--frames", "3", "--out", s(&scene)]);
    let frames = scene.join("frames.json");
    let out = d.path().join("cpu");
    ok(&["replay", s(&frames), "--network", "cpu", "--model", s(&model), "--out", s(&out)]);
    let r = json(&out.join("report.json"));
    assert_eq!(r["frames"].as_array().unwrap().len(), 3);
    assert!(r["network"].as_str().unwrap().contains("UNTRAINED"));
    // Without a GPU runtime (CI), HIP is refused naming what was tried, by every subcommand that
    // takes --network; with one, these run (the GPU machine's scripts/device_check.sh).
    if hip_net::Runtime::open(hip_net::Prefer::Auto).is_ok() {
        eprintln!("skipped: a GPU runtime is present, so --network hip is not refused here");
        return;
    }
    let hip = d.path().join("hip");
    for args in [
        vec!["replay", s(&frames), "--network", "hip", "--out", s(&hip)],
        vec!["bench", "--network", "cpu,hip", "--model", s(&model), "--size", "64x36", "--cpu-frames", "1"],
        vec!["soak", "--network", "hip", "--model", s(&model), "--size", "32x32", "--frames", "200"],
        vec!["check", "--network", "hip"],
    ] {
        let o = tessel(&args);
        assert!(!o.status.success(), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("HIP runtime not present") && e.contains("libamdhip64.so.7") && e.contains("libcuda"), "{args:?}: {e}");
    }
    // auto says in one line what it picked and why, HIP included.
    let auto = d.path().join("auto");
    ok(&["replay", s(&frames), "--network", "auto", "--model", s(&model), "--out", s(&auto)]);
    let label = json(&auto.join("report.json"))["network"].as_str().unwrap().to_string();
    assert!(
        label.starts_with("network: auto -> (native kernels in Vulkan: ") && label.contains("hip: HIP runtime not present") || label.starts_with("network: auto -> cpu (no Vulkan: "),
        "{label}"
    );
    assert!(!label.contains('\n'), "{label}");
    // A model path that does not exist is named in the error.
    let nowhere = d.path().join("nowhere");
    let o = tessel(&["replay", s(&frames), "--network", "cpu", "--model", s(&nowhere), "--out", s(&d.path().join("x"))]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("nowhere") && e.contains("model.json"), "{e}");
}

#[test]
fn bad_frames_are_refused_before_anything_is_overwritten() {
    let d = tempfile::tempdir().unwrap();
    let scene = d.path().join("scene");
    ok(&["scene", "--size", "64x48", "--frames", "3", "--out", s(&scene)]);
    let out = d.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("report.json"), b"earlier results").unwrap();
    std::fs::write(out.join("o0000.bin"), b"earlier frame").unwrap();
    let c = scene.join("c0002.bin");
    let b = std::fs::read(&c).unwrap();
    std::fs::write(&c, &b[..b.len() / 2]).unwrap();
    let o = tessel(&["replay", s(&scene.join("frames.json")), "--network", "none", "--out", s(&out)]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("c0002.bin") && e.contains("frames[2].color") && e.contains("truncated"), "{e}");
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), b"earlier results");
    assert_eq!(std::fs::read(out.join("o0000.bin")).unwrap(), b"earlier frame");
}

/// `--model NAME` that is neither a folder nor a shipped package names where it looked and which
/// packages are shipped.
#[test]
fn an_unknown_model_name_is_refused_with_the_shipped_names() {
    let o = tessel(&["info", "--model", "tessel-v99"]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--model tessel-v99: no such folder, and no shipped package of that name"), "{e}");
    assert!(e.contains("models/tessel-v99") && e.contains(tessel_model::FAST_MODEL), "{e}");
}

#[test]
fn nan_and_inf_pixels_are_sanitised_and_reported() {
    let d = tempfile::tempdir().unwrap();
    let scene = d.path().join("scene");
    ok(&["scene", "--size", "64x48", "--frames", "4", "--bits", "32", "--out", s(&scene)]);
    let c = scene.join("c0001.bin");
    let mut b = std::fs::read(&c).unwrap();
    b[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
    b[4..8].copy_from_slice(&f32::INFINITY.to_le_bytes());
    std::fs::write(&c, &b).unwrap();
    let out = d.path().join("out");
    ok(&["replay", s(&scene.join("frames.json")), "--network", "none", "--out", s(&out)]);
    let r = json(&out.join("report.json"));
    assert_eq!(r["frames"][1]["sanitized"].as_u64().unwrap(), 2);
    for i in 0..4 {
        let bytes = std::fs::read(out.join(format!("o{i:04}.bin"))).unwrap();
        assert!(bytes.chunks_exact(4).all(|v| f32::from_le_bytes([v[0], v[1], v[2], v[3]]).is_finite()), "frame {i}");
    }
}

/// Each shipped package is trained and beats its own tuned baseline on a held-out `tessel scene`
/// sequence (tessel-v12: 25.30 vs 23.29 dB, temporal 0.0734 vs 0.0841; the classical TAAU 24.03;
/// tessel-v11 had 25.22 dB, tessel-v10 25.29, tessel-v9 25.01, tessel-v8 25.08, tessel-v6 25.14, tessel-v5 25.04, tessel-v4 25.11, tessel-v2 24.87 and
/// tessel-v1 24.57, and the last two would fail the 1.7 dB margin; the fast preset tessel-v12-fast
/// 25.16 dB, temporal 0.0739). The fast preset is named as `--model` takes a shipped package's name.
#[test]
fn shipped_models_beat_their_tuned_baseline_on_a_held_out_scene() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let scene = d.path().join("scene");
    ok(&["scene", "--kind", "mixed", "--seed", "777", "--ratio", "2", "--size", "256x144", "--frames", "24", "--out", s(&scene)]);
    let frames = scene.join("frames.json");
    let classic = d.path().join("classic");
    ok(&["replay", s(&frames), "--network", "none", "--out", s(&classic)]);
    let shipped = root.join("models").join(tessel_model::SHIPPED_MODEL);
    for (name, model) in [(tessel_model::SHIPPED_MODEL, s(&shipped)), (tessel_model::FAST_MODEL, tessel_model::FAST_MODEL)] {
        let info = ok(&["info", "--model", model]);
        assert!(info.contains(&format!("model: {name}")) && !info.contains("UNTRAINED"), "{info}");
        assert!(info.contains("tessel-v12 (the default)") && info.contains("tessel-v12-fast (the fast preset)"), "{info}");
        let (net, taau) = (d.path().join(format!("net-{name}")), d.path().join(format!("taau-{name}")));
        ok(&["replay", s(&frames), "--network", "cpu", "--model", model, "--out", s(&net)]);
        ok(&["replay", s(&frames), "--network", "fixed", "--model", model, "--out", s(&taau)]);
        ok(&["compare", s(&net), s(&frames), "--also", s(&taau), "--also", s(&classic)]);
        let c = json(&net.join("compare.json"));
        let m = c["methods"].as_array().unwrap();
        let (bicubic, tessel, base) = (m[0]["mean_psnr"].as_f64().unwrap(), m[1]["mean_psnr"].as_f64().unwrap(), m[2]["mean_psnr"].as_f64().unwrap());
        assert!(tessel > base + 1.7, "{name}: {tessel:.3} dB vs the tuned fixed head {base:.3} dB");
        assert!(tessel > bicubic + 4.0, "{name}: {tessel:.3} dB vs bicubic {bicubic:.3} dB");
        assert!(m[1]["mean_temporal"].as_f64().unwrap() < m[2]["mean_temporal"].as_f64().unwrap(), "{name}");
        // The fixed head used the model's tuned values.
        assert!(json(&taau.join("report.json"))["network"].as_str().unwrap().contains("blend 0.750, sigma 0.300, clamp 0.000"));
        // The classical TAAU lies between the fixed head and the model on this scene.
        let classic_psnr = m[3]["mean_psnr"].as_f64().unwrap();
        assert!(classic_psnr > base && tessel > classic_psnr + CLASSIC_MARGIN, "{name}: {tessel:.3}, classical TAAU {classic_psnr:.3}, fixed head {base:.3} dB");
    }
}

/// The shipped models over the classical TAAU on that test's scene (mixed, seed 777, 2x): tessel-v12
/// 1.28 dB (tessel-v11 1.19, tessel-v10 1.26; tessel-v9 had 1.14 over the TAAU's earlier parameters,
/// 0.5 the margin then), tessel-v12-fast 1.13.
const CLASSIC_MARGIN: f64 = 1.0;

/// True when a Vulkan device opens; otherwise says the test is skipped.
fn vulkan_present(test: &str) -> bool {
    match vk_stages::DeviceShared::open() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped: no Vulkan device ({test}): {e}");
            false
        }
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn f64s(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} missing or not a number in {v}"))
}

/// `tessel check` passes on the device present: head and tokens >= 60 dB on every golden frame,
/// image >= 50 dB on all 32 frames of the generated sequence, finite outputs, and the poisoned
/// frame's sanitised count equal to the CPU's.
#[test]
fn check_passes_against_the_cpu_reference() {
    if !vulkan_present("tessel check") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("check.json");
    let golden = root().join("model/tests/golden");
    let model = root().join("models").join(tessel_model::SHIPPED_MODEL);
    let text = ok(&["check", "--golden", s(&golden), "--model", s(&model), "--json", s(&out)]);
    assert!(text.contains("summary") && text.contains("skipped: no HIP runtime"), "{text}");
    let r = json(&out);
    assert_eq!(r["pass"], true);
    let b = &r["backends"].as_array().unwrap()[0];
    assert_eq!(b["backend"], "vulkan");
    assert!(b["label"].as_str().unwrap().contains("sync: single command buffer"));
    let golden_rows = b["golden"].as_array().unwrap();
    assert_eq!(golden_rows.len(), 27, "3 + 4 + 3 + 5 + 5 golden frames, and 3 + 4 of the fast preset's");
    for row in golden_rows {
        assert!(f64s(row, "head_db") >= 60.0 && f64s(row, "tokens_db") >= 60.0, "{row}");
        assert!(f64s(row, "image_db") >= 50.0, "{row}");
    }
    let seq = sequence_rows_pass(b);
    let poisoned: Vec<_> = seq.iter().filter(|r| r["poisoned"] == true).collect();
    assert_eq!(poisoned.len(), 1);
    assert!(poisoned[0]["sanitized"].as_u64().unwrap() > 0);
    assert!(seq[16]["reset"] == true && seq[23]["render"] != seq[24]["render"], "reset at 16, size change at 24");
    assert!(f64s(b, "worst_sequence_image_db") >= 50.0);
    // The classical TAAU's shader against its CPU reference, on the same sequence.
    let t = &r["backends"].as_array().unwrap()[1];
    assert_eq!(t["backend"], "none");
    assert!(t["label"].as_str().unwrap().contains("shaders/taau.comp"), "{}", t["label"]);
    assert!(t["golden"].as_array().unwrap().is_empty());
    let seq = sequence_rows_pass(t);
    assert!(seq[5]["sanitized"].as_u64().unwrap() > 0, "the poisoned frame");
}

/// A backend's 32 generated-sequence rows: image >= 50 dB, finite, sanitised as the CPU did.
fn sequence_rows_pass(b: &serde_json::Value) -> &Vec<serde_json::Value> {
    let seq = b["sequence"].as_array().unwrap();
    assert_eq!(seq.len(), 32);
    for row in seq {
        assert!(f64s(row, "image_db") >= 50.0, "{row}");
        assert_eq!(row["finite"], true, "{row}");
        assert_eq!(row["sanitized"], row["cpu_sanitized"], "{row}");
    }
    seq
}

/// `replay --network vulkan` writes what `--network cpu` writes, to >= 50 dB on every frame.
#[test]
fn vulkan_replay_matches_the_cpu_replay() {
    if !vulkan_present("replay --network vulkan") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let scene = d.path().join("scene");
    ok(&["scene", "--kind", "night", "--seed", "9", "--ratio", "2", "--size", "160x90", "--frames", "8", "--bits", "32", "--out", s(&scene)]);
    let frames = scene.join("frames.json");
    let model = root().join("models").join(tessel_model::SHIPPED_MODEL);
    let (cpu, gpu) = (d.path().join("cpu"), d.path().join("gpu"));
    ok(&["replay", s(&frames), "--network", "cpu", "--model", s(&model), "--out", s(&cpu)]);
    ok(&["replay", s(&frames), "--network", "vulkan", "--model", s(&model), "--out", s(&gpu)]);
    let r = json(&gpu.join("report.json"));
    assert!(r["network"].as_str().unwrap().starts_with("network: vulkan on "), "{}", r["network"]);
    assert!(f64s(&r["frames"][7], "gpu_frame_ms") > 0.0);
    let read = |p: &Path| -> Vec<f32> { std::fs::read(p).unwrap().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect() };
    for i in 0..8 {
        let name = format!("o{i:04}.bin");
        let (a, b) = (read(&gpu.join(&name)), read(&cpu.join(&name)));
        assert_eq!(a.len(), 160 * 90 * 4);
        let p = psnr_tm(&tonemapped_rgb(&a, 1.0), &tonemapped_rgb(&b, 1.0));
        eprintln!("frame {i}: vulkan vs cpu {p:.1} dB");
        assert!(p >= 50.0, "frame {i}: {p:.1} dB");
    }
}

/// 20,000 frames through one Vulkan runner (the smallest network, the golden cases' seeded one,
/// at 32x32: about 4 ms a frame on lavapipe): RSS flat over the second half, outputs finite.
/// 20,000 rather than the GPU soak's 10,000: with the streamed input stage, lavapipe's worker
/// heaps take their last 1 MiB step near frame 7,000 (then stay flat through 30,000), which a
/// 10,000-frame run puts in its second half.
#[test]
fn soak_of_twenty_thousand_frames_keeps_rss_flat() {
    if !vulkan_present("tessel soak") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("soak.json");
    let model = root().join("model/tests/golden/3x_48x30_pixel_head/model");
    let t = std::time::Instant::now();
    let text = ok(&["soak", "--network", "vulkan", "--model", s(&model), "--size", "32x32", "--ratio", "2", "--frames", "20000", "--json", s(&out)]);
    eprintln!("soak took {:.1} s:\n{text}", t.elapsed().as_secs_f64());
    let r = json(&out);
    assert_eq!(r["frames"], 20000);
    assert_eq!(r["backend"], "vulkan");
    assert_eq!(r["pass"], true);
    assert_eq!(r["nonfinite_frames"], 0);
    assert!(f64s(&r, "late_growth_kib") <= 1024.0 && f64s(&r, "growth_kib") <= 8192.0, "{r}");
    assert!(f64s(&r, "rss_kib_at_100") > 0.0 && f64s(&r, "median_gpu_frame_ms") > 0.0);
    // The back-to-back pass after it: a GPU time of the same order as the soak's own frames.
    let (spaced, resident) = (f64s(&r, "median_gpu_frame_ms"), f64s(&r, "resident_gpu_frame_ms"));
    assert!(resident > 0.0 && resident < 10.0 * spaced && spaced < 10.0 * resident, "{r}");
    assert!(text.contains("after frame 100") && text.contains("after frame 20000"), "{text}");
    assert!(text.contains("50 times back to back"), "{text}");
}

/// `bench --network cpu,vulkan`: the same frames through both; JSON with positive, finite
/// medians and p99s per stage, and the network's TFLOP/s.
#[test]
fn bench_times_cpu_and_vulkan_and_writes_json() {
    if !vulkan_present("tessel bench") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("bench.json");
    let model = root().join("models").join(tessel_model::SHIPPED_MODEL);
    let text = ok(&["bench", "--network", "cpu,vulkan", "--model", s(&model), "--size", "64x36", "--frames", "20", "--warmup", "2", "--cpu-frames", "2", "--json", s(&out)]);
    assert!(text.contains("TFLOP/s"), "{text}");
    let r = json(&out);
    assert!(f64s(&r, "network_flops") > 0.0);
    let b = r["backends"].as_array().unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!((&b[0]["backend"], &b[1]["backend"]), (&"cpu".into(), &"vulkan".into()));
    assert_eq!((b[0]["frames"].as_u64(), b[1]["frames"].as_u64()), (Some(2), Some(20)));
    assert_eq!(b[1]["timing"], "gpu timestamps");
    for be in b {
        for key in ["frame_ms", "prepare_ms", "input_ms", "network_ms", "reconstruct_ms", "wall_ms"] {
            for q in ["median", "p99"] {
                let v = f64s(&be[key], q);
                assert!(v.is_finite() && v > 0.0, "{} {key}.{q} = {v}", be["backend"]);
            }
        }
        let t = f64s(be, "network_tflops");
        assert!(t.is_finite() && t > 0.0, "{}", be["backend"]);
    }
}

/// scripts/scene_data.sh (train.py's `tessel scene` data): one folder per kind, ratio and seed,
/// each a whole sequence with its cut, the seeds of the held-out scenes, the test scene, the demo
/// and the classical TAAU's tuning refused before anything is written.
#[test]
fn scene_data_writes_every_kind_ratio_and_seed_and_refuses_held_out_seeds() {
    let d = tempfile::tempdir().unwrap();
    let run = |first: &str, out: &Path| {
        Command::new("bash")
            .arg(root().join("scripts/scene_data.sh"))
            .args([s(out), first, "2", "4", "32"])
            .env("TESSEL", env!("CARGO_BIN_EXE_tessel"))
            .env("KINDS", "thin light")
            .env("JOBS", "2")
            .output()
            .expect("runs bash")
    };
    let out = d.path().join("data");
    let o = run("3000", &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let mut want: Vec<String> = ["thin", "light"].iter().flat_map(|k| ["1.5", "2", "3"].iter().flat_map(move |r| ["3000", "3001"].map(|s| format!("{k}_{r}x_{s}")))).collect();
    want.sort();
    assert_eq!(names, want);
    let seq = json(&out.join("light_3x_3001/frames.json"));
    assert_eq!(seq["output"], serde_json::json!([32, 32]));
    let resets: Vec<usize> = seq["frames"].as_array().unwrap().iter().enumerate().filter(|(_, f)| f["reset"] == true).map(|(i, _)| i).collect();
    assert_eq!(resets, [0, 2], "four frames, cut at two");
    // The same scene from the generator directly, byte for byte.
    let direct = d.path().join("direct");
    ok(&["scene", "--kind", "light", "--seed", "3001", "--ratio", "3", "--frames", "4", "--size", "32x32", "--out", s(&direct)]);
    assert_eq!(std::fs::read(direct.join("c0003.bin")).unwrap(), std::fs::read(out.join("light_3x_3001/c0003.bin")).unwrap());
    for first in ["1001", "1000", "776", "2025", "99"] {
        let refused = d.path().join(format!("refused-{first}"));
        let o = run(first, &refused);
        assert_eq!(o.status.code(), Some(2), "seeds from {first}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("held out"), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!refused.exists(), "nothing written for seeds from {first}");
    }
}
