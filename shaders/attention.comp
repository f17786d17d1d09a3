#version 460
// Window attention on the torus (docs/NETWORK.md §4): one workgroup per (window, head), one
// invocation per query token. Scores (q.k)/4 + rpb, softmax over the 64 keys, weighted values.
#include "common.glsl"
layout(local_size_x = TS_WINDOW_TOKENS) in;
layout(constant_id = 0) const int C = 32;
layout(push_constant) uniform PC {
    F32Buf qkv;   // [tokens, 3C]
    F32Buf out_;  // [tokens, C]
    F16Buf rpb;   // [heads, 225]
    uint width;   // level grid, tokens
    uint height;
    uint shift_x;
    uint shift_y;
} pc;
shared float ks[TS_WINDOW_TOKENS][TS_HEAD_DIM];
shared float vs[TS_WINDOW_TOKENS][TS_HEAD_DIM];
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
    float q[TS_HEAD_DIM];
    for (int d = 0; d < TS_HEAD_DIM; d++) {
        q[d] = pc.qkv.v[base + d];
        ks[i][d] = pc.qkv.v[base + C + d];
        vs[i][d] = pc.qkv.v[base + 2 * C + d];
    }
    for (uint e = i; e < TS_RPB_ENTRIES; e += TS_WINDOW_TOKENS) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
    barrier();
    float s[TS_WINDOW_TOKENS];
    float m = -3.4e38;
    for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
        float dot_ = 0.0;
        for (int d = 0; d < TS_HEAD_DIM; d++) dot_ += q[d] * ks[j][d];
        uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
        s[j] = dot_ * 0.25 + bias[(iy - jy + 7) * 15 + (ix - jx + 7)];
        m = max(m, s[j]);
    }
    float sum = 0.0;
    for (uint j = 0; j < TS_WINDOW_TOKENS; j++) { s[j] = exp(s[j] - m); sum += s[j]; }
    float o[TS_HEAD_DIM];
    for (int d = 0; d < TS_HEAD_DIM; d++) o[d] = 0.0;
    for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
        float p = s[j] / sum;
        for (int d = 0; d < TS_HEAD_DIM; d++) o[d] += p * vs[j][d];
    }
    for (int d = 0; d < TS_HEAD_DIM; d++) pc.out_.v[t * C + h * TS_HEAD_DIM + d] = o[d];
}
