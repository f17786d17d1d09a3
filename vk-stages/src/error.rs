//! Errors of the Vulkan engine. Every one says what was missing or which call failed, so a user
//! can tell a missing driver from a bad model from a bug.

use ash::vk;

#[derive(Debug, thiserror::Error)]
pub enum VkError {
    /// No Vulkan loader (libvulkan.so.1) could be opened.
    #[error("Vulkan loader not found ({0}); install libvulkan1 and a driver (lavapipe: mesa-vulkan-drivers)")]
    Loader(String),
    /// No device offers what the engine needs; names each device and what it lacks.
    #[error("no usable Vulkan device: {0}")]
    NoDevice(String),
    /// A device feature the engine needs is missing.
    #[error("Vulkan device '{device}' lacks {feature}")]
    MissingFeature { device: String, feature: String },
    /// A Vulkan call failed.
    #[error("{call} failed: {result:?}")]
    Call { call: &'static str, result: vk::Result },
    /// The model's config cannot be run by the shaders.
    #[error("model '{model}': {field}: {msg}")]
    Config { model: String, field: String, msg: String },
    /// A frame or size outside what the engine was created for.
    #[error("{0}")]
    Size(String),
    /// The network in another API failed (its own message).
    #[error("external network: {0}")]
    External(String),
    /// A replacement shader of TESSEL_VK_SHADER_DIR that cannot be used (its path and why).
    #[error("TESSEL_VK_SHADER_DIR: {0}")]
    Shader(String),
    /// No memory type fits a buffer.
    #[error("no memory type for {0}")]
    Memory(String),
}

pub type Result<T> = std::result::Result<T, VkError>;

/// Maps a raw `vk::Result` of the named call.
pub(crate) trait Check<T> {
    fn call(self, name: &'static str) -> Result<T>;
}

impl<T> Check<T> for std::result::Result<T, vk::Result> {
    fn call(self, name: &'static str) -> Result<T> {
        self.map_err(|result| VkError::Call { call: name, result })
    }
}
