//! tessel's native network service: the GPU runtime opened at run time, never linked (HIP on
//! AMD through libamdhip64, the CUDA driver on NVIDIA through cudarc's dynamic loading of
//! libcuda), and the network's kernels on a high-priority stream.
//!
//! This is the platform layer, shaped like cudarc's sys → result → safe:
//!
//! - [`hip_sys`]: the HIP entry points tessel needs, hand-declared and resolved with libloading;
//!   [`cuda`]: the driver through cudarc's `sys`, with every symbol checked before the first call.
//! - [`platform`]: [`Runtime`] (HIP or CUDA, [`Prefer`]), its [`DeviceInfo`]s, and a [`Context`] on
//!   the device whose UUID equals the Vulkan device's ([`match_uuid`]).
//! - [`stream`]: [`Stream`] (non-blocking, greatest priority), [`Event`] timing, graph capture
//!   ([`Stream::capture`] → [`GraphExec`]), the marker wait and host functions.
//! - [`buffer`]: [`DeviceBuffer`] and [`ExternalMemory`] (a Vulkan OPAQUE_FD import).
//! - [`module`]: [`Module`] (PTX or HSACO), [`Function::launch`], [`require_kernels`].
//! - [`plan`]: the network as a list of kernel launches built from the model's config.
//! - [`in_vulkan`]: the same launches inside the Vulkan engine's command buffer
//!   (VK_NVX_binary_import on NVIDIA): no second runtime in the frame, no handoff.
//!
//! Every handle holds an `Arc<Context>`; every failure is a [`HipError`] naming the call and the
//! runtime's error name; nothing panics when a library or symbol is missing, and `Drop` records
//! failures ([`drop_error_count`], [`take_drop_errors`]) instead of panicking.

pub mod buffer;
pub mod cuda;
pub mod error;
pub mod hip_sys;
pub mod in_vulkan;
pub mod module;
pub mod network;
pub mod plan;
pub mod semaphore;
pub mod split;
pub mod platform;
pub mod stream;
pub mod weights;
pub mod wmma_check;

pub use buffer::{DeviceBuffer, DevicePtr, ExternalMemory};
pub use error::{drop_error_count, take_drop_errors, uuid_hex, HipError, Result};
pub use network::{matrix_choice, Network};
pub use semaphore::ExternalSemaphore;
pub use split::{SplitNetwork, SyncTier};
pub use module::{code_object_for, code_object_for_model, load_model_kernels, load_network_kernels, require_kernels, wgmma_object, Function, Module};
pub use platform::{match_uuid, Backend, Context, DeviceInfo, Prefer, Runtime};
pub use stream::{Event, GraphExec, Stream};

/// One line on the GPU runtime, for `tessel info` and the CLI's fallback message: which runtime
/// loaded and its devices, or why none did ("HIP runtime not present: tried libamdhip64.so.7,
/// ...; CUDA driver not present: ...").
pub fn runtime_status() -> String {
    match Runtime::open(Prefer::Auto) {
        Err(e) => e.to_string(),
        Ok(rt) => match rt.devices() {
            Err(e) => format!("{}: devices not listed: {e}", rt.describe()),
            Ok(d) if d.is_empty() => format!("{}: no devices", rt.describe()),
            Ok(d) => {
                let list: Vec<String> = d
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: {} ({}, {})",
                            d.ordinal,
                            d.name,
                            d.arch,
                            uuid_hex(&d.uuid)
                        )
                    })
                    .collect();
                format!("{}: {}", rt.describe(), list.join("; "))
            }
        },
    }
}
