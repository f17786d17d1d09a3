//! Exposure, the reversible tonemap and input sanitising.

/// Largest tonemapped value: T^-1 of it is 1023, the brightest exposed value that survives.
pub const Y_MAX: f32 = 1.0 - 1.0 / 1024.0;
/// Largest finite colour accepted from a frame (the f16 maximum).
pub const COLOR_MAX: f32 = 65504.0;
/// Largest motion accepted, in pixels.
pub const MOTION_MAX: f32 = 16384.0;

/// Reversible tonemap, per channel: T(x) = x / (1 + x), for x >= 0, capped at Y_MAX.
#[inline]
pub fn tonemap(x: f32) -> f32 {
    (x / (1.0 + x)).min(Y_MAX)
}

/// Inverse tonemap: T^-1(y) = y / (1 - y), y clamped to [0, Y_MAX].
#[inline]
pub fn untonemap(y: f32) -> f32 {
    let y = y.clamp(0.0, Y_MAX);
    y / (1.0 - y)
}

/// Re-expresses a tonemapped value made under exposure `from` under exposure `to`.
#[inline]
pub fn reexpose(y: f32, from: f32, to: f32) -> f32 {
    if from == to {
        y
    } else {
        tonemap(untonemap(y) * (to / from))
    }
}

#[inline]
pub fn luma(c: [f32; 3]) -> f32 {
    0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
}

/// Applies `f` to every value and counts the values it changed.
fn replace_counting(v: &mut [f32], f: impl Fn(f32) -> f32) -> usize {
    let mut n = 0;
    for x in v.iter_mut() {
        let y = f(*x);
        // A NaN compares unequal to anything, so a replaced NaN counts.
        if y != *x {
            n += 1;
            *x = y;
        }
    }
    n
}

/// Colour values become finite, non-negative and at most COLOR_MAX. Returns how many changed.
pub fn sanitize_color(v: &mut [f32]) -> usize {
    replace_counting(v, |x| if x.is_nan() { 0.0 } else { x.clamp(0.0, COLOR_MAX) })
}

/// Motion becomes finite and within +-MOTION_MAX (NaN becomes 0). Returns how many changed.
pub fn sanitize_motion(v: &mut [f32]) -> usize {
    replace_counting(v, |x| if x.is_nan() { 0.0 } else { x.clamp(-MOTION_MAX, MOTION_MAX) })
}

/// Depth becomes finite and within [0, 1] (NaN becomes 0). Returns how many changed.
pub fn sanitize_depth(v: &mut [f32]) -> usize {
    replace_counting(v, |x| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) })
}

/// Automatic exposure: 0.18 / exp(mean ln max(luma, 1e-4)) over the render pixels, clamped to
/// [1/256, 256]. `rgba` is sanitised linear colour.
pub fn auto_exposure(rgba: &[f32]) -> f32 {
    let n = rgba.len() / 4;
    if n == 0 {
        return 1.0;
    }
    let sum: f64 = rgba
        .chunks_exact(4)
        .map(|p| (luma([p[0], p[1], p[2]]).max(1e-4) as f64).ln())
        .sum();
    let e = 0.18 / (sum / n as f64).exp();
    (e as f32).clamp(1.0 / 256.0, 256.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonemap_round_trip() {
        for &x in &[0.0f32, 1e-6, 0.01, 0.18, 0.5, 1.0, 3.0, 17.5, 250.0, 1000.0] {
            let y = tonemap(x);
            assert!((0.0..=Y_MAX).contains(&y));
            let back = untonemap(y);
            assert!((back - x).abs() <= 2e-6 * x.max(1.0) * (1.0 + x), "x={x} back={back}");
        }
        assert_eq!(tonemap(1.0), 0.5);
        assert_eq!(untonemap(0.5), 1.0);
        // Above the cap the tonemap saturates instead of overflowing.
        assert_eq!(tonemap(1e9), Y_MAX);
        assert!((untonemap(2.0) - 1023.0).abs() < 1e-3);
    }

    #[test]
    fn reexpose_matches_direct_tonemap() {
        let x = 0.7f32;
        let y = reexpose(tonemap(x * 2.0), 2.0, 0.5);
        assert!((y - tonemap(x * 0.5)).abs() < 1e-6);
    }

    #[test]
    fn sanitizers_remove_nan_and_inf() {
        let mut c = [f32::NAN, f32::INFINITY, -1.0, 0.5, f32::NEG_INFINITY];
        assert_eq!(sanitize_color(&mut c), 4);
        assert_eq!(c, [0.0, COLOR_MAX, 0.0, 0.5, 0.0]);
        let mut m = [f32::NAN, f32::INFINITY, -3.5];
        assert_eq!(sanitize_motion(&mut m), 2);
        assert_eq!(m, [0.0, MOTION_MAX, -3.5]);
        let mut d = [f32::NAN, 2.0, 0.25];
        assert_eq!(sanitize_depth(&mut d), 2);
        assert_eq!(d, [0.0, 1.0, 0.25]);
    }

    #[test]
    fn auto_exposure_maps_mid_grey() {
        let grey = [0.36f32, 0.36, 0.36, 1.0].repeat(10);
        assert!((auto_exposure(&grey) - 0.5).abs() < 1e-4);
    }
}
