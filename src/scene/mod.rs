//! `tessel scene`: deterministic procedural sequences with exact motion, depth and supersampled
//! ground truth. A scene is a textured plane seen by a panning, zooming camera, with independently
//! moving, spinning objects in front of it (disocclusion), thin lines, fine periodic texture,
//! text-like glyphs and HDR highlights, and a camera cut with a reset mid-sequence. The hazard
//! kinds (`light`, `translucent`, `screen`, `thin`, see [`hazards`]) add what motion vectors cannot
//! describe: the motion and depth always belong to the opaque surface.

pub mod hazards;
pub mod texture;

use rayon::prelude::*;

use tessel_model::frame::FrameData;
use texture::{hash3, material, unit, Family, Material, Rgb};

/// Kinds of scene: each draws materials, objects and camera motion from its own mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SceneKind {
    /// Signs and text panels, thin lines; a steady pan with a few moving blocks.
    Street,
    /// Fine stripes, checks and rings under a slow zoom: moiré territory.
    Fabric,
    /// Many moving, spinning objects over a busy background: disocclusion everywhere.
    Traffic,
    /// Dark surroundings, HDR sparkles and bright thin lines.
    Night,
    /// A bit of everything, pan and zoom.
    Mixed,
    /// A light (HDR spot, drifting blind shadows) moving over static surfaces: the shading changes,
    /// the motion is the camera's only (a still camera until the cut, a pan after it).
    Light,
    /// Semi-transparent panes and smoke drifting over the scene; motion and depth describe only
    /// the opaque surface behind them.
    Translucent,
    /// Moving panels whose pictures scroll; the motion is the panels' own.
    Screen,
    /// Slowly moving wires and fences narrower than a render pixel, some HDR.
    Thin,
}

impl SceneKind {
    fn families(self) -> &'static [Family] {
        use Family::*;
        match self {
            SceneKind::Street => &[Text, Text, Lines, Checker, Noise],
            SceneKind::Fabric => &[Stripes, Stripes, Checker, Rings, Noise],
            SceneKind::Traffic => &[Noise, Lines, Checker, Text],
            SceneKind::Night => &[Sparkles, Sparkles, Lines, Noise],
            SceneKind::Mixed => &[Stripes, Checker, Lines, Text, Noise, Sparkles, Rings],
            SceneKind::Light => &[Text, Checker, Noise, Stripes, Lines],
            SceneKind::Translucent => &[Text, Checker, Lines, Noise, Stripes],
            SceneKind::Screen => &[Text, Text, Stripes, Checker, Noise],
            SceneKind::Thin => &[Noise, Noise, Checker, Text],
        }
    }
    fn objects(self) -> usize {
        match self {
            SceneKind::Street => 3,
            SceneKind::Fabric => 2,
            SceneKind::Traffic => 9,
            SceneKind::Night => 4,
            SceneKind::Mixed => 5,
            SceneKind::Light | SceneKind::Thin => 2,
            SceneKind::Translucent => 3,
            SceneKind::Screen => 4,
        }
    }
    fn zooms(self) -> bool {
        matches!(self, SceneKind::Fabric | SceneKind::Mixed)
    }
}

/// What to generate.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SceneSpec {
    pub kind: SceneKind,
    pub seed: u64,
    /// Output / render size ratio per axis (1.5, 2, 3, ...).
    pub ratio: f32,
    pub frames: usize,
    pub output: (usize, usize),
    /// Ground-truth samples per output pixel (at least 16).
    pub spp: usize,
    /// Frame at which the camera cuts and `reset` is set (none: no cut).
    pub reset_at: Option<usize>,
}

impl SceneSpec {
    pub fn render_size(&self) -> (usize, usize) {
        let r = |v: usize| ((v as f32 / self.ratio).round() as usize).clamp(1, v);
        (r(self.output.0), r(self.output.1))
    }
    /// Jitter phases: ceil(8 * ratio^2), at least 8, so each output pixel sees several samples.
    pub fn jitter_period(&self) -> usize {
        ((8.0 * self.ratio * self.ratio).ceil() as usize).max(8)
    }
}

/// Radical inverse in base `b` (the Halton sequence).
pub fn halton(mut i: usize, b: usize) -> f32 {
    let (mut f, mut r) = (1.0f32, 0.0f32);
    while i > 0 {
        f /= b as f32;
        r += f * (i % b) as f32;
        i /= b;
    }
    r
}

/// Jitter of frame `t`: Halton (2, 3) at index (t mod period) + 1, centred.
pub fn jitter(t: usize, period: usize) -> [f32; 2] {
    let i = t % period + 1;
    [halton(i, 2) - 0.5, halton(i, 3) - 0.5]
}

#[derive(Clone, Debug)]
struct Camera {
    start: [f32; 2],
    vel: [f32; 2],
    wobble: [f32; 2],
    wobble_freq: f32,
    zoom: f32,
    zoom_rate: f32,
}

impl Camera {
    fn random(kind: SceneKind, h: u32) -> Camera {
        let u = |k: u32| unit(h.rotate_left(k));
        let speed = 0.2 + 1.5 * u(1);
        let dir = std::f32::consts::TAU * u(2);
        Camera {
            start: [4000.0 * u(3), 4000.0 * u(4)],
            vel: [speed * dir.cos(), speed * dir.sin()],
            wobble: [2.0 * u(5), 2.0 * u(6)],
            wobble_freq: 0.05 + 0.2 * u(7),
            zoom: 0.8 + 0.6 * u(8),
            zoom_rate: if kind.zooms() { 0.012 * (u(9) - 0.5) } else { 0.0 },
        }
    }
    /// World position at the screen centre, in world units, at time t (frames).
    fn pos(&self, t: f32) -> [f32; 2] {
        let w = (self.wobble_freq * t).sin();
        [self.start[0] + self.vel[0] * t + self.wobble[0] * w, self.start[1] + self.vel[1] * t + self.wobble[1] * (0.7 * self.wobble_freq * t).cos()]
    }
    /// Output pixels per world unit.
    fn scale(&self, t: f32) -> f32 {
        self.zoom * (self.zoom_rate * t).exp()
    }
    /// The same camera held still at its start.
    fn still(self) -> Camera {
        Camera { vel: [0.0; 2], wobble: [0.0; 2], zoom_rate: 0.0, ..self }
    }
}

#[derive(Clone, Debug)]
enum Shape {
    Disc { r: f32 },
    Rect { hw: f32, hh: f32 },
    /// A grid of bars `bar` wide every `spacing` units inside a `hw` x `hh` rectangle.
    Fence { hw: f32, hh: f32, spacing: f32, bar: f32 },
}

#[derive(Clone, Debug)]
struct Object {
    shape: Shape,
    /// Position relative to the camera start (world units), velocity, orbit.
    offset: [f32; 2],
    vel: [f32; 2],
    orbit: f32,
    orbit_freq: f32,
    angle: f32,
    spin: f32,
    near: f32,
    material: Material,
    /// A screen shows its material scrolling (not in the motion vectors).
    screen: Option<hazards::Screen>,
}

impl Object {
    fn pos(&self, cam_start: [f32; 2], t: f32) -> [f32; 2] {
        let a = self.orbit_freq * t;
        [cam_start[0] + self.offset[0] + self.vel[0] * t + self.orbit * a.cos(), cam_start[1] + self.offset[1] + self.vel[1] * t + self.orbit * a.sin()]
    }
    fn rotation(&self, t: f32) -> f32 {
        self.angle + self.spin * t
    }
    fn contains(&self, l: [f32; 2]) -> bool {
        match self.shape {
            Shape::Disc { r } => l[0] * l[0] + l[1] * l[1] < r * r,
            Shape::Rect { hw, hh } => l[0].abs() < hw && l[1].abs() < hh,
            Shape::Fence { hw, hh, spacing, bar } => hazards::fence_contains(l, hw, hh, spacing, bar),
        }
    }
}

/// One camera segment of a scene (a cut starts a new one).
#[derive(Clone, Debug)]
struct Segment {
    camera: Camera,
    objects: Vec<Object>,
    tile: f32,
    families: &'static [Family],
    seed: u32,
    /// Light or translucent layers over the opaque surface.
    shading: hazards::Shading,
}

/// Surface hit by a sample: colour, nearness, previous-frame screen position.
struct Hit {
    color: Rgb,
    near: f32,
    prev: [f32; 2],
}

fn rotate(v: [f32; 2], a: f32) -> [f32; 2] {
    let (s, c) = a.sin_cos();
    [c * v[0] - s * v[1], s * v[0] + c * v[1]]
}

impl Segment {
    /// Segment `seed` of a scene of `kind`; `first`: the one that starts at frame 0.
    fn new(kind: SceneKind, seed: u32, output: (usize, usize), first: bool) -> Segment {
        let camera = Camera::random(kind, hash3(1, 0, seed));
        let camera = if first && kind == SceneKind::Light { camera.still() } else { camera };
        let extent = output.0.max(output.1) as f32 / camera.zoom;
        let objects = (0..kind.objects())
            .map(|i| {
                let h = hash3(i as i32, 7, seed);
                let u = |k: u32| unit(h.rotate_left(k));
                let size = extent * (0.04 + 0.12 * u(1));
                let shape = if h % 2 == 0 { Shape::Disc { r: size } } else { Shape::Rect { hw: size, hh: size * (0.4 + 0.8 * u(2)) } };
                let fam = kind.families()[(h >> 4) as usize % kind.families().len()];
                Object {
                    shape,
                    offset: [extent * (u(3) - 0.5) * 0.9, extent * (u(4) - 0.5) * 0.6],
                    vel: [camera.vel[0] + 2.5 * (u(5) - 0.5), camera.vel[1] + 2.5 * (u(6) - 0.5)],
                    orbit: 6.0 * u(7),
                    orbit_freq: 0.03 + 0.1 * u(8),
                    angle: std::f32::consts::TAU * u(9),
                    spin: 0.03 * (u(10) - 0.5),
                    near: 0.25 + 0.7 * u(11),
                    material: material(fam, hash3(i as i32, 99, seed)),
                    screen: None,
                }
            })
            .collect::<Vec<_>>();
        let mut objects = objects;
        hazards::adapt_objects(kind, &mut objects, seed);
        objects.extend(hazards::extra_objects(kind, &camera, extent, seed));
        objects.sort_by(|a, b| b.near.total_cmp(&a.near));
        let shading = hazards::Shading::new(kind, &camera, extent, seed);
        Segment { camera, objects, tile: 40.0 + 60.0 * unit(hash3(2, 0, seed)), families: kind.families(), seed, shading }
    }

    fn to_screen(&self, w: [f32; 2], t: f32, centre: [f32; 2]) -> [f32; 2] {
        let c = self.camera.pos(t);
        let s = self.camera.scale(t);
        [(w[0] - c[0]) * s + centre[0], (w[1] - c[1]) * s + centre[1]]
    }

    fn to_world(&self, p: [f32; 2], t: f32, centre: [f32; 2]) -> [f32; 2] {
        let c = self.camera.pos(t);
        let s = self.camera.scale(t);
        [(p[0] - centre[0]) / s + c[0], (p[1] - centre[1]) / s + c[1]]
    }

    fn background(&self, w: [f32; 2]) -> Rgb {
        let (tx, ty) = ((w[0] / self.tile).floor() as i32, (w[1] / self.tile).floor() as i32);
        let h = hash3(tx, ty, self.seed);
        let fam = self.families[h as usize % self.families.len()];
        material(fam, h).eval(w[0], w[1])
    }

    /// The surface at screen point `p` (output pixels) at frame `t`.
    fn hit(&self, p: [f32; 2], t: f32, centre: [f32; 2]) -> Hit {
        let w = self.to_world(p, t, centre);
        for o in &self.objects {
            let pos = o.pos(self.camera.start, t);
            let local = rotate([w[0] - pos[0], w[1] - pos[1]], -o.rotation(t));
            if o.contains(local) {
                let pp = o.pos(self.camera.start, t - 1.0);
                let r = rotate(local, o.rotation(t - 1.0));
                let wp = [pp[0] + r[0], pp[1] + r[1]];
                let color = match &o.screen {
                    Some(s) => s.picture(&o.material, local, t),
                    None => o.material.eval(local[0], local[1]),
                };
                return Hit { color, near: o.near, prev: self.to_screen(wp, t - 1.0, centre) };
            }
        }
        Hit { color: self.background(w), near: 0.05, prev: self.to_screen(w, t - 1.0, centre) }
    }

    /// What a camera sample at `p` sees: the opaque hit (its motion and depth) with the light or
    /// translucent layers of the segment applied to its colour.
    fn sample(&self, p: [f32; 2], t: f32, centre: [f32; 2]) -> Hit {
        let hit = self.hit(p, t, centre);
        match self.shading {
            hazards::Shading::None => hit,
            _ => Hit { color: self.shading.apply(hit.color, self.to_world(p, t, centre), t), ..hit },
        }
    }
}

/// A generated scene: segments and the frames at which each starts.
pub struct Scene {
    pub spec: SceneSpec,
    segments: Vec<(usize, Segment)>,
}

impl Scene {
    pub fn new(spec: SceneSpec) -> Scene {
        let base = (spec.seed as u32) ^ ((spec.seed >> 32) as u32).wrapping_mul(0x2545_f491) ^ (spec.kind as u32).wrapping_mul(0x68e3_1da4);
        let mut segments = vec![(0, Segment::new(spec.kind, base, spec.output, true))];
        if let Some(r) = spec.reset_at.filter(|&r| r > 0 && r < spec.frames) {
            segments.push((r, Segment::new(spec.kind, base ^ 0x00c0_ffee, spec.output, false)));
        }
        Scene { spec, segments }
    }

    fn segment(&self, t: usize) -> &Segment {
        &self.segments.iter().rev().find(|(s, _)| *s <= t).expect("segment 0 starts at frame 0").1
    }

    /// Frame `t`: render-size colour, motion (render px), inverted depth, jitter, reset, and the
    /// supersampled reference at output size.
    pub fn frame(&self, t: usize) -> FrameData {
        let mut f = self.inputs(t);
        f.reference = Some(self.reference(t));
        f
    }

    /// Frame `t` without the ground truth (`reference: None`): only what an upscaler reads, at a
    /// fraction of the cost (one sample per render pixel instead of `spp` per output pixel).
    pub fn inputs(&self, t: usize) -> FrameData {
        let (ow, oh) = self.spec.output;
        let (rw, rh) = self.spec.render_size();
        let seg = self.segment(t);
        let centre = [ow as f32 / 2.0, oh as f32 / 2.0];
        let j = jitter(t, self.spec.jitter_period());
        let (sx, sy) = (ow as f32 / rw as f32, oh as f32 / rh as f32);
        let tf = t as f32;
        let mut color = vec![0.0f32; rw * rh * 4];
        let mut motion = vec![0.0f32; rw * rh * 2];
        let mut depth = vec![0.0f32; rw * rh];
        color
            .par_chunks_mut(rw * 4)
            .zip(motion.par_chunks_mut(rw * 2))
            .zip(depth.par_chunks_mut(rw))
            .enumerate()
            .for_each(|(y, ((c, m), d))| {
                for x in 0..rw {
                    let p = [(x as f32 + 0.5 + j[0]) * sx, (y as f32 + 0.5 + j[1]) * sy];
                    let hit = seg.sample(p, tf, centre);
                    c[x * 4..x * 4 + 3].copy_from_slice(&hit.color);
                    c[x * 4 + 3] = 1.0;
                    m[x * 2] = (hit.prev[0] - p[0]) / sx;
                    m[x * 2 + 1] = (hit.prev[1] - p[1]) / sy;
                    d[x] = hit.near;
                }
            });
        let reset = t == 0 || self.segments.iter().any(|(s, _)| *s == t);
        FrameData { render: (rw, rh), color, motion, depth, jitter: j, reset, reference: None }
    }

    /// The supersampled ground truth of frame `t` at output size (RGBA, linear).
    pub fn reference(&self, t: usize) -> Vec<f32> {
        let (ow, oh) = self.spec.output;
        let seg = self.segment(t);
        let centre = [ow as f32 / 2.0, oh as f32 / 2.0];
        let tf = t as f32;
        let n = (self.spec.spp as f32).sqrt().ceil() as usize;
        let mut reference = vec![0.0f32; ow * oh * 4];
        reference.par_chunks_mut(ow * 4).enumerate().for_each(|(y, row)| {
            for x in 0..ow {
                let mut acc = [0.0f32; 3];
                for s in 0..n * n {
                    let h = hash3(x as i32 ^ (t as i32) << 16, y as i32, s as u32);
                    let px = x as f32 + ((s % n) as f32 + unit(h)) / n as f32;
                    let py = y as f32 + ((s / n) as f32 + unit(h.rotate_left(13))) / n as f32;
                    let c = seg.sample([px, py], tf, centre).color;
                    for k in 0..3 {
                        acc[k] += c[k];
                    }
                }
                for k in 0..3 {
                    row[x * 4 + k] = acc[k] / (n * n) as f32;
                }
                row[x * 4 + 3] = 1.0;
            }
        });
        reference
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: SceneKind) -> SceneSpec {
        SceneSpec { kind, seed: 3, ratio: 2.0, frames: 4, output: (64, 48), spp: 16, reset_at: Some(2) }
    }

    #[test]
    fn halton_jitter_is_centred_and_periodic() {
        assert_eq!(halton(1, 2), 0.5);
        assert!((halton(3, 3) - 1.0 / 9.0).abs() < 1e-7);
        assert!((halton(6, 2) - 0.375).abs() < 1e-7);
        let p = 32;
        for t in 0..p {
            let j = jitter(t, p);
            assert!(j[0].abs() <= 0.5 && j[1].abs() <= 0.5);
            assert_eq!(j, jitter(t + p, p));
        }
        assert_eq!(spec(SceneKind::Mixed).jitter_period(), 32);
    }

    #[test]
    fn frames_are_deterministic_and_reset_mid_sequence() {
        let s = Scene::new(spec(SceneKind::Mixed));
        let a = s.frame(1);
        let b = Scene::new(spec(SceneKind::Mixed)).frame(1);
        assert_eq!(a, b);
        assert!(s.frame(0).reset && !a.reset && s.frame(2).reset);
        assert_eq!(a.render, (32, 24));
        assert!(a.color.iter().all(|v| v.is_finite() && *v >= 0.0));
    }

    /// `inputs` is `frame` without the reference; the world (camera, objects, cut) does not depend
    /// on the ratio, so two scenes of one kind and seed at different ratios show the same truth.
    #[test]
    fn inputs_skip_the_reference_and_ratios_share_the_world() {
        let s = Scene::new(spec(SceneKind::Traffic));
        let (f, i) = (s.frame(3), s.inputs(3));
        assert_eq!(i.reference, None);
        assert_eq!(FrameData { reference: None, ..f.clone() }, i);
        let s15 = Scene::new(SceneSpec { ratio: 1.5, ..spec(SceneKind::Traffic) });
        for t in 0..4 {
            assert_eq!(s15.reference(t), s.reference(t), "frame {t}");
        }
        assert_eq!(s15.inputs(1).render, (43, 32));
    }

    /// The motion vectors are exact: the previous frame's surface under (p + motion) has the
    /// colour of the current sample, for background points whose neighbourhood is flat.
    #[test]
    fn motion_points_at_the_same_surface_in_the_previous_frame() {
        let sp = SceneSpec { reset_at: None, ..spec(SceneKind::Street) };
        let s = Scene::new(sp.clone());
        let seg = s.segment(5);
        let centre = [32.0, 24.0];
        let mut checked = 0;
        for (i, p) in [[10.3f32, 7.7], [40.1, 30.9], [55.5, 12.25], [3.0, 44.0]].iter().enumerate() {
            let hit = seg.hit(*p, 5.0, centre);
            let prev = seg.hit(hit.prev, 4.0, centre);
            if prev.near == hit.near {
                checked += 1;
                assert_eq!(prev.color, hit.color, "point {i}");
            }
        }
        assert!(checked >= 2);
    }
}
