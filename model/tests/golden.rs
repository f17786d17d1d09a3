//! The CPU reference against golden vectors exported from the PyTorch twin (train/tessel_train/
//! golden.py) with the shipped model: tokens, head, final image and history, frame by frame, each
//! backend with its own temporal feedback. Contract: head and final image >= 60 dB. A case whose
//! golden.json names a `model` directory (relative to the case) uses that package, else
//! models/SHIPPED_MODEL (or TESSEL_GOLDEN_MODEL): the per-pixel head path is checked with a small
//! seeded network of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tessel_model::metrics::{psnr_range, psnr_tm, tonemapped_rgb};
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::sequence::{decode_floats, Sequence};

fn root() -> PathBuf {
    std::env::var_os("TESSEL_GOLDEN_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden"))
}

fn model() -> PathBuf {
    std::env::var_os("TESSEL_GOLDEN_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../models").join(tessel_model::SHIPPED_MODEL))
}


fn read(dir: &Path, name: &str, bits: u32) -> Vec<f32> {
    decode_floats(&std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display())), bits)
}

#[test]
fn cpu_reference_matches_pytorch_golden_vectors() {
    let load = |dir: &Path| {
        let pkg = ModelPackage::read(dir).unwrap_or_else(|e| panic!("golden vectors need their model package: {e}"));
        Arc::new(Network::from_package(&pkg))
    };
    let shipped = load(&model());
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root())
        .unwrap_or_else(|e| panic!("{}: {e}", root().display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("golden.json").is_file())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no golden cases under {}", root().display());
    let mut worst = [f64::MAX; 4];
    for case in &cases {
        let seq = Sequence::open(&case.join("frames.json")).unwrap();
        let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(case.join("golden.json")).unwrap()).unwrap();
        let e = seq.settings().exposure.value().unwrap();
        let net = match golden["model"].as_str() {
            Some(dir) => load(&case.join(dir)),
            None => shipped.clone(),
        };
        let mut up = Upscaler::new(HeadSource::Network(net), seq.settings().clone(), seq.output());
        for i in 0..seq.len() {
            let g = &golden["frames"][i];
            let ev = up.evaluate(&seq.load_frame(i).unwrap());
            let tokens = read(case, g["tokens"].as_str().unwrap(), 16);
            let head = read(case, g["head"].as_str().unwrap(), 16);
            let out_rgb = read(case, g["out"].as_str().unwrap(), 32);
            let hist = read(case, g["hist"].as_str().unwrap(), 16);
            let out_rgba: Vec<f32> = out_rgb.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 1.0]).collect();
            let scores = [
                psnr_range(&ev.tokens, &tokens),
                psnr_range(&ev.head, &head),
                psnr_tm(&tonemapped_rgb(&ev.output, e), &tonemapped_rgb(&out_rgba, e)),
                psnr_range(&up.history.color.data, &hist),
            ];
            eprintln!(
                "golden {} frame {i}: tokens {:.1} dB, head {:.1} dB, image {:.1} dB, history {:.1} dB",
                case.file_name().unwrap().to_string_lossy(),
                scores[0],
                scores[1],
                scores[2],
                scores[3]
            );
            for k in 0..4 {
                worst[k] = worst[k].min(scores[k]);
            }
        }
    }
    eprintln!("golden worst: tokens {:.1} dB, head {:.1} dB, image {:.1} dB, history {:.1} dB", worst[0], worst[1], worst[2], worst[3]);
    assert!(worst[0] >= 60.0, "tokens {:.2} dB", worst[0]);
    assert!(worst[1] >= 60.0, "head {:.2} dB", worst[1]);
    assert!(worst[2] >= 60.0, "final image {:.2} dB", worst[2]);
    assert!(worst[3] >= 60.0, "history {:.2} dB", worst[3]);
}

/// The shipped model is named once in Rust (tessel_model::SHIPPED_MODEL) and once in the PyTorch
/// twin (tessel_train.SHIPPED_MODEL, read by its tools and the trainer's golden vectors): both must
/// name the same package, and it must be there.
#[test]
fn the_twin_names_the_same_shipped_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let init = std::fs::read_to_string(root.join("train/tessel_train/__init__.py")).unwrap();
    let want = format!("SHIPPED_MODEL = \"models/{}\"", tessel_model::SHIPPED_MODEL);
    assert!(init.lines().any(|l| l.trim() == want), "train/tessel_train/__init__.py: no line `{want}`");
    assert!(root.join("models").join(tessel_model::SHIPPED_MODEL).join("model.json").is_file());
}
