#version 460
// Window attention on the torus (docs/NETWORK.md §4): one workgroup per (window, head), one
// invocation per query token. Scores (q.k)/4 + rpb, softmax over the 64 keys, weighted values.
#include "common.glsl"
layout(local_size_x = TS_WINDOW_TOKENS) in;
layout(constant_id = 0) const int C = 32;
layout(push_constant) uniform PC {
    F16Buf qkv;   // [tokens, 3C]
    F16Buf out_;  // [tokens, C]
    F16Buf rpb;   // [heads, 225]
    uint width;   // level grid, tokens
    uint height;
    uint shift_x;
    uint shift_y;
} pc;
// Keys and values as vec4 (four channels per shared-memory read).
shared vec4 ks[TS_WINDOW_TOKENS][TS_HEAD_DIM / 4];
shared vec4 vs[TS_WINDOW_TOKENS][TS_HEAD_DIM / 4];
shared float bias[TS_RPB_ENTRIES];

void main() {
    uint i = gl_LocalInvocationID.x;
    uint win = gl_WorkGroupID.x;
    uint h = gl_WorkGroupID.y;
    uint wins_x = pc.width / TS_WINDOW;
    uint wx = win % wins_x, wy = win / wins_x;
    uint ix = i % TS_WINDOW, iy = i / TS_WINDOW;
    uint x = (wx * TS_WINDOW + ix + pc.width - pc.shift_x % pc.width) % pc.width;
    uint y = (wy * TS_WINDOW + iy + pc.height - pc.shift_y % pc.height) % pc.height;
    uint t = y * pc.width + x;
    uint base = t * 3 * C + h * TS_HEAD_DIM;
    vec4 q[TS_HEAD_DIM / 4];
    F16x4Buf qkv4 = F16x4Buf(pc.qkv);
    for (int d = 0; d < TS_HEAD_DIM / 4; d++) {
        q[d] = vec4(qkv4.v[base / 4 + d]);
        ks[i][d] = vec4(qkv4.v[(base + C) / 4 + d]);
        vs[i][d] = vec4(qkv4.v[(base + 2 * C) / 4 + d]);
    }
    for (uint e = i; e < TS_RPB_ENTRIES; e += TS_WINDOW_TOKENS) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
    barrier();
    // Two passes over the 64 keys (the maximum, then the weighted sum), so no per-key array
    // lives in registers or spills to local memory.
    float m = -3.4e38;
    for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
        float dot_ = 0.0;
        for (int d = 0; d < TS_HEAD_DIM / 4; d++) dot_ += dot(q[d], ks[j][d]);
        uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
        m = max(m, dot_ * 0.25 + bias[(iy - jy + 7) * 15 + (ix - jx + 7)]);
    }
    float sum = 0.0;
    vec4 o[TS_HEAD_DIM / 4];
    for (int d = 0; d < TS_HEAD_DIM / 4; d++) o[d] = vec4(0.0);
    for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
        float dot_ = 0.0;
        for (int d = 0; d < TS_HEAD_DIM / 4; d++) dot_ += dot(q[d], ks[j][d]);
        uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
        float e = exp(dot_ * 0.25 + bias[(iy - jy + 7) * 15 + (ix - jx + 7)] - m);
        sum += e;
        for (int d = 0; d < TS_HEAD_DIM / 4; d++) o[d] += e * vs[j][d];
    }
    float inv = 1.0 / sum;
    F16x4Buf out4 = F16x4Buf(pc.out_);
    for (int d = 0; d < TS_HEAD_DIM / 4; d++) out4.v[(t * C + h * TS_HEAD_DIM) / 4 + d] = f16vec4(o[d] * inv);
}
