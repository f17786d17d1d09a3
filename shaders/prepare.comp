#version 460
// The exposure stage per render pixel (docs/NETWORK.md §1): sanitise colour, motion and depth
// (counting replacements), tonemap the exposed colour, motion to output px, nearness.
#include "common.glsl"
#include "sanitize.glsl"
layout(local_size_x = TS_WG_REDUCE) in;
layout(push_constant) uniform PC {
    ParamsBuf params;
    F32Buf color;   // RGBA
    F32Buf motion;  // RG
    F32Buf depth;   // R
    F32Buf prep_c;  // out: tonemapped RGB, nearness
    F32Buf prep_m;  // out: motion, output px
} pc;
void main() {
    FrameParams fp = pc.params.p;
    uint i = gl_GlobalInvocationID.x;
    if (i >= fp.render.x * fp.render.y) return;
    uint changed = 0u;
    float e = fp.exposure;
    // One 16-byte load and store per pixel for the colour, 8 bytes for the motion (the buffers
    // are 256-byte aligned): a quarter of the memory instructions of per-channel accesses.
    vec4 c = Vec4Buf(pc.color).v[i];
    vec4 prepared;
    for (int k = 0; k < 3; k++) prepared[k] = tonemap(sanitize(c[k], 0.0, COLOR_MAX, changed) * e);
    sanitize(c.a, 0.0, COLOR_MAX, changed);
    float d = sanitize(pc.depth.v[i], 0.0, 1.0, changed);
    prepared.a = fp.depth_inverted != 0u ? d : 1.0 - d;
    Vec4Buf(pc.prep_c).v[i] = prepared;
    vec2 m = Vec2Buf(pc.motion).v[i];
    vec2 mo;
    for (int k = 0; k < 2; k++) mo[k] = sanitize(m[k], -MOTION_MAX, MOTION_MAX, changed) * fp.motion_scale[k];
    Vec2Buf(pc.prep_m).v[i] = mo;
    if (changed > 0u) atomicAdd(pc.params.p.sanitized, changed);
}
