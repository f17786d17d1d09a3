//! The model package: a folder with `model.json` (format, version, config, tensor table, content
//! hash per weights file) and f16 weights in safetensors. docs/FORMATS.md is the prose contract.

use std::collections::BTreeMap;
use std::path::Path;

use half::f16;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::NetworkConfig;
use crate::error::{read_file, write_file_atomic, Error, Result};
use crate::head::FixedHead;

pub const FORMAT: &str = "tessel-model";
pub const FORMAT_VERSION: u32 = 1;
pub const MODEL_JSON: &str = "model.json";
pub const WEIGHTS_FILE: &str = "weights.safetensors";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TensorEntry {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub file: String,
}

/// The contents of model.json.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelJson {
    pub format: String,
    pub format_version: u32,
    pub name: String,
    /// False for generated packages: they are for tests only.
    pub trained: bool,
    pub description: String,
    pub config: NetworkConfig,
    /// Head values of the non-neural baseline (`--network none`) that goes with this model.
    #[serde(default)]
    pub baseline: FixedHead,
    pub files: Vec<FileEntry>,
    pub tensors: Vec<TensorEntry>,
    /// Free-form record of how the weights were made (training run, seed, ...).
    #[serde(default)]
    pub provenance: serde_json::Value,
}

/// A tensor held as f32 values (each exactly an f16 value of the package).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// A validated model package in memory.
#[derive(Clone, Debug)]
pub struct ModelPackage {
    pub name: String,
    pub trained: bool,
    pub description: String,
    pub config: NetworkConfig,
    pub baseline: FixedHead,
    pub provenance: serde_json::Value,
    pub tensors: BTreeMap<String, Tensor>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

impl ModelPackage {
    pub fn tensor(&self, name: &str) -> &Tensor {
        // Validation guarantees every tensor of the config's table is present.
        &self.tensors[name]
    }

    /// Reads and validates a package folder (or a path to its model.json).
    pub fn read(path: &Path) -> Result<ModelPackage> {
        if !path.exists() {
            return Err(Error::invalid(path, "model package", format!("no such folder or {MODEL_JSON}")));
        }
        let (dir, json_path) = if path.is_dir() {
            (path.to_path_buf(), path.join(MODEL_JSON))
        } else {
            (path.parent().unwrap_or(Path::new(".")).to_path_buf(), path.to_path_buf())
        };
        let text = read_file(&json_path)?;
        let mj: ModelJson = serde_json::from_slice(&text).map_err(|e| {
            Error::invalid(&json_path, format!("line {} column {}", e.line(), e.column()), e.to_string())
        })?;
        if mj.format != FORMAT {
            return Err(Error::invalid(&json_path, "format", format!("expected \"{FORMAT}\", found \"{}\"", mj.format)));
        }
        if mj.format_version != FORMAT_VERSION {
            return Err(Error::invalid(
                &json_path,
                "format_version",
                format!("version {} is not supported (this build reads {FORMAT_VERSION})", mj.format_version),
            ));
        }
        mj.config
            .validate()
            .map_err(|(field, msg)| Error::invalid(&json_path, format!("config.{field}"), msg))?;
        mj.baseline.validate().map_err(|(field, msg)| Error::invalid(&json_path, format!("baseline.{field}"), msg))?;

        // Every weights file: present, complete, hash matches.
        let mut files = BTreeMap::new();
        for (i, f) in mj.files.iter().enumerate() {
            if f.path.contains("..") || Path::new(&f.path).is_absolute() {
                return Err(Error::invalid(&json_path, format!("files[{i}].path"), "must be a plain name inside the package folder"));
            }
            let fp = dir.join(&f.path);
            let bytes = read_file(&fp)?;
            if bytes.len() as u64 != f.bytes {
                let what = if (bytes.len() as u64) < f.bytes { "truncated" } else { "longer than declared" };
                return Err(Error::invalid(
                    &fp,
                    format!("{MODEL_JSON} files[{i}].bytes"),
                    format!("{what}: model.json declares {} bytes, the file has {}", f.bytes, bytes.len()),
                ));
            }
            let h = sha256_hex(&bytes);
            if h != f.sha256 {
                return Err(Error::invalid(
                    &fp,
                    format!("{MODEL_JSON} files[{i}].sha256"),
                    format!("content hash mismatch (declared {}, file has {h}): the file is corrupt or was changed", f.sha256),
                ));
            }
            files.insert(f.path.clone(), (fp, bytes));
        }

        let entries: BTreeMap<&str, &TensorEntry> = mj.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut parsed = BTreeMap::new();
        for (name, (fp, bytes)) in &files {
            let st = safetensors::SafeTensors::deserialize(bytes)
                .map_err(|e| Error::invalid(fp, "safetensors header", format!("corrupt or truncated: {e}")))?;
            parsed.insert(name.clone(), (fp.clone(), st));
        }

        let mut tensors = BTreeMap::new();
        for spec in mj.config.tensor_specs() {
            let field = format!("tensors[\"{}\"]", spec.name);
            let e = entries
                .get(spec.name.as_str())
                .ok_or_else(|| Error::invalid(&json_path, &field, "missing from the tensor table"))?;
            if e.shape != spec.shape {
                return Err(Error::invalid(
                    &json_path,
                    format!("{field}.shape"),
                    format!("{:?} expected by the config, found {:?}", spec.shape, e.shape),
                ));
            }
            if e.dtype != "F16" {
                return Err(Error::invalid(&json_path, format!("{field}.dtype"), format!("F16 expected, found {}", e.dtype)));
            }
            let (fp, st) = parsed
                .get(&e.file)
                .ok_or_else(|| Error::invalid(&json_path, format!("{field}.file"), format!("'{}' is not in files", e.file)))?;
            let view = st
                .tensor(&spec.name)
                .map_err(|_| Error::invalid(fp, &spec.name, "tensor missing from the weights file"))?;
            if view.shape() != spec.shape.as_slice() {
                return Err(Error::invalid(
                    fp,
                    &spec.name,
                    format!("shape {:?} in the weights file, {:?} expected", view.shape(), spec.shape),
                ));
            }
            if view.dtype() != safetensors::Dtype::F16 {
                return Err(Error::invalid(fp, &spec.name, format!("dtype {:?} in the weights file, F16 expected", view.dtype())));
            }
            let data: Vec<f32> = view
                .data()
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect();
            if let Some(i) = data.iter().position(|v| !v.is_finite()) {
                return Err(Error::invalid(fp, &spec.name, format!("element {i} is not finite")));
            }
            tensors.insert(spec.name.clone(), Tensor { shape: spec.shape.clone(), data });
        }
        let expected: std::collections::BTreeSet<String> = mj.config.tensor_specs().into_iter().map(|s| s.name).collect();
        if let Some(extra) = mj.tensors.iter().find(|t| !expected.contains(&t.name)) {
            return Err(Error::invalid(&json_path, format!("tensors[\"{}\"]", extra.name), "not part of this config's network"));
        }
        Ok(ModelPackage {
            name: mj.name,
            trained: mj.trained,
            description: mj.description,
            config: mj.config,
            baseline: mj.baseline,
            provenance: mj.provenance,
            tensors,
        })
    }

    /// Writes the package into `dir` (created if needed): weights first, then model.json, each
    /// through a temporary file, so a failure never leaves a package that looks complete.
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let specs = self.config.tensor_specs();
        let mut raw: Vec<(String, Vec<u8>, Vec<usize>)> = Vec::new();
        for s in &specs {
            let t = self
                .tensors
                .get(&s.name)
                .ok_or_else(|| Error::invalid(dir, &s.name, "tensor missing from the package being written"))?;
            if t.shape != s.shape || t.data.len() != s.shape.iter().product::<usize>() {
                return Err(Error::invalid(dir, &s.name, format!("shape {:?} does not match the config's {:?}", t.shape, s.shape)));
            }
            let bytes: Vec<u8> = t.data.iter().flat_map(|v| f16::from_f32(*v).to_le_bytes()).collect();
            raw.push((s.name.clone(), bytes, s.shape.clone()));
        }
        let views: Vec<(String, safetensors::tensor::TensorView)> = raw
            .iter()
            .map(|(n, b, s)| (n.clone(), safetensors::tensor::TensorView::new(safetensors::Dtype::F16, s.clone(), b).expect("sizes checked above")))
            .collect();
        let mut meta = std::collections::HashMap::new();
        meta.insert("format".to_string(), FORMAT.to_string());
        let bytes = safetensors::serialize(views, &Some(meta))
            .map_err(|e| Error::invalid(dir.join(WEIGHTS_FILE), "safetensors", e.to_string()))?;
        let mj = ModelJson {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            name: self.name.clone(),
            trained: self.trained,
            description: self.description.clone(),
            config: self.config.clone(),
            baseline: self.baseline,
            files: vec![FileEntry { path: WEIGHTS_FILE.into(), bytes: bytes.len() as u64, sha256: sha256_hex(&bytes) }],
            tensors: specs
                .iter()
                .map(|s| TensorEntry { name: s.name.clone(), shape: s.shape.clone(), dtype: "F16".into(), file: WEIGHTS_FILE.into() })
                .collect(),
            provenance: self.provenance.clone(),
        };
        write_file_atomic(&dir.join(WEIGHTS_FILE), &bytes)?;
        let text = serde_json::to_vec_pretty(&mj).expect("model.json serialises");
        write_file_atomic(&dir.join(MODEL_JSON), &text)
    }

    /// A deterministic untrained package from a seed, for tests only (`trained: false`). Its head
    /// bias starts at the baseline's values, so it behaves like the baseline plus small noise.
    /// The weights as one f16 blob for a GPU backend: every tensor of the config's table in
    /// order, each starting at a multiple of 256 bytes; with each tensor's byte offset.
    pub fn device_blob(&self) -> (Vec<u8>, std::collections::HashMap<String, u64>) {
        let mut offsets = std::collections::HashMap::new();
        let mut blob: Vec<u8> = Vec::new();
        for spec in self.config.tensor_specs() {
            let t = self.tensor(&spec.name);
            offsets.insert(spec.name.clone(), blob.len() as u64);
            blob.extend(t.data.iter().flat_map(|v| half::f16::from_f32(*v).to_le_bytes()));
            blob.resize(blob.len().div_ceil(256) * 256, 0);
        }
        (blob, offsets)
    }

    pub fn untrained(config: NetworkConfig, seed: u64) -> ModelPackage {
        crate::init::untrained(config, seed)
    }
}
