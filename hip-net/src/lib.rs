//! tessel's native network service: the network of docs/NETWORK.md as native kernels
//! (`kernels/`) on a high-priority stream of the GPU runtime, opened at run time (HIP on AMD,
//! the CUDA driver on NVIDIA).
//!
//! - [`plan`]: the network as a list of kernel launches built from the model's config.

pub mod plan;
