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
    for (int k = 0; k < 4; k++) {
        float c = sanitize(pc.color.v[i * 4 + k], 0.0, COLOR_MAX, changed);
        if (k < 3) pc.prep_c.v[i * 4 + k] = tonemap(c * e);
    }
    float d = sanitize(pc.depth.v[i], 0.0, 1.0, changed);
    pc.prep_c.v[i * 4 + 3] = fp.depth_inverted != 0u ? d : 1.0 - d;
    for (int k = 0; k < 2; k++) {
        float m = sanitize(pc.motion.v[i * 2 + k], -MOTION_MAX, MOTION_MAX, changed);
        pc.prep_m.v[i * 2 + k] = m * fp.motion_scale[k];
    }
    if (changed > 0u) atomicAdd(pc.params.p.sanitized, changed);
}
