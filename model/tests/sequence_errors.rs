//! The frame-sequence reader: every size is checked, errors name the file and the field.

use std::path::{Path, PathBuf};

use tessel_model::frame::FrameData;
use tessel_model::sequence::{Sequence, SequenceWriter, Settings};

fn frame(rw: usize, rh: usize, ow: usize, oh: usize) -> FrameData {
    FrameData {
        render: (rw, rh),
        color: (0..rw * rh * 4).map(|i| (i % 7) as f32 * 0.1).collect(),
        motion: vec![0.25; rw * rh * 2],
        depth: vec![0.5; rw * rh],
        jitter: [0.125, -0.25],
        reset: false,
        reference: Some(vec![0.5; ow * oh * 4]),
    }
}

fn sequence(dir: &Path, bits: u32) -> PathBuf {
    let mut w = SequenceWriter::create(dir, (8, 6), bits, Settings::default()).unwrap();
    w.add_frame(&frame(4, 3, 8, 6)).unwrap();
    w.add_frame(&frame(4, 3, 8, 6)).unwrap();
    w.finish().unwrap()
}

fn err(p: &Path) -> String {
    Sequence::open(p).expect_err("must be refused").to_string()
}

fn edit(p: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(p, serde_json::to_vec(&v).unwrap()).unwrap();
}

#[test]
fn round_trip_f16_and_f32() {
    for bits in [16, 32] {
        let d = tempfile::tempdir().unwrap();
        let p = sequence(d.path(), bits);
        let s = Sequence::open(&p).unwrap();
        let f = s.load_frame(1).unwrap();
        let orig = frame(4, 3, 8, 6);
        // 0.1 steps are not exact in f16: compare within f16 precision.
        for (a, b) in f.color.iter().zip(&orig.color) {
            assert!((a - b).abs() <= 1e-3, "bits {bits}");
        }
        assert_eq!(f.depth, orig.depth);
        assert_eq!(f.motion, orig.motion);
        assert_eq!(f.jitter, orig.jitter);
        assert!(!f.reset);
        assert!(s.load_frame(0).unwrap().reset, "the first frame always resets");
    }
}

#[test]
fn truncated_frame_file() {
    let d = tempfile::tempdir().unwrap();
    let p = sequence(d.path(), 16);
    let c = d.path().join("c0001.bin");
    let b = std::fs::read(&c).unwrap();
    std::fs::write(&c, &b[..b.len() - 2]).unwrap();
    let e = err(&p);
    assert!(e.contains("c0001.bin") && e.contains("frames[1].color") && e.contains("truncated"), "{e}");
}

#[test]
fn frame_larger_than_declared() {
    let d = tempfile::tempdir().unwrap();
    let p = sequence(d.path(), 16);
    let c = d.path().join("d0000.bin");
    let mut b = std::fs::read(&c).unwrap();
    b.extend_from_slice(&[0; 16]);
    std::fs::write(&c, &b).unwrap();
    let e = err(&p);
    assert!(e.contains("d0000.bin") && e.contains("frames[0].depth") && e.contains("larger than the declared size"), "{e}");
}

#[test]
fn render_size_above_output() {
    let d = tempfile::tempdir().unwrap();
    let p = sequence(d.path(), 16);
    edit(&p, |v| v["frames"][1]["render"] = serde_json::json!([9, 3]));
    let e = err(&p);
    assert!(e.contains("frames.json") && e.contains("frames[1].render") && e.contains("above the output size"), "{e}");
}

#[test]
fn bad_fields() {
    let d = tempfile::tempdir().unwrap();
    let p = sequence(d.path(), 16);
    edit(&p, |v| v["frames"][0]["jitter"] = serde_json::json!([0.75, 0.0]));
    assert!(err(&p).contains("frames[0].jitter"));
    let p = sequence(d.path(), 16);
    edit(&p, |v| v["bits"] = 8.into());
    assert!(err(&p).contains("bits"));
    let p = sequence(d.path(), 16);
    edit(&p, |v| v["settings"]["exposure"] = "bright".into());
    assert!(err(&p).contains("exposure"));
    let p = sequence(d.path(), 16);
    edit(&p, |v| v["frames"][0]["reference"] = "missing.bin".into());
    assert!(err(&p).contains("missing.bin"));
    let p = sequence(d.path(), 16);
    std::fs::write(&p, b"{\"output\": [8, 6], \"frames\": [").unwrap();
    let e = err(&p);
    assert!(e.contains("frames.json") && e.contains("line 1"), "{e}");
}

#[test]
fn exposure_auto_and_number() {
    let d = tempfile::tempdir().unwrap();
    let p = sequence(d.path(), 16);
    edit(&p, |v| v["settings"]["exposure"] = "auto".into());
    assert_eq!(Sequence::open(&p).unwrap().settings().exposure.value(), None);
    edit(&p, |v| v["settings"]["exposure"] = 2.5.into());
    assert_eq!(Sequence::open(&p).unwrap().settings().exposure.value(), Some(2.5));
}
