//! Window shifts: each layer's window offset for each of the eight phases, and the cyclic (torus)
//! window partition every backend must reproduce exactly.

use crate::config::{PHASES, WINDOW, WINDOW_TOKENS};

/// Window offset (sx, sy) in tokens of the layer's level, for a layer (execution-order block
/// index) and phase (evaluation counter mod 8):
///   sx = (3 * phase + 4 * layer) mod 8,  sy = (5 * phase + 4 * layer) mod 8.
/// Over the eight phases each axis takes every offset once; consecutive layers differ by half a
/// window in both axes.
pub fn window_shift(layer: usize, phase: usize) -> (usize, usize) {
    let p = phase % PHASES;
    ((3 * p + 4 * layer) % WINDOW, (5 * p + 4 * layer) % WINDOW)
}

/// Phase of an evaluation: the counter counts evaluated frames and is never restarted by a reset.
pub fn phase_of(counter: u64) -> usize {
    (counter % PHASES as u64) as usize
}

/// The cyclic window partition of one level's grid for one shift.
#[derive(Clone, Copy, Debug)]
pub struct WindowPartition {
    pub width: usize,
    pub height: usize,
    pub shift: (usize, usize),
}

impl WindowPartition {
    pub fn new(width: usize, height: usize, shift: (usize, usize)) -> Self {
        debug_assert!(width % WINDOW == 0 && height % WINDOW == 0);
        WindowPartition { width, height, shift }
    }
    pub fn windows_x(&self) -> usize {
        self.width / WINDOW
    }
    pub fn count(&self) -> usize {
        (self.width / WINDOW) * (self.height / WINDOW)
    }
    /// Token (x, y) of window `w` (row-major over windows) at in-window position `i`
    /// (row-major, i = wy * 8 + wx): x = (8 * window_x + wx - sx) mod width, likewise y.
    pub fn token(&self, w: usize, i: usize) -> (usize, usize) {
        let (wx, wy) = (w % self.windows_x(), w / self.windows_x());
        let (ix, iy) = (i % WINDOW, i / WINDOW);
        let x = (wx * WINDOW + ix + self.width - self.shift.0 % self.width) % self.width;
        let y = (wy * WINDOW + iy + self.height - self.shift.1 % self.height) % self.height;
        (x, y)
    }
    /// Inverse of `token`: (window, in-window position) of token (x, y).
    pub fn locate(&self, x: usize, y: usize) -> (usize, usize) {
        let u = (x + self.shift.0) % self.width;
        let v = (y + self.shift.1) % self.height;
        ((v / WINDOW) * self.windows_x() + u / WINDOW, (v % WINDOW) * WINDOW + u % WINDOW)
    }
    /// Row-major token indices of window `w`, in in-window order.
    pub fn window_tokens(&self, w: usize) -> [usize; WINDOW_TOKENS] {
        let mut out = [0usize; WINDOW_TOKENS];
        for (i, o) in out.iter_mut().enumerate() {
            let (x, y) = self.token(w, i);
            *o = y * self.width + x;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_axis_visits_every_offset_over_eight_phases() {
        for layer in 0..8 {
            let mut xs: Vec<usize> = (0..8).map(|p| window_shift(layer, p).0).collect();
            let mut ys: Vec<usize> = (0..8).map(|p| window_shift(layer, p).1).collect();
            xs.sort();
            ys.sort();
            assert_eq!(xs, (0..8).collect::<Vec<_>>());
            assert_eq!(ys, (0..8).collect::<Vec<_>>());
        }
        assert_eq!(window_shift(0, 0), (0, 0));
        assert_eq!(window_shift(1, 1), (7, 1));
        assert_eq!(window_shift(2, 9), (3, 5)); // phase 9 is phase 1
    }

    #[test]
    fn torus_partition_wraps_and_covers_every_token_once() {
        let part = WindowPartition::new(16, 8, (3, 5));
        let mut seen = [0u8; 16 * 8];
        for w in 0..part.count() {
            for (i, t) in part.window_tokens(w).iter().enumerate() {
                seen[*t] += 1;
                let (x, y) = (t % 16, t / 16);
                assert_eq!(part.locate(x, y), (w, i));
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        // Window 0 starts at token (-3, -5) mod size = (13, 3): it wraps around both edges.
        assert_eq!(part.token(0, 0), (13, 3));
        assert_eq!(part.token(0, 3), (0, 3));
        assert_eq!(part.token(0, 5 * 8), (13, 0));
        // Token (0, 0) sits at in-window position (3, 5) of window 0.
        assert_eq!(part.locate(0, 0), (0, 5 * 8 + 3));
    }
}
