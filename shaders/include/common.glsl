// Shared by every tessel compute shader: buffer reference types, the frame-parameter slot, the
// tonemap. docs/NETWORK.md is the contract these functions follow.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "bindings.h"

// Buffers are reached through addresses in push constants. Within one dispatch no buffer that
// is written is also read through another reference, so every reference is `restrict`: the
// compiler may batch loads across stores.
layout(buffer_reference, std430, buffer_reference_align = 2) restrict buffer F16Buf { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) restrict buffer F32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) restrict buffer U32Buf { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) restrict buffer F16x4Buf { f16vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) restrict buffer Vec4Buf { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) restrict buffer Vec2Buf { vec2 v[]; };

// One frame's parameters (host writes all but the GPU fields, with vkCmdUpdateBuffer inside the
// frame's command buffer). Mirrored by vk_stages::params::FrameParams.
struct FrameParams {
    vec2 jitter;
    uvec2 render;
    uvec2 out_size;
    vec2 motion_scale;
    uint auto_exposure;
    uint reset;
    uint depth_inverted;
    uint hist_read;      // which history record holds the previous frame (0 or 1)
    // Written by the GPU:
    float exposure;      // this frame's exposure (fixed: written by the host)
    uint sanitized;      // input values replaced by sanitising
    float hist_exposure; // exposure the history was written under (copied at the front)
    uint hist_valid;     // 1 when the history may be used this frame
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer ParamsBuf { FrameParams p; };

// Exposure and validity of one history buffer (written by the reconstruction).
struct HistState {
    float exposure;
    uint valid;
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer HistStateBuf { HistState s[2]; };

const float Y_MAX = 1.0 - 1.0 / 1024.0;

float tonemap(float x) { return min(x / (1.0 + x), Y_MAX); }
float untonemap(float y) { y = clamp(y, 0.0, Y_MAX); return y / (1.0 - y); }
float reexpose(float y, float from_e, float to_e) {
    return from_e == to_e ? y : tonemap(untonemap(y) * (to_e / from_e));
}
float luma(vec3 c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }
float silu(float x) { return x / (1.0 + exp(-x)); }
// tanh that stays finite for large |x| (some drivers compute (e^2x - 1) / (e^2x + 1), which is
// NaN once e^2x overflows); tanh(15) rounds to 1 in f32, so the clamp changes no result.
float tanh_safe(float x) { return tanh(clamp(x, -15.0, 15.0)); }
float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

// The token at in-window position i (row-major in the 8 x 8 window) of window `win` on a level
// grid of width x height tokens, its windows shifted by (sx, sy) and wrapping around the grid
// (docs/NETWORK.md §4, windows on a torus). Every shader that walks a window takes its tokens
// from here.
uint window_token(uint win, uint i, uint width, uint height, uint sx, uint sy) {
    uint wins_x = width / TS_WINDOW;
    uint x = ((win % wins_x) * TS_WINDOW + i % TS_WINDOW + width - sx % width) % width;
    uint y = ((win / wins_x) * TS_WINDOW + i / TS_WINDOW + height - sy % height) % height;
    return y * width + x;
}
