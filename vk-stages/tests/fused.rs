//! The fused blocks (TESSEL_VK_FUSED=1: block_coop.comp on the cooperative-matrix path,
//! block_fused.comp on the scalar one) against the CPU reference on the golden cases, each frame
//! with its own history: head >= 60 dB, image >= 50 dB. In its own test binary, since the switch
//! is read from the environment when a model loads.


use tessel_model::metrics::{psnr_range, psnr_tm, tonemapped_rgb};
use vk_stages::runner::ReadBack;
use vk_stages::{DeviceShared, Model};

mod common;

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
    let mut fused_any = false;
    for (case, pkg, seq) in common::golden_cases() {
        let model = Model::new(&shared, &pkg).unwrap();
        eprintln!("{}: fused levels {:?}", case.display(), model.fused);
        fused_any |= model.fused.iter().any(|f| f.is_some());
        common::beside_cpu(&model, &pkg, &seq, ReadBack { tokens: false, head: true, history: false }, |i, e, c, g, _, _| {
            let h = psnr_range(&g.head, &c.head);
            let im = psnr_tm(&tonemapped_rgb(&g.output, e), &tonemapped_rgb(&c.output, e));
            eprintln!("  frame {i}: head {h:.1} dB, image {im:.1} dB");
            assert!(h >= 60.0 && im >= 50.0, "frame {i}: head {h:.1} dB, image {im:.1} dB");
        });
    }
    assert!(fused_any, "no level was fused: the test checked nothing");
}
