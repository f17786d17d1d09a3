//! What the Vulkan tests against the CPU reference share: the golden cases with their packages.

use std::path::{Path, PathBuf};

use tessel_model::package::ModelPackage;
use tessel_model::sequence::Sequence;

/// The golden cases (TESSEL_GOLDEN_DIR overrides, for a test binary carried to another machine).
pub fn golden_root() -> PathBuf {
    std::env::var_os("TESSEL_GOLDEN_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/golden"))
}

/// Every golden case, in name order: its folder, its model package (the case's own, or the
/// shipped model) and its frame sequence.
pub fn golden_cases() -> Vec<(PathBuf, ModelPackage, Sequence)> {
    let root = golden_root();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("golden.json").is_file()).collect();
    cases.sort();
    cases
        .into_iter()
        .map(|case| {
            let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(case.join("golden.json")).unwrap()).unwrap();
            let dir = golden["model"].as_str().map(|d| case.join(d)).unwrap_or_else(|| root.join("../../../models").join(tessel_model::SHIPPED_MODEL));
            let pkg = ModelPackage::read(&dir).unwrap();
            let seq = Sequence::open(&case.join("frames.json")).unwrap();
            (case, pkg, seq)
        })
        .collect()
}

/// The largest render size of a sequence's frames.
pub fn capacity(seq: &Sequence) -> (usize, usize) {
    (0..seq.len()).map(|i| seq.load_frame(i).unwrap().render).fold((1, 1), |a, r| (a.0.max(r.0), a.1.max(r.1)))
}

/// Runs every frame of a golden case through the CPU reference and a Vulkan runner side by side,
/// each with its own history, and hands each frame's two evaluations (and both upscalers, for
/// their histories) to `check`, with the exposure the images are scored under.
pub fn beside_cpu(
    model: &std::sync::Arc<vk_stages::Model>,
    pkg: &ModelPackage,
    seq: &Sequence,
    read: vk_stages::runner::ReadBack,
    mut check: impl FnMut(usize, f32, &tessel_model::pipeline::Evaluation, &tessel_model::pipeline::Evaluation, &tessel_model::pipeline::Upscaler, &vk_stages::Runner),
) {
    use tessel_model::pipeline::{HeadSource, Upscaler};
    let mut gpu = vk_stages::Runner::new(model, seq.settings().clone(), capacity(seq), seq.output()).unwrap();
    gpu.read = read;
    let net = std::sync::Arc::new(tessel_model::network::Network::from_package(pkg));
    let mut cpu = Upscaler::new(HeadSource::Network(net), seq.settings().clone(), seq.output());
    let e = seq.settings().exposure.value().unwrap_or(1.0);
    for i in 0..seq.len() {
        let f = seq.load_frame(i).unwrap();
        let c = cpu.evaluate(&f);
        let (g, _) = gpu.evaluate(&f).unwrap();
        check(i, e, &c, &g, &cpu, &gpu);
    }
}
