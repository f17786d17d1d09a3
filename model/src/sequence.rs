//! The frame-sequence format (a public contract, docs/FORMATS.md): a JSON file naming raw frame
//! files relative to itself. The reader checks every size before any pixel is read.

use std::path::{Path, PathBuf};

use half::f16;
use serde::{Deserialize, Serialize};

use crate::error::{read_file, write_file_atomic, Error, Result};
use crate::frame::FrameData;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MotionUnits {
    #[default]
    Render,
    Output,
}

/// Exposure: a number, or "auto" (measured from the frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exposure {
    Fixed(f32),
    Auto,
}

impl Exposure {
    pub fn value(&self) -> Option<f32> {
        match self {
            Exposure::Fixed(v) => Some(*v),
            Exposure::Auto => None,
        }
    }
}

impl Default for Exposure {
    fn default() -> Self {
        Exposure::Fixed(1.0)
    }
}

impl Serialize for Exposure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Exposure::Fixed(v) => s.serialize_f32(*v),
            Exposure::Auto => s.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Exposure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => {
                let v = n.as_f64().unwrap_or(f64::NAN) as f32;
                if v.is_finite() && v > 0.0 {
                    Ok(Exposure::Fixed(v))
                } else {
                    Err(serde::de::Error::custom(format!("exposure must be a positive number or \"auto\", found {n}")))
                }
            }
            serde_json::Value::String(s) if s == "auto" => Ok(Exposure::Auto),
            other => Err(serde::de::Error::custom(format!("exposure must be a positive number or \"auto\", found {other}"))),
        }
    }
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    #[serde(default = "yes")]
    pub hdr: bool,
    #[serde(default = "yes")]
    pub depth_inverted: bool,
    #[serde(default)]
    pub motion_units: MotionUnits,
    #[serde(default)]
    pub exposure: Exposure,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { hdr: true, depth_inverted: true, motion_units: MotionUnits::Render, exposure: Exposure::Fixed(1.0) }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameEntry {
    pub color: String,
    pub motion: String,
    pub depth: String,
    pub render: [usize; 2],
    pub jitter: [f32; 2],
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

fn sixteen() -> u32 {
    16
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequenceJson {
    pub output: [usize; 2],
    #[serde(default = "sixteen")]
    pub bits: u32,
    #[serde(default)]
    pub settings: Settings,
    pub frames: Vec<FrameEntry>,
}

/// Bytes per float for a `bits` value.
fn float_bytes(bits: u32) -> usize {
    (bits / 8) as usize
}

/// Decodes little-endian f16 or f32 values.
pub fn decode_floats(bytes: &[u8], bits: u32) -> Vec<f32> {
    match bits {
        16 => bytes.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        _ => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
    }
}

/// Encodes values as little-endian f16 or f32.
pub fn encode_floats(v: &[f32], bits: u32) -> Vec<u8> {
    match bits {
        16 => v.iter().flat_map(|x| f16::from_f32(*x).to_le_bytes()).collect(),
        _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// An opened, validated sequence.
#[derive(Clone, Debug)]
pub struct Sequence {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub json: SequenceJson,
}

impl Sequence {
    pub fn output(&self) -> (usize, usize) {
        (self.json.output[0], self.json.output[1])
    }
    pub fn len(&self) -> usize {
        self.json.frames.len()
    }
    pub fn is_empty(&self) -> bool {
        self.json.frames.is_empty()
    }
    pub fn settings(&self) -> &Settings {
        &self.json.settings
    }

    /// Opens and validates the JSON and the size of every file it names.
    pub fn open(path: &Path) -> Result<Sequence> {
        let text = read_file(path)?;
        let json: SequenceJson = serde_json::from_slice(&text)
            .map_err(|e| Error::invalid(path, format!("line {} column {}", e.line(), e.column()), e.to_string()))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let seq = Sequence { path: path.to_path_buf(), dir, json };
        seq.validate()?;
        Ok(seq)
    }

    fn validate(&self) -> Result<()> {
        let p = &self.path;
        let [ow, oh] = self.json.output;
        if ow == 0 || oh == 0 || ow > 16384 || oh > 16384 {
            return Err(Error::invalid(p, "output", format!("{ow}x{oh} is not a valid output size (1..=16384)")));
        }
        if self.json.bits != 16 && self.json.bits != 32 {
            return Err(Error::invalid(p, "bits", format!("{} is not 16 or 32", self.json.bits)));
        }
        if self.json.frames.is_empty() {
            return Err(Error::invalid(p, "frames", "the sequence has no frames"));
        }
        for (i, f) in self.json.frames.iter().enumerate() {
            let [rw, rh] = f.render;
            if rw == 0 || rh == 0 {
                return Err(Error::invalid(p, format!("frames[{i}].render"), format!("{rw}x{rh} is empty")));
            }
            if rw > ow || rh > oh {
                return Err(Error::invalid(
                    p,
                    format!("frames[{i}].render"),
                    format!("render size {rw}x{rh} is above the output size {ow}x{oh}"),
                ));
            }
            if f.jitter.iter().any(|j| !j.is_finite() || j.abs() > 0.5) {
                return Err(Error::invalid(p, format!("frames[{i}].jitter"), format!("{:?}: each component must lie in [-0.5, 0.5]", f.jitter)));
            }
            for (field, name, expected) in self.expected_files(i) {
                let fp = self.dir.join(name);
                let meta = std::fs::metadata(&fp).map_err(|e| Error::io(&fp, e))?;
                check_size(&fp, &format!("frames[{i}].{field}"), meta.len() as usize, expected)?;
            }
        }
        Ok(())
    }

    /// (field, file name, expected bytes) of every file frame `i` names.
    fn expected_files(&self, i: usize) -> Vec<(&'static str, &str, (usize, String))> {
        let f = &self.json.frames[i];
        let b = float_bytes(self.json.bits);
        let bits = self.json.bits;
        let [rw, rh] = f.render;
        let [ow, oh] = self.json.output;
        let mut v = vec![
            ("color", f.color.as_str(), (rw * rh * 4 * b, format!("{rw}x{rh} RGBA f{bits}"))),
            ("motion", f.motion.as_str(), (rw * rh * 2 * b, format!("{rw}x{rh} RG f{bits}"))),
            ("depth", f.depth.as_str(), (rw * rh * 4, format!("{rw}x{rh} R f32"))),
        ];
        if let Some(r) = &f.reference {
            v.push(("reference", r.as_str(), (ow * oh * 4 * b, format!("{ow}x{oh} RGBA f{bits}"))));
        }
        v
    }

    /// Reads frame `i` (sizes are checked again: files may have changed since `open`).
    pub fn load_frame(&self, i: usize) -> Result<FrameData> {
        let f = &self.json.frames[i];
        let mut data: Vec<Vec<f32>> = Vec::new();
        for (field, name, expected) in self.expected_files(i) {
            let fp = self.dir.join(name);
            let bytes = read_file(&fp)?;
            check_size(&fp, &format!("frames[{i}].{field}"), bytes.len(), expected)?;
            data.push(if field == "depth" { decode_floats(&bytes, 32) } else { decode_floats(&bytes, self.json.bits) });
        }
        let reference = if data.len() == 4 { data.pop() } else { None };
        let depth = data.pop().expect("three files");
        let motion = data.pop().expect("three files");
        let color = data.pop().expect("three files");
        Ok(FrameData {
            render: (f.render[0], f.render[1]),
            color,
            motion,
            depth,
            jitter: f.jitter,
            reset: f.reset || i == 0,
            reference,
        })
    }
}

fn check_size(file: &Path, field: &str, found: usize, (expected, what): (usize, String)) -> Result<()> {
    if found < expected {
        return Err(Error::invalid(file, field, format!("truncated: {what} needs {expected} bytes, the file has {found}")));
    }
    if found > expected {
        return Err(Error::invalid(file, field, format!("frame larger than the declared size: {what} needs {expected} bytes, the file has {found}")));
    }
    Ok(())
}

/// Writes a sequence: frame files as they come, the JSON last (through a temporary file).
pub struct SequenceWriter {
    pub dir: PathBuf,
    pub json: SequenceJson,
}

impl SequenceWriter {
    pub fn create(dir: &Path, output: (usize, usize), bits: u32, settings: Settings) -> Result<SequenceWriter> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        Ok(SequenceWriter { dir: dir.to_path_buf(), json: SequenceJson { output: [output.0, output.1], bits, settings, frames: Vec::new() } })
    }

    pub fn add_frame(&mut self, f: &FrameData) -> Result<()> {
        let i = self.json.frames.len();
        let bits = self.json.bits;
        let names = [format!("c{i:04}.bin"), format!("m{i:04}.bin"), format!("d{i:04}.bin"), format!("gt{i:04}.bin")];
        write_file_atomic(&self.dir.join(&names[0]), &encode_floats(&f.color, bits))?;
        write_file_atomic(&self.dir.join(&names[1]), &encode_floats(&f.motion, bits))?;
        write_file_atomic(&self.dir.join(&names[2]), &encode_floats(&f.depth, 32))?;
        let reference = match &f.reference {
            Some(r) => {
                write_file_atomic(&self.dir.join(&names[3]), &encode_floats(r, bits))?;
                Some(names[3].clone())
            }
            None => None,
        };
        self.json.frames.push(FrameEntry {
            color: names[0].clone(),
            motion: names[1].clone(),
            depth: names[2].clone(),
            render: [f.render.0, f.render.1],
            jitter: f.jitter,
            reset: f.reset,
            reference,
        });
        Ok(())
    }

    /// Writes `frames.json` and returns its path.
    pub fn finish(self) -> Result<PathBuf> {
        let p = self.dir.join("frames.json");
        write_file_atomic(&p, &serde_json::to_vec_pretty(&self.json).expect("sequence JSON serialises"))?;
        Ok(p)
    }
}
