//! Deterministic initial weights from a seed (PCG), rounded to f16 so a package round-trips exactly.

use std::collections::BTreeMap;

use half::f16;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::config::{NetworkConfig, HEAD_CHANNELS, TOKEN_PIXELS};
use crate::head::FixedHead;
use crate::package::{ModelPackage, Tensor};

fn round_f16(v: f32) -> f32 {
    f16::from_f32(v).to_f32()
}

pub fn untrained(config: NetworkConfig, seed: u64) -> ModelPackage {
    let mut rng = Pcg64::seed_from_u64(seed);
    let baseline = FixedHead::default();
    let raw = baseline.raw();
    let mut tensors = BTreeMap::new();
    for spec in config.tensor_specs() {
        let n: usize = spec.shape.iter().product();
        let name = spec.name.as_str();
        let data: Vec<f32> = if name.ends_with("norm1.weight") || name.ends_with("norm2.weight") || name == "head_norm.weight" {
            vec![1.0; n]
        } else if name == "head.bias" {
            (0..n).map(|i| raw[i % HEAD_CHANNELS]).collect()
        } else if name.ends_with(".bias") || name.ends_with(".rpb") {
            vec![0.0; n]
        } else {
            // Linear weight [out, in]: uniform with variance 1/in, smaller on residual and head outputs.
            let fan_in = spec.shape[1] as f32;
            let gain = if name.ends_with("proj.weight") || name.ends_with("fc2.weight") {
                0.5
            } else if name == "head.weight" {
                0.1
            } else {
                1.0
            };
            let a = gain * (3.0 / fan_in).sqrt();
            (0..n).map(|_| rng.gen_range(-a..a)).collect()
        };
        tensors.insert(spec.name.clone(), Tensor { shape: spec.shape.clone(), data: data.into_iter().map(round_f16).collect() });
    }
    debug_assert_eq!(tensors["head.bias"].data.len(), TOKEN_PIXELS * HEAD_CHANNELS);
    ModelPackage {
        name: format!("untrained-seed{seed}"),
        trained: false,
        description: "UNTRAINED: deterministic initial weights from a seed, for tests only".into(),
        config,
        baseline,
        provenance: serde_json::json!({"generator": "tessel-model init", "seed": seed}),
        tensors,
    }
}
