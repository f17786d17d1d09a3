//! The layout probe: where this device keeps a cooperative matrix's elements
//! (shaders/layout_coop.comp). VK_KHR_cooperative_matrix leaves the mapping from an invocation's
//! element index to a (row, column) to the implementation. The attention's register path
//! (attention_coop.comp with TS_SOFTMAX_REGS, `NetTiles::attention_regs`) reads its scores by
//! that mapping and hands an accumulator's elements to an A matrix one for one, so it runs only
//! where the probe finds the layout it was written for: mma.sync's fragments, which is how
//! NVIDIA's driver holds them. Anywhere else the shared-memory softmax runs, and the start-up
//! line says why.

use std::sync::Arc;

use ash::vk;
use half::f16;

use crate::device::DeviceShared;
use crate::error::Result;
use crate::memory::{Buffer, Location};
use crate::pipelines::{Pipelines, Variant, PUSH_BYTES};

/// The matrices the probe fills, in the order it stores them.
pub const KINDS: [&str; 3] = ["f32 accumulator", "f16 accumulator", "f16 A matrix"];

/// For each of [`KINDS`], for each (row, column) of a 16 x 16 matrix in row-major order: the
/// invocation and the element index that hold it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoopLayout {
    pub maps: [Vec<(u32, u32)>; 3],
}

/// Where NVIDIA's driver puts element `i` of invocation `l` in a 16 x 16 matrix (row, column):
/// mma.sync's fragments (m16n8k16), each invocation's two rows l / 4 and l / 4 + 8 and its
/// column pairs 2 (l % 4) and 2 (l % 4) + 8, ordered column half first, then row. Found by the
/// probe on an H100 with driver 580.159.04, alike for the three kinds.
pub fn fragment_position(l: u32, i: u32) -> (u32, u32) {
    (l / 4 + 8 * ((i >> 2) & 1), 2 * (l % 4) + (i & 1) + 8 * ((i >> 1) & 1))
}

impl CoopLayout {
    /// The layout of mma.sync's fragments for all three kinds (subgroups of 32, 8 elements an
    /// invocation).
    pub fn fragment() -> CoopLayout {
        let mut map = vec![(0, 0); 256];
        for l in 0..32 {
            for i in 0..8 {
                let (r, c) = fragment_position(l, i);
                map[(r * 16 + c) as usize] = (l, i);
            }
        }
        CoopLayout { maps: [map.clone(), map.clone(), map] }
    }

    /// The probe's values (element i of invocation l holds 64 l + i) read back as a layout.
    /// Err: a value that is not such a label.
    pub fn decode(values: [&[f32]; 3]) -> std::result::Result<CoopLayout, String> {
        let mut maps: [Vec<(u32, u32)>; 3] = Default::default();
        for (k, vals) in values.iter().enumerate() {
            for (pos, &v) in vals.iter().enumerate() {
                if !(v >= 0.0 && v < 2048.0 && v.fract() == 0.0) {
                    return Err(format!("{} holds {v} at row {}, column {}: not an element's label", KINDS[k], pos / 16, pos % 16));
                }
                let v = v as u32;
                maps[k].push((v / 64, v % 64));
            }
        }
        Ok(CoopLayout { maps })
    }

    /// Whether every kind follows mma.sync's fragments; Err names the first place that does not.
    pub fn check_fragment(&self) -> std::result::Result<(), String> {
        let want = CoopLayout::fragment();
        for k in 0..3 {
            if let Some(pos) = (0..256).find(|&p| self.maps[k][p] != want.maps[k][p]) {
                let (l, i) = self.maps[k][pos];
                let (wl, wi) = want.maps[k][pos];
                return Err(format!(
                    "the {}'s row {}, column {} is element {i} of invocation {l}, not element {wi} of invocation {wl} as the register path reads them",
                    KINDS[k],
                    pos / 16,
                    pos % 16
                ));
            }
        }
        Ok(())
    }

    /// The three maps as text, one row a line ("l.i" per element), for `TESSEL_VK_LAYOUT_DUMP=1`.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for (k, map) in self.maps.iter().enumerate() {
            s.push_str(&format!("{} (invocation.element by row and column):\n", KINDS[k]));
            for r in 0..16 {
                let row: Vec<String> = (0..16).map(|c| format!("{:>5}", format!("{}.{}", map[r * 16 + c].0, map[r * 16 + c].1))).collect();
                s.push_str(&row.join(""));
                s.push('\n');
            }
        }
        s
    }
}

/// Runs the probe on the device (one subgroup, at model load; it submits and waits).
pub fn probe(shared: &Arc<DeviceShared>, pipelines: &mut Pipelines) -> Result<std::result::Result<CoopLayout, String>> {
    let pipeline = pipelines.build(&Variant::new("layout_coop", &[]))?;
    let out = Buffer::new(shared, "layout probe", 2048, Location::HostRead, false)?;
    let d = &shared.device;
    let layout = pipelines.layout;
    let mut push = [0u8; PUSH_BYTES as usize];
    push[..8].copy_from_slice(&out.address.to_le_bytes());
    crate::model::submit_once(shared, |cmd| unsafe {
        d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_push_constants(cmd, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        d.cmd_dispatch(cmd, 1, 1, 1);
        let barrier = [vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::HOST_READ)];
        d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, vk::PipelineStageFlags::HOST, vk::DependencyFlags::empty(), &barrier, &[], &[]);
    })?;
    let bytes = out.bytes();
    let acc32: Vec<f32> = bytes[..1024].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let half = |from: usize| -> Vec<f32> { bytes[from..from + 512].chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect() };
    let (acc16, a16) = (half(1024), half(1536));
    let found = CoopLayout::decode([&acc32, &acc16, &a16]);
    if std::env::var("TESSEL_VK_LAYOUT_DUMP").is_ok_and(|v| v == "1") {
        match &found {
            Ok(l) => eprint!("tessel: cooperative-matrix layout probe:\n{}", l.dump()),
            Err(e) => eprintln!("tessel: cooperative-matrix layout probe: {e}"),
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(layout: &CoopLayout) -> [Vec<f32>; 3] {
        layout.maps.clone().map(|m| m.iter().map(|&(l, i)| (64 * l + i) as f32).collect())
    }

    #[test]
    fn the_fragment_layout_decodes_and_passes_and_a_swap_is_named() {
        let want = CoopLayout::fragment();
        let v = labels(&want);
        let got = CoopLayout::decode([&v[0], &v[1], &v[2]]).unwrap();
        assert_eq!(got, want);
        assert!(got.check_fragment().is_ok());
        // Every (invocation, element) appears once: a layout, not a guess.
        let mut seen = want.maps[0].clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 256);
        // Element 0's row r and row r + 8 swapped in the A matrix alone (a layout in which the
        // accumulator and A differ) is refused, naming the A matrix and the place.
        let mut a = want.maps[2].clone();
        a.swap(0, 8 * 16);
        let bad = CoopLayout { maps: [want.maps[0].clone(), want.maps[1].clone(), a] };
        let e = bad.check_fragment().unwrap_err();
        assert!(e.contains("f16 A matrix") && e.contains("row 0, column 0"), "{e}");
        // Values that are not labels are refused.
        let mut w = v[0].clone();
        w[5] = 0.5;
        let e = CoopLayout::decode([&w, &v[1], &v[2]]).unwrap_err();
        assert!(e.contains("row 0, column 5"), "{e}");
    }

    #[test]
    fn fragment_positions_cover_the_matrix() {
        let mut cover = [0u32; 256];
        for l in 0..32 {
            for i in 0..8 {
                let (r, c) = fragment_position(l, i);
                cover[(r * 16 + c) as usize] += 1;
            }
        }
        assert!(cover.iter().all(|&n| n == 1));
        // Invocation 5 (row 1, columns 2 and 3) holds elements 0 and 1 side by side; as the
        // probe printed on the H100: row 0, column 8 is element 2 of invocation 0, row 8, column 0
        // element 4.
        assert_eq!(fragment_position(5, 0), (1, 2));
        assert_eq!(fragment_position(5, 1), (1, 3));
        assert_eq!(fragment_position(5, 2), (1, 10));
        assert_eq!(fragment_position(5, 4), (9, 2));
        assert_eq!(fragment_position(0, 2), (0, 8));
        assert_eq!(fragment_position(0, 4), (8, 0));
    }
}
