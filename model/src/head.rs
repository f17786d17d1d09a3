//! The head: 8 channels per output pixel, their decoding into reconstruction controls, and the
//! fixed values of the non-neural baseline.

use serde::{Deserialize, Serialize};

use crate::config::HEAD_CHANNELS;

/// Decoded head of one pixel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadParams {
    /// History blend weight before validity: sigmoid(h0).
    pub blend: f32,
    /// Gaussian gather width in render pixels: exp(clamp(h1, -2.5, 1)).
    pub sigma: f32,
    /// History rectification strength: sigmoid(h2).
    pub clamp: f32,
    /// Residual colour correction, in units of the local colour range: 0.5 * tanh(h3..5).
    pub residual: [f32; 3],
    /// Feature memory for the next frame: tanh(h6), tanh(h7).
    pub memory: [f32; 2],
}

#[inline]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

pub const SIGMA_LOG_MIN: f32 = -2.5;
pub const SIGMA_LOG_MAX: f32 = 1.0;

/// Decodes one pixel's 8 head channels.
pub fn decode(h: &[f32]) -> HeadParams {
    debug_assert!(h.len() >= HEAD_CHANNELS);
    HeadParams {
        blend: sigmoid(h[0]),
        sigma: h[1].clamp(SIGMA_LOG_MIN, SIGMA_LOG_MAX).exp(),
        clamp: sigmoid(h[2]),
        residual: [0.5 * h[3].tanh(), 0.5 * h[4].tanh(), 0.5 * h[5].tanh()],
        memory: [h[6].tanh(), h[7].tanh()],
    }
}

/// The baseline's fixed controls (`--network none`): the same reconstruction, no network.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedHead {
    pub blend: f32,
    pub sigma: f32,
    pub clamp: f32,
}

impl Default for FixedHead {
    /// A plain TAAU: blend 0.9, gather width 0.5 render pixels, full neighbourhood clamp.
    fn default() -> Self {
        FixedHead { blend: 0.9, sigma: 0.5, clamp: 1.0 }
    }
}

impl FixedHead {
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(0.0..=1.0).contains(&self.blend) {
            return Err(("blend".into(), format!("{} is outside [0, 1]", self.blend)));
        }
        let (lo, hi) = (SIGMA_LOG_MIN.exp(), SIGMA_LOG_MAX.exp());
        if !(lo..=hi).contains(&self.sigma) {
            return Err(("sigma".into(), format!("{} is outside [{lo:.3}, {hi:.3}]", self.sigma)));
        }
        if !(0.0..=1.0).contains(&self.clamp) {
            return Err(("clamp".into(), format!("{} is outside [0, 1]", self.clamp)));
        }
        Ok(())
    }

    pub fn params(&self) -> HeadParams {
        HeadParams { blend: self.blend, sigma: self.sigma, clamp: self.clamp, residual: [0.0; 3], memory: [0.0; 2] }
    }

    /// Raw head channels that decode to (nearly) these values; used as the initial head bias.
    pub fn raw(&self) -> [f32; HEAD_CHANNELS] {
        let logit = |p: f32| {
            let p = p.clamp(0.001, 0.999);
            (p / (1.0 - p)).ln()
        };
        [logit(self.blend), self.sigma.ln(), logit(self.clamp), 0.0, 0.0, 0.0, 0.0, 0.0]
    }
}
