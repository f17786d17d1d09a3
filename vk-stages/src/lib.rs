//! tessel's Vulkan engine (docs/NETWORK.md is the contract; shaders/ holds the GLSL).
//!
//! - [`device`]: instance, device, queue and the capabilities the engine checks ([`Caps`]).
//! - [`memory`]: buffers with device addresses, optionally exportable as OPAQUE_FD.
//! - [`pipelines`]: the shader table, pipelines built per model config, the on-disk cache.
//! - [`model`]: a package's weights on the device plus its pipelines, shared by Engines (Arc).
//! - [`engine`]: per (render capacity, output size) buffers; `record_front`, `record_network`,
//!   `record_back`, `record_frame` into a caller's command buffer.
//! - [`layout`]: the layout probe, where the device keeps a cooperative matrix's elements.
//! - [`native`]: native kernels (PTX) launched inside the command buffer through
//!   VK_NVX_binary_import on NVIDIA, the network hip-net plans, with no other runtime involved.
//! - [`runner`]: a host-side driver of one Engine for the CLI and tests (upload, submit, wait,
//!   read back, GPU timestamps).

pub mod device;
pub mod engine;
mod error;
pub mod layers;
pub mod layout;
pub mod memory;
pub mod model;
pub mod native;
pub mod params;
pub mod pipelines;
pub mod plan;
pub mod runner;
pub mod tiles;

pub use device::{Caps, DeviceShared};
pub use engine::{Engine, FrameInput};
pub use error::{Result, VkError};
pub use model::{Model, PixelPaths};
pub use runner::Runner;

/// Constants shared with the shaders (generated from shaders/include/bindings.h).
pub mod bindings {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}
