//! The Vulkan engine against the CPU reference on the golden cases: tokens and head >= 60 dB,
//! final image >= 50 dB, frame by frame with each backend's own history. Skips loudly when no
//! Vulkan device is present.


use tessel_model::metrics::{psnr_range, psnr_tm, tonemapped_rgb};
use vk_stages::runner::ReadBack;
use vk_stages::{DeviceShared, Model};

mod common;

#[test]
fn vulkan_matches_cpu_on_golden_cases() {
    let shared = match DeviceShared::open() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipped: no Vulkan device: {e}");
            return;
        }
    };
    eprintln!("device: {}", shared.caps.summary());
    for (case, pkg, seq) in common::golden_cases() {
        let model = Model::new(&shared, &pkg).unwrap();
        common::beside_cpu(&model, &pkg, &seq, ReadBack { tokens: true, head: true, history: true }, |i, e, c, g, cpu, gpu| {
            let t = psnr_range(&g.tokens, &c.tokens);
            let h = psnr_range(&g.head, &c.head);
            let im = psnr_tm(&tonemapped_rgb(&g.output, e), &tonemapped_rgb(&c.output, e));
            let hi = psnr_range(&gpu.history_rgb(), &cpu.history.color.data);
            let near = psnr_range(&gpu.history_channels(&[3]), &cpu.history.near.data);
            let mem = psnr_range(&gpu.history_channels(&[4, 5]), &cpu.history.memory.data);
            let bad = g.output.iter().filter(|v| !v.is_finite()).count() + g.head.iter().filter(|v| !v.is_finite()).count();
            eprintln!(
                "{} frame {i}: tokens {t:.1} dB, head {h:.1} dB, image {im:.1} dB, history {hi:.1} dB (nearness {near:.1}, memory {mem:.1}), non-finite {bad}",
                case.file_name().unwrap().to_string_lossy()
            );
            if t < 60.0 {
                // Where the tokens differ: the worst token and slot.
                let tc = pkg.config.token_channels();
                let (k, d) = g.tokens.iter().zip(&c.tokens).map(|(a, b)| (a - b).abs()).enumerate().fold((0, 0.0f32), |m, (k, d)| if d > m.1 { (k, d) } else { m });
                eprintln!("  worst token value {k} (token {}, channel {}): gpu {} cpu {} (|d| {d})", k / tc, k % tc, g.tokens[k], c.tokens[k]);
            }
            assert!(t >= 60.0 && h >= 60.0, "tokens {t:.1} / head {h:.1} dB below 60");
            assert!(im >= 50.0, "image {im:.1} dB below 50");
        });
    }
}
