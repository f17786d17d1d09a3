//! What motion vectors cannot describe: a moving light over static surfaces, translucent layers
//! drifting over the opaque scene, screens whose pictures scroll, and wires and fences narrower
//! than a render pixel. The motion and depth of a sample always belong to the opaque surface it
//! hits; the light, the layers and the scrolling are only in its colour. Everything is a pure
//! function of the segment's seed, the world position and the time.

use super::texture::{colour, fbm, hash3, mix, unit, Material, Rgb};
use super::{Camera, Object, SceneKind, Shape};

/// Hermite step from 0 at `a` to 1 at `b`.
fn smoothstep(a: f32, b: f32, x: f32) -> f32 {
    let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Seeded draws in [0, 1): `u(k)` for the k-th value of hash `h`.
fn draws(h: u32) -> impl Fn(u32) -> f32 {
    move |k| unit(h.rotate_left(k))
}

/// A light following the camera on an orbit: an HDR spot with a soft Gaussian falloff, partly
/// shadowed by the soft stripes of blinds that drift across the surface.
#[derive(Clone, Debug)]
pub(super) struct Light {
    follow: Camera,
    radius: [f32; 2],
    freq: f32,
    phase: f32,
    sigma: f32,
    peak: f32,
    tint: Rgb,
    ambient: f32,
    blind_dir: [f32; 2],
    blind_period: f32,
    blind_speed: f32,
    blind_soft: f32,
    blind_depth: f32,
}

impl Light {
    fn random(camera: &Camera, extent: f32, h: u32) -> Light {
        let u = draws(h);
        let radius = [extent * (0.2 + 0.15 * u(1)), extent * (0.12 + 0.12 * u(2))];
        let speed = 2.0 + 4.0 * u(3);
        let a = std::f32::consts::PI * u(4);
        Light {
            follow: camera.clone(),
            radius,
            freq: speed / radius[0],
            phase: std::f32::consts::TAU * u(5),
            sigma: extent * (0.08 + 0.08 * u(6)),
            peak: 3.0 + 7.0 * u(7),
            tint: mix(colour(h.rotate_left(8)), [1.0; 3], 0.6),
            ambient: 0.25 + 0.15 * u(9),
            blind_dir: [a.cos(), a.sin()],
            blind_period: extent * (0.1 + 0.15 * u(10)),
            blind_speed: 0.5 + 1.5 * u(11),
            blind_soft: 1.0 + 3.0 * u(12),
            blind_depth: 0.6 + 0.3 * u(13),
        }
    }

    /// World position of the spot at time `t`.
    fn pos(&self, t: f32) -> [f32; 2] {
        let c = self.follow.pos(t);
        let a = self.freq * t + self.phase;
        [c[0] + self.radius[0] * a.cos(), c[1] + self.radius[1] * (1.3 * a).sin()]
    }

    /// Spot intensity at world point `w`.
    fn spot(&self, w: [f32; 2], t: f32) -> f32 {
        let p = self.pos(t);
        let d2 = (w[0] - p[0]).powi(2) + (w[1] - p[1]).powi(2);
        self.peak * (-d2 / (2.0 * self.sigma * self.sigma)).exp()
    }

    /// Light let through by the blinds: 1 in the lit stripes, 1 - depth in the shadowed ones.
    fn blinds(&self, w: [f32; 2], t: f32) -> f32 {
        let x = (w[0] * self.blind_dir[0] + w[1] * self.blind_dir[1] - self.blind_speed * t).rem_euclid(self.blind_period);
        // Signed distance to the nearest stripe edge (edges at period/4 and 3·period/4).
        let g = (x - self.blind_period / 2.0).abs() - self.blind_period / 4.0;
        1.0 - self.blind_depth * (1.0 - smoothstep(-self.blind_soft, self.blind_soft, g))
    }

    fn shade(&self, c: Rgb, w: [f32; 2], t: f32) -> Rgb {
        let s = self.spot(w, t) * self.blinds(w, t);
        [c[0] * (self.ambient + s * self.tint[0]), c[1] * (self.ambient + s * self.tint[1]), c[2] * (self.ambient + s * self.tint[2])]
    }
}

/// Shape of a translucent layer.
#[derive(Clone, Debug)]
enum VeilShape {
    /// A soft-edged rectangular pane.
    Pane { hw: f32, hh: f32, soft: f32 },
    /// Patches of smoke: value noise of `scale` units thresholded softly between `lo` and `hi`.
    Smoke { scale: f32, lo: f32, hi: f32, seed: u32 },
}

/// A translucent layer drifting on its own path; `alpha` is its largest opacity.
#[derive(Clone, Debug)]
pub(super) struct Veil {
    shape: VeilShape,
    origin: [f32; 2],
    vel: [f32; 2],
    orbit: f32,
    orbit_freq: f32,
    colour: Rgb,
    alpha: f32,
}

impl Veil {
    fn random(camera: &Camera, extent: f32, h: u32, smoke: bool) -> Veil {
        let u = draws(h);
        let shape = if smoke {
            VeilShape::Smoke { scale: extent * (0.05 + 0.08 * u(1)), lo: 0.5, hi: 0.75, seed: h }
        } else {
            VeilShape::Pane { hw: extent * (0.1 + 0.15 * u(1)), hh: extent * (0.08 + 0.12 * u(2)), soft: 1.5 + 6.0 * u(3) }
        };
        let c = if smoke { [0.6 + 0.5 * u(4); 3] } else { mix(colour(h.rotate_left(5)), [1.0; 3], 0.2) };
        Veil {
            shape,
            origin: [camera.start[0] + extent * 0.8 * (u(6) - 0.5), camera.start[1] + extent * 0.5 * (u(7) - 0.5)],
            vel: [camera.vel[0] + 3.0 * (u(8) - 0.5), camera.vel[1] + 3.0 * (u(9) - 0.5)],
            orbit: 10.0 * u(10),
            orbit_freq: 0.05 + 0.1 * u(11),
            colour: c,
            alpha: 0.3 + 0.3 * u(12),
        }
    }

    /// Opacity at world point `w`, time `t`: 0..=alpha.
    fn alpha_at(&self, w: [f32; 2], t: f32) -> f32 {
        let a = self.orbit_freq * t;
        let l = [w[0] - self.origin[0] - self.vel[0] * t - self.orbit * a.cos(), w[1] - self.origin[1] - self.vel[1] * t - self.orbit * a.sin()];
        let cover = match self.shape {
            VeilShape::Pane { hw, hh, soft } => 1.0 - smoothstep(-soft, soft, (l[0].abs() - hw).max(l[1].abs() - hh)),
            VeilShape::Smoke { scale, lo, hi, seed } => smoothstep(lo, hi, fbm(l[0] / scale, l[1] / scale, seed)),
        };
        self.alpha * cover
    }

    fn over(&self, c: Rgb, w: [f32; 2], t: f32) -> Rgb {
        mix(c, self.colour, self.alpha_at(w, t))
    }
}

/// What a segment adds to the colour of the opaque surface.
#[derive(Clone, Debug)]
pub(super) enum Shading {
    None,
    Light(Light),
    /// Layers composited back to front.
    Veils(Vec<Veil>),
}

impl Shading {
    pub(super) fn new(kind: SceneKind, camera: &Camera, extent: f32, seed: u32) -> Shading {
        match kind {
            SceneKind::Light => Shading::Light(Light::random(camera, extent, hash3(3, 1, seed))),
            SceneKind::Translucent => Shading::Veils((0..3).map(|i| Veil::random(camera, extent, hash3(i, 2, seed), i == 0)).collect()),
            _ => Shading::None,
        }
    }

    /// Colour `c` of the opaque surface at world point `w`, lit or seen through the layers.
    pub(super) fn apply(&self, c: Rgb, w: [f32; 2], t: f32) -> Rgb {
        match self {
            Shading::None => c,
            Shading::Light(l) => l.shade(c, w, t),
            Shading::Veils(v) => v.iter().fold(c, |c, v| v.over(c, w, t)),
        }
    }
}

/// An emissive panel: its material scrolls at `scroll` local units per frame, times `gain`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Screen {
    scroll: [f32; 2],
    gain: f32,
}

impl Screen {
    fn random(h: u32) -> Screen {
        let u = draws(h);
        let speed = 0.5 + 2.5 * u(1);
        // Half are tickers (horizontal), half scroll in any direction.
        let a = if h % 2 == 0 { if u(2) < 0.5 { 0.0 } else { std::f32::consts::PI } } else { std::f32::consts::TAU * u(2) };
        Screen { scroll: [speed * a.cos(), speed * a.sin()], gain: 1.0 + 1.5 * u(3) }
    }

    /// The picture at local point `l` at time `t`.
    pub(super) fn picture(&self, m: &Material, l: [f32; 2], t: f32) -> Rgb {
        let c = m.eval(l[0] + self.scroll[0] * t, l[1] + self.scroll[1] * t);
        [c[0] * self.gain, c[1] * self.gain, c[2] * self.gain]
    }
}

/// Per-kind changes to the generic objects: still surfaces under the light, rectangular screens.
pub(super) fn adapt_objects(kind: SceneKind, objects: &mut [Object], seed: u32) {
    for (i, o) in objects.iter_mut().enumerate() {
        match kind {
            SceneKind::Light => (o.vel, o.orbit, o.spin) = ([0.0; 2], 0.0, 0.0),
            SceneKind::Screen => {
                if let Shape::Disc { r } = o.shape {
                    o.shape = Shape::Rect { hw: 1.2 * r, hh: 0.7 * r };
                }
                o.spin *= 0.3;
                o.screen = Some(Screen::random(hash3(i as i32, 5, seed)));
            }
            _ => {}
        }
    }
}

/// Objects a kind adds to the generic ones: the wires and fences of `thin`.
pub(super) fn extra_objects(kind: SceneKind, camera: &Camera, extent: f32, seed: u32) -> Vec<Object> {
    if kind != SceneKind::Thin {
        return Vec::new();
    }
    (0..8).map(|i| thin_object(camera, extent, hash3(i, 11, seed), i < 2)).collect()
}

/// A slowly moving wire (`fence`: a fence), less than an output pixel wide; a third are HDR.
fn thin_object(camera: &Camera, extent: f32, h: u32, fence: bool) -> Object {
    let u = draws(h);
    // Output pixels to world units (the thin kind does not zoom).
    let px = 1.0 / camera.zoom;
    let width = px * (0.2 + 0.6 * u(1));
    let shape = if fence {
        Shape::Fence { hw: extent * (0.1 + 0.15 * u(2)), hh: extent * (0.08 + 0.1 * u(3)), spacing: px * (3.0 + 6.0 * u(4)), bar: width }
    } else {
        Shape::Rect { hw: extent * (0.3 + 0.5 * u(2)), hh: width / 2.0 }
    };
    let c = if h % 3 == 0 {
        let k = 4.0 + 16.0 * u(5);
        let tint = mix(colour(h.rotate_left(6)), [1.0; 3], 0.5);
        [k * tint[0], k * tint[1], k * tint[2]]
    } else {
        mix(colour(h.rotate_left(6)), [0.02; 3], 0.7 * u(7))
    };
    Object {
        shape,
        offset: [extent * 0.7 * (u(8) - 0.5), extent * 0.5 * (u(9) - 0.5)],
        vel: [camera.vel[0] + 0.6 * (u(10) - 0.5), camera.vel[1] + 0.6 * (u(11) - 0.5)],
        orbit: 2.0 * u(12),
        orbit_freq: 0.03 + 0.05 * u(13),
        angle: std::f32::consts::PI * u(14),
        spin: 0.004 * (u(15) - 0.5),
        near: 0.3 + 0.65 * u(16),
        material: Material::Solid { c },
        screen: None,
    }
}

/// Whether local point `l` lies on a bar of a fence.
pub(super) fn fence_contains(l: [f32; 2], hw: f32, hh: f32, spacing: f32, bar: f32) -> bool {
    if l[0].abs() >= hw || l[1].abs() >= hh {
        return false;
    }
    (l[0] + hw).rem_euclid(spacing) < bar || (l[1] + hh).rem_euclid(spacing) < bar
}

#[cfg(test)]
mod tests {
    use super::super::{Scene, SceneSpec};
    use super::*;
    use tessel_model::frame::FrameData;

    const CENTRE: [f32; 2] = [48.0, 32.0];

    /// Seeds of the property tests (each holds for seeds 1..=20).
    const SEEDS: [u64; 4] = [1, 5, 9, 17];

    fn scene(kind: SceneKind, seed: u64, reset_at: Option<usize>) -> Scene {
        Scene::new(SceneSpec { kind, seed, ratio: 2.0, frames: 8, output: (96, 64), spp: 16, reset_at })
    }

    /// Sample points over the whole 96x64 view, off the pixel grid.
    fn grid() -> impl Iterator<Item = [f32; 2]> {
        (0..64).flat_map(|y| (0..96).map(move |x| [x as f32 + 0.37, y as f32 + 0.61]))
    }

    fn max3(c: Rgb) -> f32 {
        c[0].max(c[1]).max(c[2])
    }

    #[test]
    fn hazard_frames_are_their_inputs_plus_a_finite_reference() {
        for kind in [SceneKind::Light, SceneKind::Translucent, SceneKind::Screen, SceneKind::Thin] {
            let s = scene(kind, 5, Some(4));
            for t in [0, 3, 4, 7] {
                let f = s.frame(t);
                assert_eq!(FrameData { reference: None, ..f.clone() }, s.inputs(t), "{kind:?} frame {t}");
                assert_eq!(f.reset, t == 0 || t == 4, "{kind:?} frame {t}");
                let r = f.reference.as_ref().unwrap();
                assert!(f.color.iter().chain(&f.motion).chain(&f.depth).chain(r).all(|v| v.is_finite()), "{kind:?} frame {t}");
                assert!(f.color.iter().chain(r).all(|v| *v >= 0.0), "{kind:?} frame {t}");
            }
            assert_eq!(s.frame(5), scene(kind, 5, Some(4)).frame(5), "{kind:?}");
        }
    }

    /// Before the cut the camera is still: every sample's opaque surface (colour, depth, motion)
    /// is the same in consecutive frames, while the light changes the shading of many of them.
    /// After the cut the motion is the camera pan alone: one vector for the whole frame.
    #[test]
    fn light_moves_over_still_surfaces_that_the_motion_calls_static() {
        SEEDS.iter().for_each(|&s| light_case(s));
    }

    fn light_case(seed: u64) {
        let s = scene(SceneKind::Light, seed, Some(4));
        let seg = s.segment(2);
        let (mut changed, mut n) = (0, 0);
        for p in grid() {
            let (a, b) = (seg.hit(p, 3.0, CENTRE), seg.hit(p, 2.0, CENTRE));
            assert!((a.prev[0] - p[0]).abs() < 1e-3 && (a.prev[1] - p[1]).abs() < 1e-3, "{p:?}: {:?}", a.prev);
            assert_eq!((a.color, a.near), (b.color, b.near), "{p:?}");
            let (sa, sb) = (seg.sample(p, 3.0, CENTRE).color, seg.sample(p, 2.0, CENTRE).color);
            n += 1;
            changed += (0..3).any(|k| (sa[k] - sb[k]).abs() > 0.02 * (1.0 + sb[k])) as usize;
        }
        assert!(changed * 25 > n, "the light changed {changed} of {n} samples");
        assert!(s.inputs(3).motion.iter().all(|m| m.abs() < 1e-3));
        let gain = grid().map(|p| max3(seg.sample(p, 3.0, CENTRE).color) / max3(seg.hit(p, 3.0, CENTRE).color)).fold(0.0, f32::max);
        assert!(gain > 1.5, "the spot is brighter than white light: {gain}");
        let f6 = s.inputs(6);
        let (mx, my) = (f6.motion[0], f6.motion[1]);
        assert!(mx.abs() + my.abs() > 0.05, "the camera pans after the cut");
        assert!(f6.motion.chunks_exact(2).all(|m| (m[0] - mx).abs() < 1e-3 && (m[1] - my).abs() < 1e-3));
    }

    /// The layers change the colour by a bounded blend (convex, at most the combined opacity) and
    /// nothing else: motion and depth are those of the scene without them.
    #[test]
    fn translucent_layers_are_a_bounded_blend_outside_motion_and_depth() {
        SEEDS.iter().for_each(|&s| translucent_case(s));
    }

    fn translucent_case(seed: u64) {
        let s = scene(SceneKind::Translucent, seed, None);
        let mut bare = scene(SceneKind::Translucent, seed, None);
        for (_, seg) in &mut bare.segments {
            seg.shading = Shading::None;
        }
        let seg = s.segment(0);
        let Shading::Veils(veils) = &seg.shading else { panic!("translucent scenes have layers") };
        let cover = 1.0 - veils.iter().map(|v| 1.0 - v.alpha).product::<f32>();
        assert!(veils.iter().all(|v| (0.3..=0.6).contains(&v.alpha)));
        let lmax = veils.iter().map(|v| max3(v.colour)).fold(0.9f32, f32::max);
        for t in [1, 5] {
            let (a, b) = (s.inputs(t), bare.inputs(t));
            assert!(a.motion == b.motion && a.depth == b.depth, "frame {t}: the layers are not in the motion or depth");
            let (ra, rb) = (s.reference(t), bare.reference(t));
            let diff: Vec<f32> = ra.iter().zip(&rb).map(|(x, y)| (x - y).abs()).collect();
            let mean = diff.iter().sum::<f32>() / diff.len() as f32;
            assert!(diff.iter().all(|d| *d <= cover * lmax + 1e-5), "frame {t}: the blend is bounded");
            assert!(mean > 0.01, "frame {t}: the layers are visible (mean change {mean})");
        }
        for p in grid() {
            let (o, c) = (seg.hit(p, 3.0, CENTRE).color, seg.sample(p, 3.0, CENTRE).color);
            for k in 0..3 {
                let lo = veils.iter().map(|v| v.colour[k]).fold(o[k], f32::min);
                let hi = veils.iter().map(|v| v.colour[k]).fold(o[k], f32::max);
                assert!(c[k] >= lo - 1e-5 && c[k] <= hi + 1e-5, "{p:?}: {c:?} outside {o:?} and the layers");
            }
        }
    }

    /// Fraction of panel samples (and of background samples) whose colour differs from the colour
    /// their motion vector points at in the previous frame.
    fn reprojection_misses(s: &Scene) -> (f32, f32) {
        let seg = s.segment(3);
        let (mut panel, mut bg) = ([0usize; 2], [0usize; 2]);
        for p in grid() {
            let h = seg.hit(p, 3.0, CENTRE);
            let prev = seg.hit(h.prev, 2.0, CENTRE);
            if prev.near != h.near {
                continue;
            }
            let c = if h.near > 0.05 { &mut panel } else { &mut bg };
            c[0] += 1;
            c[1] += (0..3).any(|k| (h.color[k] - prev.color[k]).abs() > 1e-3) as usize;
        }
        assert!(panel[0] > 200 && bg[0] > 200, "{panel:?} {bg:?}");
        (panel[1] as f32 / panel[0] as f32, bg[1] as f32 / bg[0] as f32)
    }

    /// The panels' pictures scroll: following the motion vectors back one frame lands on other
    /// picture content, unlike the background, and unlike the same panels with the scroll stopped.
    #[test]
    fn screen_pictures_move_relative_to_their_motion_vectors() {
        SEEDS.iter().for_each(|&s| screen_case(s));
    }

    fn screen_case(seed: u64) {
        let s = scene(SceneKind::Screen, seed, None);
        assert!(s.segment(0).objects.iter().all(|o| o.screen.is_some_and(|c| c.scroll[0].hypot(c.scroll[1]) >= 0.5)));
        let (panel, bg) = reprojection_misses(&s);
        assert!(panel > 0.1 && bg < 0.01, "misses: panels {panel}, background {bg}");
        let mut stopped = scene(SceneKind::Screen, seed, None);
        for o in stopped.segments.iter_mut().flat_map(|(_, seg)| seg.objects.iter_mut()) {
            o.screen = o.screen.map(|c| Screen { scroll: [0.0; 2], ..c });
        }
        let (panel, _) = reprojection_misses(&stopped);
        assert!(panel < 0.01, "stopped panels follow their motion: misses {panel}");
    }

    /// Energy of `r` (RGBA, w x h) that a 2x coarser frame cannot hold: the residual after a 2x2
    /// box average.
    fn energy_above_half_nyquist(r: &[f32], w: usize, h: usize) -> f32 {
        let mut e = 0.0;
        for y in (0..h).step_by(2) {
            for x in (0..w).step_by(2) {
                for k in 0..3 {
                    let v = [r[(y * w + x) * 4 + k], r[(y * w + x + 1) * 4 + k], r[((y + 1) * w + x) * 4 + k], r[((y + 1) * w + x + 1) * 4 + k]];
                    let m = v.iter().sum::<f32>() / 4.0;
                    e += v.iter().map(|a| (a - m) * (a - m)).sum::<f32>();
                }
            }
        }
        e
    }

    /// Wires and fence bars are narrower than an output pixel (half a render pixel at 2x), some are
    /// HDR, and they put energy into the reference that a render-resolution frame cannot hold.
    #[test]
    fn thin_features_are_narrower_than_a_render_pixel() {
        SEEDS.iter().for_each(|&s| thin_case(s));
    }

    fn thin_case(seed: u64) {
        let s = scene(SceneKind::Thin, seed, None);
        let seg = s.segment(0);
        let thin: Vec<&Object> = seg.objects.iter().filter(|o| matches!(o.material, Material::Solid { .. })).collect();
        assert_eq!(thin.len(), 8);
        for o in &thin {
            let width = match o.shape {
                Shape::Rect { hh, .. } => 2.0 * hh,
                Shape::Fence { bar, .. } => bar,
                Shape::Disc { .. } => panic!("thin objects are wires and fences"),
            };
            assert!(width * seg.camera.scale(3.0) < 1.0, "{:?}", o.shape);
        }
        assert!(thin.iter().any(|o| matches!(o.material, Material::Solid { c } if max3(c) > 3.0)), "some are HDR");
        let mut bare = scene(SceneKind::Thin, seed, None);
        for (_, seg) in &mut bare.segments {
            seg.objects.retain(|o| !matches!(o.material, Material::Solid { .. }));
        }
        let (e, e0) = (energy_above_half_nyquist(&s.reference(3), 96, 64), energy_above_half_nyquist(&bare.reference(3), 96, 64));
        assert!(e > 2.0 * e0, "energy above the render Nyquist: {e} with the wires, {e0} without");
    }
}
