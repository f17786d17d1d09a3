//! The frame-parameter record the host writes into a slot inside the frame's own command buffer
//! (`FrameParams` in shaders/include/common.glsl: the same fields in the same order).

/// std430 layout of `FrameParams` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FrameParams {
    pub jitter: [f32; 2],
    pub render: [u32; 2],
    pub out_size: [u32; 2],
    pub motion_scale: [f32; 2],
    pub auto_exposure: u32,
    pub reset: u32,
    pub depth_inverted: u32,
    pub hist_read: u32,
    /// Fixed exposure from the host, or written by the GPU when automatic.
    pub exposure: f32,
    /// Written by the GPU: input values replaced by sanitising.
    pub sanitized: u32,
    pub hist_exposure: f32,
    pub hist_valid: u32,
}

pub const FRAME_PARAMS_BYTES: u64 = std::mem::size_of::<FrameParams>() as u64;
const _: () = assert!(std::mem::size_of::<FrameParams>() == 64);

/// Byte offset of `sanitized` and `exposure` (read back by the runner).
pub const OFFSET_EXPOSURE: usize = 48;
pub const OFFSET_SANITIZED: usize = 52;
