//! Static checks of every embedded code object (no GPU needed): completeness, wavefront size,
//! shared memory within the target's limit, no scratch or spills, and docs/KERNELS.md current.

use tessel_kernels::{block_kernel, linear_kernel, wmma_linear_fits, wmma_path, WMMA_KERNELS, BlockEnds, code_object, expected_wavefront, kernels_for, lds_limit, markdown_table, matrix_path, ptx_for, ptx_wgmma_for, wgmma_fits, Matrix, Platform, BLOCK_MMA, CODE_OBJECTS, KERNELS};

const AMD: &[&str] = &["gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201", "gfx90a", "gfx942"];

#[test]
fn every_target_is_built_and_holds_every_kernel() {
    for t in AMD.iter().chain(["sm_80", "sm_90", "sm_90a"].iter()) {
        let c = code_object(t).unwrap_or_else(|| panic!("no code object for {t}"));
        assert!(c.bytes.len() > 1000, "{t}: {} bytes", c.bytes.len());
        for k in kernels_for(t) {
            assert!(c.kernels.iter().any(|i| i.name == k), "{t} lacks {k}");
        }
        // A target without matrix kernels holds none (hip-net would not look for them); one
        // without WMMA does not hold the WMMA linear kernel.
        if matrix_path(t).is_none() {
            assert!(c.kernels.iter().all(|i| KERNELS.contains(&i.name) || WMMA_KERNELS.contains(&i.name)), "{t}: unexpected kernels");
        }
        for k in WMMA_KERNELS {
            assert_eq!(c.kernels.iter().any(|i| i.name == *k), wmma_path(t).is_some(), "{t}: {k}");
        }
        match c.platform {
            Platform::Amd => assert_eq!(&c.bytes[..4], b"\x7fELF", "{t}: not an ELF code object"),
            Platform::Nvidia => {
                assert_eq!(*c.bytes.last().unwrap(), 0, "{t}: PTX must be NUL-terminated for cuModuleLoadData");
                let text = std::str::from_utf8(&c.bytes[..c.bytes.len() - 1]).unwrap();
                assert!(text.contains(&format!(".target {t}")), "{t}: PTX for another target");
            }
        }
    }
}

#[test]
fn wavefront_lds_and_spills_are_within_limits() {
    for c in CODE_OBJECTS {
        for k in c.kernels {
            assert_eq!(k.wavefront, expected_wavefront(c.target), "{} {}", c.target, k.name);
            assert!(k.lds <= lds_limit(c.target), "{} {}: {} bytes of LDS", c.target, k.name, k.lds);
            assert!(k.max_threads >= 64, "{} {}: built for {} threads", c.target, k.name, k.max_threads);
            if c.platform == Platform::Amd {
                assert_eq!((k.private, k.vgpr_spill, k.sgpr_spill), (0, 0, 0), "{} {}: scratch or spills", c.target, k.name);
                assert!(k.vgpr > 0 && k.vgpr <= 512, "{} {}: {} VGPRs", c.target, k.name, k.vgpr);
            }
        }
    }
    // Attention keeps a window's keys, values and bias in shared memory: 2 x 64 x 16 floats + 225.
    let att = code_object("gfx1100").unwrap().kernels.iter().find(|k| k.name == "tessel_attention").unwrap();
    assert_eq!(att.lds, 2 * 64 * 16 * 4 + 225 * 4);
}

#[test]
fn ptx_is_chosen_by_compute_capability() {
    assert_eq!(ptx_for(9, 0).unwrap().target, "sm_90");
    assert_eq!(ptx_for(8, 9).unwrap().target, "sm_80");
    assert!(ptx_for(7, 5).is_none(), "no PTX below sm_80");
    // sm_90a only on compute capability 9.0: its wgmma does not run on later architectures.
    assert_eq!(ptx_wgmma_for(9, 0).unwrap().target, "sm_90a");
    assert!(ptx_wgmma_for(10, 0).is_none() && ptx_wgmma_for(8, 9).is_none() && ptx_wgmma_for(12, 0).is_none());
    assert_eq!(matrix_path("sm_90a"), Some(Matrix::Wgmma));
    // The sm_90a blocks hold (up to 48 channels) or stream (wider) their weights for an MLP of 2C.
    assert!(wgmma_fits(32, 64) && wgmma_fits(48, 96) && wgmma_fits(96, 192));
    assert!(!wgmma_fits(32, 128) && !wgmma_fits(48, 48) && !wgmma_fits(96, 384));
    // An expansion's block sets aside 4 C floats for the level below's bias: no narrower level above.
    assert!(tessel_kernels::wgmma_widths_fit(&[32, 48, 96]) && tessel_kernels::wgmma_widths_fit(&[16, 48, 96, 128]) && tessel_kernels::wgmma_widths_fit(&[48, 48]));
    assert!(!tessel_kernels::wgmma_widths_fit(&[96, 48]) && !tessel_kernels::wgmma_widths_fit(&[32, 64, 48]));
}

#[test]
fn docs_kernels_md_holds_the_current_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/KERNELS.md")).unwrap();
    assert!(
        doc.contains(&markdown_table()),
        "docs/KERNELS.md is stale: regenerate its table with `cargo run -p tessel-kernels --example kernels_md`"
    );
}

#[test]
fn matrix_kernels_are_chosen_by_target_and_width() {
    assert_eq!(matrix_path("sm_90"), Some(Matrix::MmaSync));
    assert_eq!(matrix_path("sm_80"), Some(Matrix::MmaSync));
    for t in AMD.iter().chain(["sm_75"].iter()) {
        assert_eq!(matrix_path(t), None, "{t}");
    }
    assert_eq!(block_kernel(96, 192, BlockEnds::INNER), Some("tessel_block_mma_c96"));
    assert_eq!(block_kernel(32, 64, BlockEnds::EMBED), Some("tessel_block_embed_mma_c32"));
    assert_eq!(block_kernel(32, 64, BlockEnds::HEAD), Some("tessel_block_head_mma_c32"));
    assert_eq!(block_kernel(96, 192, BlockEnds::HEAD), None, "no head variant above 64 channels");
    assert_eq!(block_kernel(48, 96, BlockEnds::MERGE), Some("tessel_block_merge_mma_c48"));
    assert_eq!(block_kernel(96, 192, BlockEnds::EXPAND), Some("tessel_block_expand_mma_c96"));
    assert_eq!(block_kernel(128, 256, BlockEnds::MERGE_EXPAND), Some("tessel_block_merge_expand_mma_c128"));
    let embed_expand = tessel_kernels::BlockEnds { input: tessel_kernels::BlockIn::Embed, output: tessel_kernels::BlockOut::Expand };
    assert_eq!(block_kernel(32, 64, embed_expand), None, "the network's ends and the levels' links do not mix");
    assert_eq!(block_kernel(40, 80, BlockEnds::INNER), None, "not a multiple of 16");
    assert_eq!(block_kernel(144, 288, BlockEnds::INNER), None, "more than 8 heads");
    assert_eq!(block_kernel(32, 40, BlockEnds::INNER), None, "hidden not a multiple of 16");
    // WMMA on RDNA3 and RDNA4, MFMA on CDNA2 and CDNA3, emulated in NVIDIA PTX; none on RDNA2.
    for t in ["gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201"] {
        assert_eq!(wmma_path(t), Some(Matrix::Wmma), "{t}");
    }
    for t in ["gfx90a", "gfx942"] {
        assert_eq!(wmma_path(t), Some(Matrix::Mfma), "{t}");
    }
    assert_eq!(wmma_path("gfx1030"), None, "RDNA2 has no matrix cores");
    assert_eq!(wmma_path("sm_90a"), Some(Matrix::WmmaEmulated));
    assert!(wmma_linear_fits(128, 32) && wmma_linear_fits(192, 96) && wmma_linear_fits(256, 128));
    assert!(!wmma_linear_fits(384, 96) && !wmma_linear_fits(40, 96) && !wmma_linear_fits(32, 24), "inputs over 256, or not multiples of 16");
    assert_eq!(linear_kernel(128, 32), Some("tessel_linear_mma_k128"));
    assert_eq!(linear_kernel(192, 96), Some("tessel_linear_mma_k256"));
    assert_eq!(linear_kernel(384, 96), Some("tessel_linear_mma_k512"));
    assert_eq!(linear_kernel(520, 96), None, "wider than 512");
    assert_eq!(linear_kernel(40, 96), None, "inputs not a multiple of 16");
    assert_eq!(linear_kernel(32, 20), None, "outputs not a multiple of 8");
    // The fused block keeps one head's keys and values and the bias of its C / 16 heads in
    // shared memory: 64 x 12 words + 16 x 72 halves + C / 16 x 225 floats; the embed and head
    // variants stage their 4 warps' 16 token rows, one column half (32 words + 4 of padding) at
    // a time (the sm_90a embedding both where they fit), in the same bytes (a union: the stage is used before and after the attention); the
    // merge and expand variants read and write the level below in place.
    // The sm_90a blocks up to 48 channels also hold their four weight matrices (16 C^2 bytes),
    // the wider ones two phases of their stream (2 x 128 C bytes), and their vectors.
    for target in ["sm_90", "sm_90a"] {
        let object = code_object(target).unwrap();
        for (c, ends, k) in BLOCK_MMA {
            let info = object.kernels.iter().find(|i| i.name == *k).unwrap();
            // The bias tables in whole 16-byte pieces (they arrive by cp.async).
            let attention = 64 * 12 * 4 + 16 * 72 * 2 + (*c as u32 / 16 * 225).div_ceil(4) * 16;
            let stage = if ends.stages_rows() { 4 * 16 * 36 * 4 } else { 0 };
            let weights = match (target, *c as u32) {
                ("sm_90a", c) if c <= 48 => 16 * c * c,
                ("sm_90a", c) => 2 * 128 * c,  // the stream's two phases
                _ => 0,
            };
            // On sm_90a the embedding stages both column halves at once where that fits 48 KiB.
            let both = target == "sm_90a" && ends.input == tessel_kernels::BlockIn::Embed && attention.max(2 * stage) + weights <= 48 * 1024;
            let stage = if both { 2 * stage } else { stage };
            // On sm_90a each block also stages its f32 vectors (11 C floats; the head's 2 C + 128
            // more, the expansion's 4 C), where the workgroup's bytes stay within 48 KiB.
            let c = *c as u32;
            let vectors = 4 * (11 * c + if ends.output == tessel_kernels::BlockOut::Head { 2 * c + 128 } else { 0 } + if ends.output == tessel_kernels::BlockOut::Expand { 4 * c } else { 0 });
            let fixed = attention.max(stage) + weights;
            let vectors = if target == "sm_90a" && fixed + vectors <= 48 * 1024 { vectors } else { 0 };
            // And the two mbarriers its bulk copies of the weights complete (TS_BULK), where they
            // fit with their alignment's worst 112 bytes.
            let bulk = target == "sm_90a" && weights > 0 && fixed + vectors + 128 <= 48 * 1024 && !tessel_kernels::built_off("TS_BULK");
            let bars = if bulk { 16 } else { 0 };
            assert_eq!(info.lds, fixed + vectors + bars, "{target} {k}");
            assert!(info.lds <= 48 * 1024, "{target} {k}");
            assert_eq!(info.max_threads, 128, "{target} {k}");
        }
    }
}

/// The ptxas of the CUDA toolkit (PyPI's nvidia-cuda-nvcc-cu12, which scripts/setup.sh installs
/// into .tools/ptxas), `TESSEL_PTXAS`, or one on PATH.
fn ptxas() -> Option<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        std::env::var_os("TESSEL_PTXAS").map(std::path::PathBuf::from),
        Some(root.join(".tools/ptxas/nvidia/cuda_nvcc/bin/ptxas")),
        Some(std::path::PathBuf::from("ptxas")),
    ];
    candidates.into_iter().flatten().find(|p| std::process::Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// What `ptxas -v` reports per kernel: (name, registers, stack frame bytes, spill store bytes).
fn ptxas_report(text: &str) -> Vec<(String, u32, u32, u32)> {
    let mut out: Vec<(String, u32, u32, u32)> = Vec::new();
    let num = |l: &str, before: &str| -> Option<u32> { l.split(before).next()?.split_whitespace().last()?.parse().ok() };
    for l in text.lines() {
        if let Some(rest) = l.split("Compiling entry function '").nth(1) {
            out.push((rest.split('\'').next().unwrap_or("").to_string(), 0, 0, 0));
        } else if let Some(k) = out.last_mut() {
            if l.contains("bytes stack frame") {
                k.2 = num(l, " bytes stack frame").unwrap_or(u32::MAX);
                k.3 = num(l, " bytes spill stores").unwrap_or(u32::MAX);
            } else if l.contains("Used ") {
                k.1 = l.split("Used ").nth(1).and_then(|r| r.split_whitespace().next()).and_then(|v| v.parse().ok()).unwrap_or(u32::MAX);
            }
        }
    }
    out
}

/// The PTX assembled offline for its own target, as the CUDA driver's JIT does at load: every
/// matrix kernel with at most 16 bytes of stack and of spill stores, or its
/// `nvidia_spill_allowance` (hip-net/tests/network_gpu.rs asserts the same of the driver's JIT on
/// the device). The registers go to the log. The JIT of a given driver may choose a little
/// differently; this catches a kernel that does not fit before a device run does.
#[test]
fn nvidia_matrix_kernels_assemble_without_spills() {
    let Some(ptxas) = ptxas() else {
        println!("skipped: no ptxas (scripts/setup.sh installs it into .tools/ptxas; or set TESSEL_PTXAS)");
        return;
    };
    for target in ["sm_80", "sm_90", "sm_90a"] {
        let c = code_object(target).unwrap();
        let dir = std::env::temp_dir().join(format!("tessel-ptxas-{}-{target}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ptx = dir.join("kernels.ptx");
        std::fs::write(&ptx, &c.bytes[..c.bytes.len() - 1]).unwrap();
        let out = std::process::Command::new(&ptxas).args(["-v", "-O3", &format!("-arch={target}")]).arg(&ptx).arg("-o").arg(dir.join("kernels.cubin")).output().unwrap();
        let log = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        std::fs::remove_dir_all(&dir).ok();
        assert!(out.status.success(), "ptxas failed on the {target} PTX:\n{log}");
        let report = ptxas_report(&log);
        assert!(report.len() >= c.kernels.len(), "{target}: ptxas reported {} kernels of {}", report.len(), c.kernels.len());
        for (name, regs, stack, spills) in &report {
            if !name.contains("_mma_") {
                continue;
            }
            println!("{target} {name}: {regs} registers, {stack} bytes of stack, {spills} bytes of spill stores");
            assert!(*regs > 0 && *regs <= 255, "{target} {name}: {regs} registers");
            let allowed = tessel_kernels::nvidia_spill_allowance(target, name);
            assert!(*stack <= allowed && *spills <= allowed, "{target} {name}: {stack} bytes of stack, {spills} of spill stores (allowed {allowed})");
        }
    }
}

#[test]
fn ptxas_reports_are_read() {
    let log = "ptxas info    : Compiling entry function 'tessel_block_mma_c48' for 'sm_90'\nptxas info    : Function properties for tessel_block_mma_c48\n    8 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\nptxas info    : Used 104 registers, used 1 barriers, 10752 bytes smem\n";
    assert_eq!(ptxas_report(log), vec![("tessel_block_mma_c48".to_string(), 104, 8, 4)]);
}

/// The start-up line's words for the staged vectors and the wide merges' and plain blocks'
/// occupancy follow the build's flags, and only the sm_90a object (warpgroup products) has them.
#[test]
fn staged_vectors_are_named_for_the_wgmma_object_only() {
    use tessel_kernels::{wgmma_build_words, Matrix, BUILT_CFLAGS};
    assert_eq!(wgmma_build_words(Matrix::MmaSync), None);
    let off = BUILT_CFLAGS.split_whitespace().any(|f| f == "-DTS_VEC_SHARED=0");
    let one = BUILT_CFLAGS.split_whitespace().any(|f| f == "-DTS_MERGE_OCC=1");
    let occ = BUILT_CFLAGS.split_whitespace().filter_map(|f| f.strip_prefix("-DTS_MERGE_OCC=")).last();
    let vectors = if off { "vectors read in place (built with -DTS_VEC_SHARED=0)" } else { "vectors staged in shared memory" };
    let merge = tessel_kernels::merge_words(occ);
    let plain = tessel_kernels::plain_words(BUILT_CFLAGS.split_whitespace().filter_map(|f| f.strip_prefix("-DTS_PLAIN_OCC=")).last());
    let switched: Vec<String> = tessel_kernels::BUILD_SWITCHES.iter().map(|d| format!("-D{d}=0")).filter(|f| BUILT_CFLAGS.split_whitespace().any(|b| b == f)).collect();
    let rest = if switched.is_empty() { String::new() } else { format!(", built with {}", switched.join(" ")) };
    assert_eq!(wgmma_build_words(Matrix::Wgmma), Some(format!("{vectors}, {merge}, {plain}{rest}")));
    assert_eq!(tessel_kernels::built_with("TS_MERGE_OCC", "1"), one);
    assert_eq!(tessel_kernels::built_value("TS_MERGE_OCC"), occ);
    assert!(!tessel_kernels::built_with("TS_MERGE", "OCC=1"));
    // The merges' words name the occupancy built, whatever its value.
    assert_eq!(tessel_kernels::merge_words(None), "wide merges four workgroups an SM");
    assert_eq!(tessel_kernels::merge_words(Some("4")), "wide merges four workgroups an SM");
    assert_eq!(tessel_kernels::merge_words(Some("1")), "wide merges one workgroup an SM (built with -DTS_MERGE_OCC=1)");
    assert_eq!(tessel_kernels::merge_words(Some("2")), "wide merges two workgroups an SM (built with -DTS_MERGE_OCC=2)");
    assert_eq!(tessel_kernels::merge_words(Some("6")), "wide merges 6 workgroups an SM (built with -DTS_MERGE_OCC=6)");
    assert_eq!(tessel_kernels::plain_words(None), "wide plain blocks four workgroups an SM");
    assert_eq!(tessel_kernels::plain_words(Some("1")), "wide plain blocks one workgroup an SM (built with -DTS_PLAIN_OCC=1)");
    // One kernel may keep more than 16 bytes in local memory: the plain 96-channel block on
    // sm_90a at four workgroups an SM, and only while it is built so.
    let four = !BUILT_CFLAGS.split_whitespace().any(|f| f == "-DTS_PLAIN_OCC=1");
    assert_eq!(tessel_kernels::nvidia_spill_allowance("sm_90a", "tessel_block_mma_c96"), if four { 64 } else { 16 });
    for (target, kernel) in [("sm_90", "tessel_block_mma_c96"), ("sm_90a", "tessel_block_merge_mma_c96"), ("sm_90a", "tessel_block_mma_c80")] {
        assert_eq!(tessel_kernels::nvidia_spill_allowance(target, kernel), 16, "{target} {kernel}");
    }
    // A define's name is matched whole: -DTS_VEC_SHARED=0 turns off neither TS_VEC nor TS_VEC_SHARED2.
    assert_eq!(tessel_kernels::built_off("TS_VEC_SHARED"), off);
    assert!(!tessel_kernels::built_off("TS_VEC") && !tessel_kernels::built_off("TS_VEC_SHARED2"));
}
