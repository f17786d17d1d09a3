//! The exposure stage: sanitising a frame's inputs, exposure, tonemapping, unit conversion; and
//! the history kept between frames.

use crate::sample::Plane;
use crate::sequence::{MotionUnits, Settings};
use crate::tonemap::{auto_exposure, sanitize_color, sanitize_depth, sanitize_motion, tonemap};

/// One frame's inputs as the application provides them (linear, render size).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameData {
    pub render: (usize, usize),
    /// RGBA, linear.
    pub color: Vec<f32>,
    /// RG, previous position minus current position, in `Settings::motion_units`.
    pub motion: Vec<f32>,
    /// Depth per `Settings::depth_inverted`.
    pub depth: Vec<f32>,
    /// Sample offset from the pixel centre, render pixels.
    pub jitter: [f32; 2],
    pub reset: bool,
    /// Ground truth at output size (RGBA, linear), when known.
    pub reference: Option<Vec<f32>>,
}

impl FrameData {
    /// Checks that the planes hold what the render size needs; the message says both.
    pub fn check_planes(&self) -> std::result::Result<(), String> {
        let (rw, rh) = self.render;
        let n = rw * rh;
        if n == 0 || self.color.len() != n * 4 || self.motion.len() != n * 2 || self.depth.len() != n {
            return Err(format!(
                "frame planes have {} colour, {} motion, {} depth values; render size {rw}x{rh} needs {}, {}, {}",
                self.color.len(),
                self.motion.len(),
                self.depth.len(),
                n * 4,
                n * 2,
                n
            ));
        }
        Ok(())
    }
}

/// A frame after the exposure stage: what the input stage and the reconstruction read.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Tonemapped exposed colour T(e * c), 3 channels, render size.
    pub color: Plane,
    /// Motion in output pixels, 2 channels, render size.
    pub motion: Plane,
    /// Nearness (1 = near, 0 = far), 1 channel, render size.
    pub near: Plane,
    pub jitter: [f32; 2],
    pub reset: bool,
    pub exposure: f32,
    /// Input values that were not finite or out of range, and were replaced.
    pub sanitized: usize,
}

pub fn prepare(f: &FrameData, settings: &Settings, out: (usize, usize)) -> Prepared {
    let (rw, rh) = f.render;
    let mut color = f.color.clone();
    let mut motion = f.motion.clone();
    let mut depth = f.depth.clone();
    let mut sanitized = sanitize_color(&mut color) + sanitize_motion(&mut motion) + sanitize_depth(&mut depth);
    let mut jitter = f.jitter;
    for j in jitter.iter_mut() {
        if !j.is_finite() {
            *j = 0.0;
            sanitized += 1;
        }
        *j = j.clamp(-0.5, 0.5);
    }
    let exposure = settings.exposure.value().unwrap_or_else(|| auto_exposure(&color));
    let mut c = Plane::new(rw, rh, 3);
    for (dst, src) in c.data.chunks_exact_mut(3).zip(color.chunks_exact(4)) {
        for k in 0..3 {
            dst[k] = tonemap(src[k] * exposure);
        }
    }
    let (sx, sy) = match settings.motion_units {
        MotionUnits::Render => (out.0 as f32 / rw as f32, out.1 as f32 / rh as f32),
        MotionUnits::Output => (1.0, 1.0),
    };
    let mut m = Plane::new(rw, rh, 2);
    for (dst, src) in m.data.chunks_exact_mut(2).zip(motion.chunks_exact(2)) {
        dst[0] = src[0] * sx;
        dst[1] = src[1] * sy;
    }
    let mut near = Plane::new(rw, rh, 1);
    for (dst, &d) in near.data.iter_mut().zip(depth.iter()) {
        *dst = if settings.depth_inverted { d } else { 1.0 - d };
    }
    Prepared { color: c, motion: m, near, jitter, reset: f.reset, exposure, sanitized }
}

/// What is kept from one frame to the next, at output size. Every backend stores it as f16.
#[derive(Clone, Debug)]
pub struct History {
    /// Output colour, tonemapped under `exposure`, 3 channels.
    pub color: Plane,
    /// Nearness of the nearest render sample, 1 channel.
    pub near: Plane,
    /// Feature memory from the head, 2 channels.
    pub memory: Plane,
    /// Accumulation count (config `accumulate`; 0 otherwise), 1 channel.
    pub count: Plane,
    pub exposure: f32,
    /// False until a frame has been written (and after a reset, until the next write).
    pub valid: bool,
}

impl History {
    pub fn new(w: usize, h: usize) -> Self {
        History { color: Plane::new(w, h, 3), near: Plane::new(w, h, 1), memory: Plane::new(w, h, 2), count: Plane::new(w, h, 1), exposure: 1.0, valid: false }
    }
    /// Drops everything: the planes become zero, validity false.
    pub fn clear(&mut self) {
        for p in [&mut self.color, &mut self.near, &mut self.memory, &mut self.count] {
            p.data.iter_mut().for_each(|v| *v = 0.0);
        }
        self.valid = false;
    }
}
