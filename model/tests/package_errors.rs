//! The model package reader: round trip, and a clear error naming file and field for each kind of
//! bad package.

use std::path::Path;

use tessel_model::config::NetworkConfig;
use tessel_model::package::{ModelPackage, MODEL_JSON, WEIGHTS_FILE};

fn written() -> (tempfile::TempDir, ModelPackage) {
    let dir = tempfile::tempdir().unwrap();
    let pkg = ModelPackage::untrained(NetworkConfig::default(), 7);
    pkg.write(dir.path()).unwrap();
    (dir, pkg)
}

fn err_of(p: &Path) -> String {
    ModelPackage::read(p).expect_err("the bad package must be refused").to_string()
}

fn edit_json(dir: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join(MODEL_JSON);
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn round_trip_is_exact() {
    let (dir, pkg) = written();
    let back = ModelPackage::read(dir.path()).unwrap();
    assert_eq!(back.tensors, pkg.tensors);
    assert_eq!(back.config, pkg.config);
    assert!(!back.trained);
    assert_eq!(back.tensors.len(), pkg.config.tensor_specs().len());
}

#[test]
fn truncated_weights() {
    let (dir, _) = written();
    let w = dir.path().join(WEIGHTS_FILE);
    let bytes = std::fs::read(&w).unwrap();
    std::fs::write(&w, &bytes[..bytes.len() - 100]).unwrap();
    let e = err_of(dir.path());
    assert!(e.contains(WEIGHTS_FILE) && e.contains("files[0].bytes") && e.contains("truncated"), "{e}");
}

#[test]
fn corrupt_weights_fail_the_hash() {
    let (dir, _) = written();
    let w = dir.path().join(WEIGHTS_FILE);
    let mut bytes = std::fs::read(&w).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0x55;
    std::fs::write(&w, &bytes).unwrap();
    let e = err_of(dir.path());
    assert!(e.contains(WEIGHTS_FILE) && e.contains("sha256") && e.contains("mismatch"), "{e}");
}

#[test]
fn corrupt_header_with_a_matching_hash_is_still_refused() {
    let (dir, _) = written();
    let w = dir.path().join(WEIGHTS_FILE);
    let mut bytes = std::fs::read(&w).unwrap();
    bytes[9] = b'#'; // inside the JSON header
    std::fs::write(&w, &bytes).unwrap();
    let hash: String = {
        use sha2::Digest;
        sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
    };
    edit_json(dir.path(), |v| v["files"][0]["sha256"] = hash.into());
    let e = err_of(dir.path());
    assert!(e.contains(WEIGHTS_FILE) && e.contains("safetensors header"), "{e}");
}

#[test]
fn wrong_tensor_shape() {
    let (dir, _) = written();
    edit_json(dir.path(), |v| {
        let t = v["tensors"].as_array_mut().unwrap().iter_mut().find(|t| t["name"] == "enc0.0.qkv.weight").unwrap();
        t["shape"] = serde_json::json!([96, 48]);
    });
    let e = err_of(dir.path());
    assert!(e.contains(MODEL_JSON) && e.contains("enc0.0.qkv.weight") && e.contains("shape"), "{e}");
}

#[test]
fn config_and_weights_disagree() {
    // model.json claims wider channels than the weights hold: shapes fail against the file.
    let (dir, _) = written();
    edit_json(dir.path(), |v| v["config"]["channels"] = serde_json::json!([32, 64, 96]));
    let e = err_of(dir.path());
    assert!(e.contains("shape"), "{e}");
}

#[test]
fn bad_config_names_the_field() {
    let (dir, _) = written();
    edit_json(dir.path(), |v| v["config"]["channels"][2] = 100.into());
    let e = err_of(dir.path());
    assert!(e.contains("config.channels[2]"), "{e}");
}

#[test]
fn history_a_out_of_range_names_the_field() {
    let (dir, _) = written();
    edit_json(dir.path(), |v| v["config"]["history_a"] = serde_json::json!(-1.5));
    let e = err_of(dir.path());
    assert!(e.contains("model.json") && e.contains("config.history_a") && e.contains("-1.5"), "{e}");
}

#[test]
fn version_and_format() {
    let (dir, _) = written();
    edit_json(dir.path(), |v| v["format_version"] = 99.into());
    assert!(err_of(dir.path()).contains("format_version"));
    edit_json(dir.path(), |v| {
        v["format_version"] = 1.into();
        v["format"] = "something-else".into();
    });
    assert!(err_of(dir.path()).contains("format"));
}

#[test]
fn truncated_model_json() {
    let (dir, _) = written();
    let p = dir.path().join(MODEL_JSON);
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    let e = err_of(dir.path());
    assert!(e.contains(MODEL_JSON) && e.contains("line"), "{e}");
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().unwrap();
    assert!(err_of(dir.path()).contains(MODEL_JSON));
    let (dir, _) = written();
    std::fs::remove_file(dir.path().join(WEIGHTS_FILE)).unwrap();
    assert!(err_of(dir.path()).contains(WEIGHTS_FILE));
}

#[test]
fn failed_write_keeps_the_old_package() {
    // Writing a package whose tensors do not match its config fails before touching the folder.
    let (dir, _) = written();
    let before = std::fs::read(dir.path().join(WEIGHTS_FILE)).unwrap();
    let mut bad = ModelPackage::untrained(NetworkConfig::default(), 8);
    bad.tensors.get_mut("head.bias").unwrap().data.pop();
    assert!(bad.write(dir.path()).is_err());
    assert_eq!(std::fs::read(dir.path().join(WEIGHTS_FILE)).unwrap(), before);
    ModelPackage::read(dir.path()).unwrap();
}
