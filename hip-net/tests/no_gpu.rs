//! Tests of the platform layer that run on any machine: device matching, refusals and error
//! texts. Where a runtime is installed, the "missing" tests assert the opposite outcome instead.

use hip_net::{
    cuda, hip_sys, match_uuid, require_kernels, runtime_status, uuid_hex, Backend, DeviceInfo,
    HipError, Prefer, Runtime,
};

fn dev(ordinal: usize, name: &str, seed: u8, arch: &str) -> DeviceInfo {
    let mut uuid = [0u8; 16];
    for (i, b) in uuid.iter_mut().enumerate() {
        *b = seed.wrapping_mul(17).wrapping_add(i as u8 * 3);
    }
    DeviceInfo {
        ordinal,
        name: name.to_string(),
        uuid,
        arch: arch.to_string(),
    }
}

#[test]
fn match_uuid_picks_the_device_with_the_vulkan_uuid() {
    let devices = vec![
        dev(0, "AMD Radeon RX 7900 XTX", 1, "gfx1100"),
        dev(1, "AMD Instinct MI300X", 2, "gfx942"),
        dev(2, "AMD Radeon RX 6800", 3, "gfx1030"),
    ];
    assert_eq!(match_uuid(&devices, devices[1].uuid).unwrap(), 1);
    assert_eq!(match_uuid(&devices, devices[2].uuid).unwrap(), 2);
    assert_eq!(match_uuid(&devices, devices[0].uuid).unwrap(), 0);
    // The ordinal is the runtime's, not the position in the list.
    let listed = vec![dev(5, "b", 9, "sm_90"), dev(3, "a", 8, "sm_89")];
    assert_eq!(match_uuid(&listed, listed[1].uuid).unwrap(), 3);
}

#[test]
fn no_matching_device_lists_names_and_hex_uuids() {
    let devices = vec![
        dev(0, "NVIDIA H200", 1, "sm_90"),
        dev(1, "NVIDIA L4", 2, "sm_89"),
    ];
    let want = [0xab; 16];
    let err = match_uuid(&devices, want).unwrap_err();
    let HipError::NoMatchingDevice { want: w, found } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(w, "abababab-abab-abab-abab-abababababab");
    assert_eq!(found.len(), 2);
    assert_eq!(
        found[0],
        ("NVIDIA H200".to_string(), uuid_hex(&devices[0].uuid))
    );
    assert_eq!(found[1].0, "NVIDIA L4");
    let text = err.to_string();
    assert!(
        text.contains("abababab-abab-abab-abab-abababababab"),
        "{text}"
    );
    assert!(
        text.contains(&format!("NVIDIA H200 ({})", uuid_hex(&devices[0].uuid))),
        "{text}"
    );
    assert!(
        text.contains(&format!("NVIDIA L4 ({})", uuid_hex(&devices[1].uuid))),
        "{text}"
    );
    // With no device at all.
    let none = match_uuid(&[], want).unwrap_err().to_string();
    assert!(none.ends_with("found: no devices"), "{none}");
}

#[test]
fn uuid_hex_is_the_dashed_lowercase_form() {
    let mut u = [0u8; 16];
    for (i, b) in u.iter_mut().enumerate() {
        *b = (i as u8) * 0x11;
    }
    assert_eq!(uuid_hex(&u), "00112233-4455-6677-8899-aabbccddeeff");
}

#[test]
fn auto_without_a_runtime_names_every_candidate() {
    let hip = hip_sys::is_present();
    let cu = cuda::is_present();
    match Runtime::open(Prefer::Auto) {
        Err(HipError::RuntimeMissing { tried, why }) => {
            assert!(!hip && !cu, "a runtime is present but open failed: {why}");
            for c in hip_sys::CANDIDATES {
                assert!(tried.iter().any(|t| t == c), "{c} not in {tried:?}");
                assert!(why.contains(c), "{c} not in {why}");
            }
            assert!(tried.iter().any(|t| t == "libcuda.so.1"), "{tried:?}");
            assert!(why.contains("libcuda.so.1"), "{why}");
            assert!(
                why.starts_with("HIP runtime not present: tried libamdhip64.so.7"),
                "{why}"
            );
            assert!(
                why.contains("; CUDA driver not present: tried libcuda.so"),
                "{why}"
            );
            let text = HipError::RuntimeMissing {
                tried,
                why: why.clone(),
            }
            .to_string();
            assert_eq!(text, why);
            println!("{text}");
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(rt) => {
            assert!(
                hip || cu,
                "opened {rt:?} although neither runtime is present"
            );
            let want = if hip { Backend::Hip } else { Backend::Cuda };
            assert!(
                rt.backend() == want || rt.device_count().unwrap() > 0,
                "{rt:?}"
            );
            println!("runtime present: {}", rt.describe());
        }
    }
}

#[test]
fn prefer_hip_without_hip_names_libamdhip64_so_7() {
    match Runtime::open(Prefer::Hip) {
        Err(HipError::RuntimeMissing { tried, why }) => {
            println!("{why}");
            assert_eq!(tried, hip_sys::CANDIDATES.to_vec());
            assert!(!why.contains("CUDA"), "only HIP was asked for: {why}");
            if hip_sys::is_present() {
                // The library loads but hipInit refuses (a machine without an AMD GPU).
                assert!(why.starts_with("HIP runtime libamdhip64.so"), "{why}");
                assert!(why.contains(" unusable: hipInit failed: "), "{why}");
            } else {
                let w = "HIP runtime not present: tried libamdhip64.so.7, ";
                assert!(why.starts_with(w), "{why}");
                assert!(why.contains("libamdhip64.so.5"), "{why}");
            }
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(rt) => {
            assert!(hip_sys::is_present());
            assert_eq!(rt.backend(), Backend::Hip);
            assert!(rt.library().starts_with("libamdhip64"), "{}", rt.library());
        }
    }
}

#[test]
fn prefer_cuda_without_the_driver_names_libcuda() {
    match Runtime::open(Prefer::Cuda) {
        Err(HipError::RuntimeMissing { tried, why }) => {
            assert!(!cuda::is_present());
            assert!(tried.iter().any(|t| t == "libcuda.so.1"), "{tried:?}");
            assert!(
                why.starts_with("CUDA driver not present: tried libcuda.so, "),
                "{why}"
            );
            assert!(
                !why.contains("libamdhip64"),
                "only CUDA was asked for: {why}"
            );
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(rt) => assert_eq!(rt.backend(), Backend::Cuda),
    }
}

#[test]
fn runtime_status_is_one_line_saying_what_loaded_or_why_not() {
    let line = runtime_status();
    assert!(!line.contains('\n'), "{line}");
    if hip_sys::is_present() || cuda::is_present() {
        assert!(
            line.starts_with("HIP runtime ") || line.starts_with("CUDA driver "),
            "{line}"
        );
    } else {
        assert!(
            line.starts_with("HIP runtime not present: tried libamdhip64.so.7"),
            "{line}"
        );
        assert!(line.contains("CUDA driver not present"), "{line}");
    }
    println!("{line}");
}

#[test]
fn error_texts_name_the_call_and_the_code() {
    let e = HipError::Call {
        call: "cuLaunchKernel",
        code: 701,
        name: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES".into(),
    };
    assert_eq!(
        e.to_string(),
        "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (code 701)"
    );
    let e = HipError::Call {
        call: "hipModuleLoadData",
        code: 200,
        name: "hipErrorInvalidImage".into(),
    };
    assert_eq!(
        e.to_string(),
        "hipModuleLoadData failed: hipErrorInvalidImage (code 200)"
    );
    let e = HipError::NoCodeObject {
        arch: "gfx1201".into(),
    };
    assert_eq!(e.to_string(), "no code object for the architecture gfx1201");
    let e = HipError::SymbolMissing {
        symbol: "hipStreamWaitValue64".into(),
        library: "libamdhip64.so.5".into(),
    };
    assert!(e
        .to_string()
        .starts_with("libamdhip64.so.5 lacks the symbol hipStreamWaitValue64"));
    let e = HipError::Size {
        what: "upload",
        got: 10,
        capacity: 8,
    };
    assert_eq!(e.to_string(), "upload: 10 bytes do not fit 8 bytes");
}

#[test]
fn require_kernels_names_the_missing_kernel() {
    let have = ["linear_f16", "attention_w8", "reconstruct"];
    assert_eq!(
        require_kernels(&have, &["linear_f16", "reconstruct"]),
        Ok(())
    );
    let err = require_kernels(&have, &["linear_f16", "block_fused", "head"]).unwrap_err();
    let HipError::KernelMissing { kernel, module } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(kernel, "block_fused, head");
    assert!(
        module.contains("linear_f16, attention_w8, reconstruct"),
        "{module}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with("kernel block_fused, head missing from the module"),
        "{text}"
    );
}

/// A launch's waves: workgroups over what the device holds at once (level 2 of tessel-v12 at
/// 3840x2160: 510 windows, three workgroups an SM of the H100's 132).
#[test]
fn waves_count_workgroups_over_the_device_room() {
    use hip_net::network::Waves;
    let w = |workgroups, per_sm, sms| Waves { workgroups, per_sm, sms }.waves();
    assert!((w(510, 3, 132) - 510.0 / 396.0).abs() < 1e-12);
    assert!(w(510, 4, 132) < 1.0, "four an SM: one wave");
    assert_eq!(w(264, 2, 132), 1.0);
    assert_eq!(w(10, 0, 132), 10.0, "a kernel that fits nowhere: no division by zero");
}
