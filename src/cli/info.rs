//! `tessel info`: the model package, its network and its cost.

use std::path::Path;

use anyhow::Result;
use tessel_model::config::{TokenGrid, CATMULL_ROM_A, HEAD_CHANNELS, PIXEL_FEATURES};

use crate::cli::common::{find_model, model_candidates, shipped_packages};

/// One line per Vulkan device, or why there is none.
fn vulkan_lines() {
    match vk_stages::device::list_devices() {
        Err(e) => say!("vulkan: not available ({e})"),
        Ok(list) if list.is_empty() => say!("vulkan: not available (the loader lists no devices; lavapipe: mesa-vulkan-drivers)"),
        Ok(list) => {
            for (i, c) in list.iter().enumerate() {
                let usable = c.missing().map_or_else(|| "usable".to_string(), |m| format!("not usable: lacks {m}"));
                say!("vulkan device {i}: {} [{usable}]", c.summary());
            }
        }
    }
}

pub fn info(model: Option<&Path>) -> Result<()> {
    say!("tessel {}", env!("CARGO_PKG_VERSION"));
    say!("backends: cpu reference (f32, {} threads) | vulkan: see below | hip: see below", rayon::current_num_threads());
    say!("hip: {}", hip_net::runtime_status());
    let matrix: Vec<String> = tessel_kernels::CODE_OBJECTS.iter().filter_map(|c| tessel_kernels::matrix_path(c.target).map(|m| format!("{} ({})", c.target, m.describe()))).collect();
    let amd = |kind: tessel_kernels::Matrix| tessel_kernels::CODE_OBJECTS.iter().filter(|c| tessel_kernels::wmma_path(c.target) == Some(kind)).map(|c| c.target).collect::<Vec<_>>().join(", ");
    say!(
        "hip kernels: {} code objects ({}); fused matrix-core kernels in {}; matrix-core linear layers and attention (not yet run on AMD hardware: TESSEL_HIP_WMMA=1) as WMMA in {} and MFMA in {}; portable kernels only elsewhere",
        tessel_kernels::CODE_OBJECTS.len(),
        tessel_kernels::CODE_OBJECTS.iter().map(|c| c.target).collect::<Vec<_>>().join(", "),
        matrix.join(", "),
        amd(tessel_kernels::Matrix::Wmma),
        amd(tessel_kernels::Matrix::Mfma)
    );
    vulkan_lines();
    let shipped: Vec<String> = shipped_packages()
        .into_iter()
        .map(|n| match n.as_str() {
            tessel_model::SHIPPED_MODEL => format!("{n} (the default)"),
            tessel_model::FAST_MODEL => format!("{n} (the fast preset)"),
            _ => n,
        })
        .collect();
    if !shipped.is_empty() {
        say!("shipped packages (--model NAME): {}", shipped.join(", "));
    }
    let Some(pkg) = find_model(model)? else {
        say!("model: none found (looked in {})", model_candidates().iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
        return Ok(());
    };
    let c = &pkg.config;
    say!("model: {}{}", pkg.name, if pkg.trained { "" } else { "  [UNTRAINED: test weights]" });
    say!("  {}", pkg.description);
    say!(
        "  channels {:?}, encoder depths {:?}, bottleneck {}, decoder depths {:?}, mlp ratio {}, pixel embed {} -> token {} ch",
        c.channels, c.encoder_depths, c.bottleneck_depth, c.decoder_depths, c.mlp_ratio, c.pixel_embed, c.token_channels()
    );
    say!(
        "  {} features per pixel, {} head channels per pixel{}, {} parameters, {} tensors",
        PIXEL_FEATURES,
        HEAD_CHANNELS,
        if c.pixel_head { " (with the per-pixel head path)" } else { "" },
        c.parameter_count(),
        pkg.tensors.len()
    );
    say!(
        "  reconstruction: history by Keys' cubic a = {:.3}{}{}",
        c.history_a,
        if c.history_a == CATMULL_ROM_A { " (Catmull-Rom)" } else { "" },
        if c.accumulate { ", accumulating" } else { "" }
    );
    say!("  baseline (--network fixed, Catmull-Rom history): blend {:.3}, sigma {:.3}, clamp {:.3}", pkg.baseline.blend, pkg.baseline.sigma, pkg.baseline.clamp);
    say!("  {:<12} {:>12} {:>10} {:>10}", "output", "tokens", "GFLOP", "MB tokens");
    for (w, h) in [(1920, 1080), (2560, 1440), (3840, 2160)] {
        let g = TokenGrid::new(c, w, h);
        let f = c.flops(w, h).total() as f64 / 1e9;
        let mb = (g.padded_w * g.padded_h * c.token_channels() * 2) as f64 / 1e6;
        say!("  {:<12} {:>12} {:>10.2} {:>10.1}", format!("{w}x{h}"), format!("{}x{}", g.padded_w, g.padded_h), f, mb);
    }
    Ok(())
}
