//! The fused block (block_fused.comp, opted in with TESSEL_VK_FUSED=1) against the CPU reference
//! on the golden cases, each frame with its own history: head >= 60 dB, image >= 50 dB. In its own
//! test binary, since the switch is read from the environment when a model loads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tessel_model::metrics::{psnr_range, psnr_tm, tonemapped_rgb};
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::sequence::Sequence;
use vk_stages::runner::ReadBack;
use vk_stages::{DeviceShared, Model, Runner};

#[test]
fn fused_blocks_match_the_cpu_reference() {
    std::env::set_var("TESSEL_VK_FUSED", "1");
    let shared = match DeviceShared::open() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipped: no Vulkan device: {e}");
            return;
        }
    };
    let root = std::env::var_os("TESSEL_GOLDEN_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/golden"));
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("golden.json").is_file()).collect();
    cases.sort();
    let mut fused_any = false;
    for case in cases {
        let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(case.join("golden.json")).unwrap()).unwrap();
        let dir = golden["model"].as_str().map(|d| case.join(d)).unwrap_or_else(|| root.join("../../../models/tessel-v6"));
        let pkg = ModelPackage::read(&dir).unwrap();
        let seq = Sequence::open(&case.join("frames.json")).unwrap();
        let model = Model::new(&shared, &pkg).unwrap();
        eprintln!("{}: fused levels {:?}", case.display(), model.fused);
        fused_any |= model.fused.iter().any(|&f| f);
        let cap = (0..seq.len()).map(|i| seq.load_frame(i).unwrap().render).fold((1, 1), |a, r| (a.0.max(r.0), a.1.max(r.1)));
        let mut gpu = Runner::new(&model, seq.settings().clone(), cap, seq.output()).unwrap();
        gpu.read = ReadBack { tokens: false, head: true, history: false };
        let mut cpu = Upscaler::new(HeadSource::Network(Arc::new(Network::from_package(&pkg))), seq.settings().clone(), seq.output());
        let e = seq.settings().exposure.value().unwrap_or(1.0);
        for i in 0..seq.len() {
            let f = seq.load_frame(i).unwrap();
            let c = cpu.evaluate(&f);
            let (g, _) = gpu.evaluate(&f).unwrap();
            let h = psnr_range(&g.head, &c.head);
            let im = psnr_tm(&tonemapped_rgb(&g.output, e), &tonemapped_rgb(&c.output, e));
            eprintln!("  frame {i}: head {h:.1} dB, image {im:.1} dB");
            assert!(h >= 60.0 && im >= 50.0, "frame {i}: head {h:.1} dB, image {im:.1} dB");
        }
    }
    assert!(fused_any, "no level was fused: the test checked nothing");
}
