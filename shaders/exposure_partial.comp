#version 460
// Automatic exposure, pass 1: each workgroup sums ln(max(luma, 1e-4)) of its sanitised render
// pixels into one partial (a fixed-order tree, so the result is deterministic).
#include "common.glsl"
#include "sanitize.glsl"
layout(local_size_x = TS_WG_REDUCE) in;
layout(push_constant) uniform PC {
    ParamsBuf params;
    F32Buf color;     // RGBA, render size
    F32Buf partials;  // one per workgroup
} pc;
shared float acc[TS_WG_REDUCE];
void main() {
    FrameParams fp = pc.params.p;
    uint n = fp.render.x * fp.render.y;
    uint i = gl_GlobalInvocationID.x;
    float v = 0.0;
    if (i < n) {
        uint unused = 0u;
        vec4 rgba = Vec4Buf(pc.color).v[i];  // one 16-byte load
        vec3 c;
        for (int k = 0; k < 3; k++) c[k] = sanitize(rgba[k], 0.0, COLOR_MAX, unused);
        v = log(max(luma(c), 1e-4));
    }
    acc[gl_LocalInvocationID.x] = v;
    barrier();
    for (uint s = TS_WG_REDUCE / 2; s > 0; s >>= 1) {
        if (gl_LocalInvocationID.x < s) acc[gl_LocalInvocationID.x] += acc[gl_LocalInvocationID.x + s];
        barrier();
    }
    if (gl_LocalInvocationID.x == 0) pc.partials.v[gl_WorkGroupID.x] = acc[0];
}
