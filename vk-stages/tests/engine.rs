//! The engine's behaviour beyond agreement: the split frame, exported buffers, automatic
//! exposure, poisoned inputs, refusals. Each test skips loudly when no Vulkan device exists.

use std::path::Path;
use std::sync::Arc;

use ash::vk;
use tessel_model::config::NetworkConfig;
use tessel_model::frame::FrameData;
use tessel_model::network::Network;
use tessel_model::package::ModelPackage;
use tessel_model::pipeline::{HeadSource, Upscaler};
use tessel_model::sequence::{Exposure, Settings};
use vk_stages::memory::Buffer;
use vk_stages::runner::ReadBack;
use vk_stages::engine::Controls;
use vk_stages::{DeviceShared, Engine, Model, PixelPaths, Runner, VkError};

fn device() -> Option<Arc<DeviceShared>> {
    match DeviceShared::open() {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipped: no Vulkan device: {e}");
            None
        }
    }
}

/// The small seeded network of the golden cases (two levels, per-pixel head path): fast on
/// lavapipe.
fn small_package() -> ModelPackage {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/golden/3x_48x30_pixel_head/model");
    ModelPackage::read(&p).unwrap()
}

/// A textured frame that moves by one render pixel a frame.
fn frame(rw: usize, rh: usize, t: usize) -> FrameData {
    let mut color = vec![0.0f32; rw * rh * 4];
    for y in 0..rh {
        for x in 0..rw {
            let fx = x as f32 + t as f32;
            let i = (y * rw + x) * 4;
            color[i] = 0.4 + 0.3 * (fx * 0.7).sin() * (y as f32 * 0.5).cos();
            color[i + 1] = 0.3 + 0.2 * ((fx + y as f32) * 0.3).sin();
            color[i + 2] = 2.0 * ((fx * 0.9).cos().max(0.0)).powi(8);
            color[i + 3] = 1.0;
        }
    }
    let motion = [-1.0f32, 0.0].repeat(rw * rh);
    let depth = (0..rw * rh).map(|i| 0.3 + 0.4 * ((i % rw) as f32 / rw as f32)).collect();
    let jitter = [((t * 3) % 4) as f32 / 4.0 - 0.375, ((t * 5) % 4) as f32 / 4.0 - 0.375];
    FrameData { render: (rw, rh), color, motion, depth, jitter, reset: t == 0, reference: None }
}

fn psnr(a: &[f32], b: &[f32]) -> f64 {
    tessel_model::metrics::psnr_tm(&tessel_model::metrics::tonemapped_rgb(a, 1.0), &tessel_model::metrics::tonemapped_rgb(b, 1.0))
}

#[test]
fn split_frame_through_the_timeline_semaphore_equals_one_command_buffer() {
    let Some(shared) = device() else { return };
    let model = Model::new(&shared, &small_package()).unwrap();
    let mut one = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
    let mut split = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
    split.split = true;
    for t in 0..6 {
        let f = frame(24, 16, t);
        let (a, _) = one.evaluate(&f).unwrap();
        let (b, _) = split.evaluate(&f).unwrap();
        assert_eq!(a.output, b.output, "frame {t}: the split frame differs");
    }
    let mut value = 0u64;
    unsafe { value = shared.device.get_semaphore_counter_value(split.engine.timeline).unwrap_or(value) };
    assert_eq!(value, 11, "the front of frame N signals 2N + 1");
}

#[test]
fn exported_token_and_head_buffers_import_on_another_device_with_the_same_bytes() {
    let Some(shared) = device() else { return };
    if !shared.caps.external_memory_fd {
        eprintln!("skipped: no VK_KHR_external_memory_fd on {}", shared.caps.name);
        return;
    }
    let model = Model::new(&shared, &small_package()).unwrap();
    let engine = Engine::new(&model, (24, 16), (48, 32), true).unwrap();
    let mut runner = Runner::with_engine(engine, Settings::default()).unwrap();
    runner.read = ReadBack { tokens: true, head: true, history: false };
    for t in 0..2 {
        runner.evaluate(&frame(24, 16, t)).unwrap();
    }
    let (ev, _) = runner.evaluate(&frame(24, 16, 2)).unwrap();
    let (tb, hb) = runner.engine.token_bytes();
    // A second device on the same GPU imports both buffers and copies them to the host.
    let other = DeviceShared::open().unwrap();
    for (buf, bytes, expect) in [(&runner.engine.tokens, tb, &ev.tokens), (&runner.engine.head, hb, &ev.head)] {
        let fd = buf.export_fd().unwrap();
        let imported = Buffer::import_fd(&other, "imported", fd, buffer_size(buf)).unwrap();
        let host = read_to_host(&other, &imported, bytes);
        let got: Vec<f32> = host.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect();
        assert_eq!(&got, expect, "{}: imported bytes differ", buf.name);
    }
}

fn buffer_size(b: &Buffer) -> u64 {
    b.size
}

fn read_to_host(shared: &Arc<DeviceShared>, src: &Buffer, bytes: u64) -> Vec<u8> {
    let host = Buffer::new(shared, "host copy", bytes, vk_stages::memory::Location::HostRead, false).unwrap();
    vk_stages::model::submit_once(shared, |cmd| unsafe {
        shared.device.cmd_copy_buffer(cmd, src.buffer, host.buffer, &[vk::BufferCopy::default().size(bytes)]);
    })
    .unwrap();
    host.bytes()[..bytes as usize].to_vec()
}

#[test]
fn automatic_exposure_on_the_gpu_matches_the_reference() {
    let Some(shared) = device() else { return };
    let pkg = small_package();
    let settings = Settings { exposure: Exposure::Auto, ..Settings::default() };
    let model = Model::new(&shared, &pkg).unwrap();
    let mut gpu = Runner::new(&model, settings.clone(), (24, 16), (48, 32)).unwrap();
    let mut cpu = Upscaler::new(HeadSource::Network(Arc::new(Network::from_package(&pkg))), settings, (48, 32));
    for t in 0..4 {
        let mut f = frame(24, 16, t);
        // Brighter every frame, so the exposure changes and the history is re-exposed.
        f.color.iter_mut().for_each(|v| *v *= 1.0 + t as f32);
        let c = cpu.evaluate(&f);
        let (g, _) = gpu.evaluate(&f).unwrap();
        assert!((g.exposure / c.exposure - 1.0).abs() < 1e-4, "frame {t}: exposure {} vs {}", g.exposure, c.exposure);
        let p = psnr(&g.output, &c.output);
        assert!(p >= 50.0, "frame {t}: {p:.1} dB");
    }
}

/// Fixed controls skip the input stage, so the reconstruction resamples the history itself (its
/// `STORED_CONTEXT = false` variant; after the network it reads what the input stage stored).
#[test]
fn fixed_controls_reconstruct_as_the_reference_does() {
    let Some(shared) = device() else { return };
    let pkg = small_package();
    let model = Model::new(&shared, &pkg).unwrap();
    let fixed = pkg.baseline;
    let mut gpu = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
    gpu.controls = Controls::Fixed(fixed);
    let mut cpu = Upscaler::new(HeadSource::Fixed(fixed), Settings::default(), (48, 32));
    for t in 0..6 {
        let f = frame(24, 16, t);
        let c = cpu.evaluate(&f);
        let (g, _) = gpu.evaluate(&f).unwrap();
        let p = psnr(&g.output, &c.output);
        assert!(p >= 50.0, "frame {t}: fixed controls on Vulkan against the CPU: {p:.1} dB");
    }
}

/// A pixel embedding wider than the specialisation constants hold (P = 12 > 8) is read from the
/// weight buffer: the same tokens as the reference.
#[test]
fn a_wide_pixel_embedding_is_read_from_the_buffer() {
    let Some(shared) = device() else { return };
    let cfg = NetworkConfig { channels: vec![16, 32], encoder_depths: vec![1], bottleneck_depth: 1, decoder_depths: vec![1], pixel_embed: 12, ..NetworkConfig::default() };
    let pkg = ModelPackage::untrained(cfg, 7);
    let model = Model::new(&shared, &pkg).unwrap();
    assert_eq!(&model.input_spec[..2], &[12, 0], "P = 12 takes the buffer path");
    let mut gpu = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
    gpu.read = ReadBack { tokens: true, head: false, history: false };
    let mut cpu = Upscaler::new(HeadSource::Network(Arc::new(Network::from_package(&pkg))), Settings::default(), (48, 32));
    for t in 0..3 {
        let f = frame(24, 16, t);
        let c = cpu.evaluate(&f);
        let (g, _) = gpu.evaluate(&f).unwrap();
        let p = tessel_model::metrics::psnr_range(&g.tokens, &c.tokens);
        assert!(p >= 60.0, "frame {t}: tokens {p:.1} dB against the reference");
    }
}

/// The streamed input stage (the default) and the whole-neighbourhood one (TESSEL_VK_INPUT_STREAM=0)
/// compute the same features: the same tokens and stored history context frame after frame (the
/// second frame on reads a valid history), both against the reference; in workgroups of other
/// shapes as well.
#[test]
fn the_streamed_input_stage_gives_the_whole_neighbourhood_s_tokens() {
    let Some(shared) = device() else { return };
    let pkg = small_package();
    let runner = |stream: bool| {
        // The whole neighbourhood in the old 8x8 workgroups, the streamed one in others.
        let paths = PixelPaths { input_stream: stream, input_wg: if stream { (32, 4) } else { (8, 8) } };
        let model = Model::with_paths(&shared, &pkg, paths, vk_stages::tiles::NetTiles::default()).unwrap();
        let mut r = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
        r.read = ReadBack { tokens: true, head: false, history: true };
        r
    };
    let (mut streamed, mut whole) = (runner(true), runner(false));
    let mut cpu = Upscaler::new(HeadSource::Network(Arc::new(Network::from_package(&pkg))), Settings::default(), (48, 32));
    for t in 0..4 {
        let f = frame(24, 16, t);
        let c = cpu.evaluate(&f);
        let (s, _) = streamed.evaluate(&f).unwrap();
        let (w, _) = whole.evaluate(&f).unwrap();
        let same = tessel_model::metrics::psnr_range(&s.tokens, &w.tokens);
        let ref_db = tessel_model::metrics::psnr_range(&s.tokens, &c.tokens);
        let image = psnr(&s.output, &w.output);
        assert!(same >= 100.0, "frame {t}: streamed against whole-neighbourhood tokens {same:.1} dB");
        assert!(ref_db >= 60.0, "frame {t}: streamed tokens {ref_db:.1} dB against the reference");
        assert!(image >= 100.0, "frame {t}: images {image:.1} dB apart");
    }
}

#[test]
fn nan_and_inf_inputs_never_reach_the_gpu_history() {
    let Some(shared) = device() else { return };
    let model = Model::new(&shared, &small_package()).unwrap();
    let mut gpu = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
    gpu.read = ReadBack { tokens: false, head: true, history: true };
    for t in 0..4 {
        let mut f = frame(24, 16, t);
        if t == 1 {
            for (i, v) in f.color.iter_mut().enumerate().step_by(7) {
                *v = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][i % 3];
            }
            f.motion[10] = f32::NAN;
            f.motion[11] = f32::INFINITY;
            f.depth[3] = f32::NAN;
        }
        let (g, _) = gpu.evaluate(&f).unwrap();
        if t == 1 {
            assert!(g.sanitized > 0, "the poisoned frame reports what it replaced");
        }
        assert!(g.output.iter().all(|v| v.is_finite()), "frame {t}: non-finite output");
        assert!(g.head.iter().all(|v| v.is_finite()), "frame {t}: non-finite head");
        assert!(gpu.history_channels(&[0, 1, 2, 3, 4, 5]).iter().all(|v| v.is_finite()), "frame {t}: non-finite history");
    }
}

#[test]
fn a_render_size_above_the_capacity_is_an_error() {
    let Some(shared) = device() else { return };
    let model = Model::new(&shared, &small_package()).unwrap();
    let mut gpu = Runner::new(&model, Settings::default(), (24, 16), (48, 32)).unwrap();
    let err = gpu.evaluate(&frame(32, 16, 0)).err().expect("a frame above the capacity");
    assert!(matches!(err, VkError::Size(_)), "{err}");
    assert!(err.to_string().contains("capacity 24x16"), "{err}");
    // The runner still works afterwards.
    gpu.evaluate(&frame(24, 16, 0)).unwrap();
    let err = Engine::new(&model, (64, 16), (48, 32), false).err().expect("capacity above the output");
    assert!(err.to_string().contains("exceeds the output"), "{err}");
}

#[test]
fn a_config_the_shaders_cannot_take_is_refused_at_load() {
    let cfg = NetworkConfig { channels: vec![24, 48], encoder_depths: vec![1], decoder_depths: vec![1], ..NetworkConfig::default() };
    let err = vk_stages::layers::check_config("odd-widths", &cfg).unwrap_err();
    assert!(matches!(err, VkError::Config { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("odd-widths") && msg.contains("channels[0]"), "{msg}");
    assert!(vk_stages::layers::check_config("default", &NetworkConfig::default()).is_ok());
}

/// Native kernels in a command buffer are refused with a clear error: a kernel declaring more
/// shared memory than the 48 KiB such launches may use (before anything is created: going over
/// loses the device), and a device without VK_NVX_binary_import (lavapipe).
#[test]
fn native_kernels_beyond_the_shared_memory_limit_or_without_the_extension_are_refused() {
    use vk_stages::native::{NativeKernel, NativeNetwork};
    let Some(shared) = device() else { return };
    let weights = || vk_stages::memory::upload(&shared, "weights", &[0; 16]).unwrap();
    let big = [NativeKernel { name: "tessel_block_mma_c96", shared_bytes: 49 * 1024 }];
    let e = NativeNetwork::new(&shared, b"\0", &big, weights()).err().expect("over the limit");
    let msg = e.to_string();
    assert!(msg.contains("tessel_block_mma_c96") && msg.contains("50176 bytes of shared memory"), "{msg}");
    if shared.caps.binary_import {
        eprintln!("skipped: the absent-extension half ({} has VK_NVX_binary_import)", shared.caps.name);
        return;
    }
    let small = [NativeKernel { name: "tessel_block_mma_c96", shared_bytes: 10 * 1024 }];
    let msg = NativeNetwork::new(&shared, b"\0", &small, weights()).err().expect("no extension").to_string();
    assert!(msg.contains("VK_NVX_binary_import"), "{msg}");
}
