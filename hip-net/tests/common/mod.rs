//! What the GPU tests of hip-net share.

use std::sync::Arc;

use hip_net::{Context, Prefer, Runtime};

/// The context on the first device, found through its UUID as the Vulkan side will; None (after
/// saying why) when there is no runtime or no device.
#[allow(dead_code)]
pub fn context() -> Option<Arc<Context>> {
    let rt = match Runtime::open(Prefer::Auto) {
        Ok(rt) => rt,
        Err(e) => {
            println!("skipped: no GPU runtime ({e})");
            return None;
        }
    };
    let devices = rt.devices().expect("devices of an opened runtime");
    let Some(first) = devices.first() else {
        println!("skipped: no GPU runtime ({} sees no device)", rt.describe());
        return None;
    };
    println!("{}: {:?}", rt.describe(), devices);
    let ctx = Context::new(&rt, first.uuid).expect("context on the device with that UUID");
    assert_eq!(ctx.device(), first);
    Some(ctx)
}


/// A moving synthetic frame at render size (rw, rh), time t: stripes and an HDR highlight drifting
/// left at `speed` render px per frame, a depth ramp, a jitter of period 8; a reset at t = 0.
#[allow(dead_code)]
pub fn moving_frame(rw: usize, rh: usize, t: usize, speed: f32) -> tessel_model::frame::FrameData {
    let mut color = vec![0.0f32; rw * rh * 4];
    for y in 0..rh {
        for x in 0..rw {
            let fx = x as f32 + speed * t as f32;
            let i = (y * rw + x) * 4;
            color[i] = 0.4 + 0.3 * (fx * 0.21).sin() * (y as f32 * 0.13).cos();
            color[i + 1] = 0.3 + 0.2 * ((fx + y as f32) * 0.09).sin();
            color[i + 2] = 1.5 * ((fx * 0.3).cos().max(0.0)).powi(8);
            color[i + 3] = 1.0;
        }
    }
    let motion = [-speed, 0.0].repeat(rw * rh);
    let depth = (0..rw * rh).map(|i| 0.3 + 0.4 * ((i % rw) as f32 / rw as f32)).collect();
    let jitter = [((t * 3) % 8) as f32 / 8.0 - 0.4375, ((t * 5) % 8) as f32 / 8.0 - 0.4375];
    tessel_model::frame::FrameData { render: (rw, rh), color, motion, depth, jitter, reset: t == 0, reference: None }
}

/// The engine's per-frame values for an uploaded frame `f` under the default settings.
#[allow(dead_code)]
pub fn frame_input(f: &tessel_model::frame::FrameData, reset: bool) -> vk_stages::FrameInput {
    let s = tessel_model::sequence::Settings::default();
    vk_stages::FrameInput { render: f.render, jitter: f.jitter, reset, exposure: s.exposure, motion_units: s.motion_units, depth_inverted: s.depth_inverted }
}
