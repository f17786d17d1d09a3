//! Errors of the platform layer, and the log that `Drop` implementations write to instead of
//! panicking.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Everything the platform layer can refuse or fail with. Every message names what was tried,
/// which call failed, or which kernel / device / architecture is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HipError {
    /// No GPU runtime could be opened. `tried` lists every library name tried; `why` says per
    /// runtime what went wrong and names what it tried ("HIP runtime not present: tried
    /// libamdhip64.so.7, ... (reason); CUDA driver not present: tried libcuda.so, ...").
    #[error("{why}")]
    RuntimeMissing { tried: Vec<String>, why: String },

    /// The runtime library loaded but lacks an entry point this layer needs.
    #[error("{library} lacks the symbol {symbol} (a runtime too old for tessel?)")]
    SymbolMissing { symbol: String, library: String },

    /// No device of the runtime has the wanted UUID (the Vulkan device's).
    #[error(
        "no GPU device has the UUID {want} (the Vulkan device's); found: {}",
        list_devices(found)
    )]
    NoMatchingDevice {
        want: String,
        found: Vec<(String, String)>,
    },

    /// A kernel the network needs is not in the loaded module.
    #[error("kernel {kernel} missing from {module}")]
    KernelMissing { kernel: String, module: String },

    /// A runtime call returned an error code; `name` is the runtime's name for it
    /// (cuGetErrorName / hipGetErrorName), or "unknown" where the runtime has none.
    #[error("{call} failed: {name} (code {code})")]
    Call {
        call: &'static str,
        code: i32,
        name: String,
    },

    /// The kernel package has no code object for this device's architecture.
    #[error("no code object for the architecture {arch}")]
    NoCodeObject { arch: String },

    /// A copy larger than the buffer, or otherwise out of range.
    #[error("{what}: {got} bytes do not fit {capacity} bytes")]
    Size {
        what: &'static str,
        got: usize,
        capacity: usize,
    },
}

/// Shorthand used throughout hip-net.
pub type Result<T, E = HipError> = std::result::Result<T, E>;

fn list_devices(found: &[(String, String)]) -> String {
    if found.is_empty() {
        return "no devices".to_string();
    }
    found
        .iter()
        .map(|(name, uuid)| format!("{name} ({uuid})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A UUID as lowercase hex in the 8-4-4-4-12 form (the form `nvidia-smi -L` and Vulkan tools print).
pub fn uuid_hex(uuid: &[u8; 16]) -> String {
    let h: Vec<String> = uuid.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

// ---- errors seen in Drop ------------------------------------------------------------------------

const KEEP: usize = 32;
static DROP_ERRORS: AtomicU64 = AtomicU64::new(0);
static DROP_LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records an error met while releasing a handle (`Drop` must not panic). Keeps the last 32.
pub(crate) fn record_drop_error(what: &str, err: &HipError) {
    DROP_ERRORS.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut log) = DROP_LOG.lock() {
        if log.len() == KEEP {
            log.remove(0);
        }
        log.push(format!("{what}: {err}"));
    }
}

/// How many releases have failed since the process started.
pub fn drop_error_count() -> u64 {
    DROP_ERRORS.load(Ordering::Relaxed)
}

/// The last (at most 32) release failures, oldest first; the log is emptied (the count is not).
pub fn take_drop_errors() -> Vec<String> {
    DROP_LOG
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default()
}
