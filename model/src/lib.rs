//! tessel-model: the network contract of tessel and its f32 CPU reference.
//!
//! - [`config`]: network configuration, token grid and padding, tensor table, FLOPs.
//! - [`package`]: the model package (model.json + f16 safetensors) with validation.
//! - [`frame`], [`input_stage`], [`network`], [`reconstruct`]: the stages, in frame order.
//! - [`pipeline`]: the stages chained into an upscaler with history.
//! - [`sequence`], [`imageio`]: frame-sequence files and output images.
//! - [`metrics`]: PSNR, SSIM, temporal stability, the bicubic baseline.
//!
//! docs/NETWORK.md and docs/FORMATS.md state the same contract in prose.

pub mod config;
pub mod error;
pub mod frame;
pub mod head;
pub mod imageio;
mod init;
pub mod input_stage;
pub mod metrics;
pub mod network;
pub mod package;
pub mod pipeline;
pub mod reconstruct;
pub mod sample;
pub mod sequence;
pub mod shifts;
pub mod taau;
pub mod tonemap;

pub use error::{Error, Result};

/// The shipped model's folder name under models/: the CLI's default package, and the one the
/// golden cases without a package of their own and the tests of every crate load.
pub const SHIPPED_MODEL: &str = "tessel-v12";

/// The fast preset's folder name under models/: a narrower, shallower network (level 0 at 16
/// channels, one level-1 block each way; 44 GFLOP at 3840x2160 against 80) for devices where the
/// default is too slow, `--model tessel-v12-fast` (docs/MODEL.md, "tessel-v12-fast"). Its golden
/// cases (model/tests/golden/fast_*) run wherever the default's do.
pub const FAST_MODEL: &str = "tessel-v12-fast";
