//! The CPU reference upscaler: exposure stage -> input stage -> network -> reconstruction ->
//! history, with the evaluation counter that selects the window-shift phase.

use std::sync::Arc;
use std::time::Instant;

use crate::config::TokenGrid;
use crate::frame::{prepare, FrameData, History};
use crate::head::{FixedHead, HeadParams};
use crate::input_stage::{feature_image, tokens};
use crate::network::Network;
use crate::reconstruct::{reconstruct, HeadInput};
use crate::sequence::Settings;
use crate::shifts::phase_of;
use crate::taau::{TaauHistory, TaauParams};

/// What produces the per-pixel reconstruction controls.
#[derive(Clone)]
pub enum HeadSource {
    /// The network (CPU reference).
    Network(Arc<Network>),
    /// Fixed values: the contract's reconstruction without a network (`--network fixed`).
    Fixed(FixedHead),
    /// The classical TAAU (`--network none`, crate::taau): its own history and reconstruction.
    Classic(TaauParams),
}

/// Milliseconds spent per stage for one frame.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct StageTimes {
    pub prepare_ms: f64,
    pub input_ms: f64,
    pub network_ms: f64,
    pub reconstruct_ms: f64,
}

impl StageTimes {
    pub fn total_ms(&self) -> f64 {
        self.prepare_ms + self.input_ms + self.network_ms + self.reconstruct_ms
    }
}

/// One evaluated frame.
pub struct Evaluation {
    /// Linear RGBA at output size.
    pub output: Vec<f32>,
    pub times: StageTimes,
    pub exposure: f32,
    /// Input values replaced by sanitising (NaN, Inf, out of range).
    pub sanitized: usize,
    /// The token and head buffers of this frame (empty for the fixed head).
    pub tokens: Vec<f32>,
    pub head: Vec<f32>,
    pub phase: usize,
}

/// What computes the head, with what it needs per output size.
enum Stage {
    Network { net: Arc<Network>, grid: TokenGrid },
    Fixed(HeadParams),
    Classic(TaauParams, Box<TaauHistory>),
}

pub struct Upscaler {
    stage: Stage,
    pub settings: Settings,
    pub output: (usize, usize),
    pub history: History,
    /// Evaluations so far; never restarted by a reset.
    pub counter: u64,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl Upscaler {
    pub fn new(source: HeadSource, settings: Settings, output: (usize, usize)) -> Self {
        let stage = match source {
            HeadSource::Network(net) => {
                let grid = TokenGrid::new(&net.config, output.0, output.1);
                Stage::Network { net, grid }
            }
            HeadSource::Fixed(f) => Stage::Fixed(f.params()),
            HeadSource::Classic(p) => Stage::Classic(p, Box::new(TaauHistory::new(output.0, output.1))),
        };
        Upscaler { stage, settings, output, history: History::new(output.0, output.1), counter: 0 }
    }

    pub fn evaluate(&mut self, frame: &FrameData) -> Evaluation {
        let mut times = StageTimes::default();
        let t = Instant::now();
        let prepared = prepare(frame, &self.settings, self.output);
        if prepared.reset {
            self.history.clear();
        }
        times.prepare_ms = ms(t);
        let phase = phase_of(self.counter);
        self.counter += 1;
        if let Stage::Classic(p, hist) = &mut self.stage {
            let t = Instant::now();
            let output = crate::taau::reconstruct(&prepared, hist, p);
            times.reconstruct_ms = ms(t);
            return Evaluation { output, times, exposure: prepared.exposure, sanitized: prepared.sanitized, tokens: Vec::new(), head: Vec::new(), phase };
        }
        let (toks, head) = match &self.stage {
            Stage::Network { net, grid } => {
                let t = Instant::now();
                let feats = feature_image(&prepared, &self.history, net.config.history_a);
                let toks = tokens(&net.config, grid, &net.pixel_embed, &feats);
                times.input_ms = ms(t);
                let t = Instant::now();
                let head = net.forward(&toks, grid, phase);
                times.network_ms = ms(t);
                (toks, head)
            }
            Stage::Fixed(_) | Stage::Classic(..) => (Vec::new(), Vec::new()),
        };
        let t = Instant::now();
        let input = match &self.stage {
            Stage::Network { grid, net } => HeadInput::Buffer { head: &head, padded_w: grid.padded_w, accumulate: net.config.accumulate, history_a: net.config.history_a },
            Stage::Fixed(p) => HeadInput::Fixed(*p),
            Stage::Classic(..) => unreachable!("the classical TAAU returned above"),
        };
        let output = reconstruct(&prepared, &mut self.history, &input);
        times.reconstruct_ms = ms(t);
        Evaluation { output, times, exposure: prepared.exposure, sanitized: prepared.sanitized, tokens: toks, head, phase }
    }
}
